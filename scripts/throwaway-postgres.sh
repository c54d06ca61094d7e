#!/usr/bin/env bash
# A throwaway PostgreSQL cluster in a directory of its own, on loopback: for
# tests (tests/support/throwaway_postgres.h runs this script) and for trying
# a fleet of replicas on one machine (make fleet). Never for real data: it
# trusts every local connection.
#
#   throwaway-postgres.sh start DIR [PORT]   creates the cluster on first use
#                                           (initdb into DIR/data), starts it
#                                           on 127.0.0.1:PORT (default: the
#                                           port it had, else a free one),
#                                           waits until it accepts
#                                           connections, prints the DSN
#   throwaway-postgres.sh stop DIR [immediate]
#                                           stops it (fast shutdown; with
#                                           "immediate", pg_ctl -m immediate:
#                                           a crash, recovered at next start)
#   throwaway-postgres.sh dsn DIR           prints the DSN
#   throwaway-postgres.sh status DIR        exit 0 if running
#   throwaway-postgres.sh destroy DIR       stops it (immediate) and removes DIR
#
# The DSN is postgresql://postgres@127.0.0.1:PORT/postgres (trust auth, no
# password). The server's socket lives in DIR too, never in /var/run.
#
# initdb refuses to run as root: as root, the cluster is created and run as
# the unprivileged user "postgres" (Debian's package creates it; override
# with WAYFINDER_PG_USER), and DIR is handed to that user.
set -euo pipefail

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2
  exit 2
}

# Debian installs the server binaries outside PATH, per major version.
find_bin() {
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r) \
             "$(dirname "$(command -v pg_ctl 2>/dev/null || echo /nonexistent/x)")"; do
    if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then
      echo "$dir"
      return 0
    fi
  done
  echo "throwaway-postgres: PostgreSQL server binaries (initdb, pg_ctl) not found under" \
       "/usr/lib/postgresql/*/bin or on PATH; install them with scripts/install-deps.sh" \
       "(Debian: postgresql)" >&2
  exit 1
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Runs a command as the cluster's owner.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u "$PG_USER" -- "$@"
  else
    "$@"
  fi
}

[ $# -ge 2 ] || usage
cmd=$1
dir=$2
PG_USER=${WAYFINDER_PG_USER:-postgres}
data=$dir/data
log=$dir/postgres.log
port_file=$dir/port

dsn() {
  echo "postgresql://postgres@127.0.0.1:$(cat "$port_file")/postgres"
}

running() {
  [ -f "$data/postmaster.pid" ] && as_owner "$BIN/pg_ctl" -D "$data" status >/dev/null 2>&1
}

case $cmd in
  start)
    BIN=$(find_bin)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    data=$dir/data log=$dir/postgres.log port_file=$dir/port
    if [ "$(id -u)" -eq 0 ]; then
      id "$PG_USER" >/dev/null 2>&1 || {
        echo "throwaway-postgres: running as root, and there is no user $PG_USER to run" \
             "PostgreSQL as (initdb refuses root); set WAYFINDER_PG_USER" >&2
        exit 1
      }
      chown "$PG_USER" "$dir"
      # The owner must reach DIR: a private temporary directory's parents
      # may be closed to others.
      if ! runuser -u "$PG_USER" -- test -w "$dir"; then
        echo "throwaway-postgres: user $PG_USER cannot write $dir (a parent directory" \
             "is closed to it); choose a directory it can reach (chmod 755 a mktemp -d)" >&2
        exit 1
      fi
    fi
    if [ ! -f "$data/PG_VERSION" ]; then
      # --no-sync: initdb's files are throwaway; the server itself runs with
      # fsync on, as in production, so a crash test means something.
      as_owner "$BIN/initdb" -D "$data" -U postgres --auth=trust -E UTF8 --no-locale \
        --no-sync >"$dir/initdb.log" 2>&1 || {
        echo "throwaway-postgres: initdb failed:" >&2
        cat "$dir/initdb.log" >&2
        exit 1
      }
      cat >>"$data/postgresql.conf" <<EOF
# throwaway-postgres.sh
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
fsync = on
max_connections = 200
shared_buffers = 32MB
log_min_messages = warning
EOF
    fi
    if [ $# -ge 3 ] && [ "$3" != 0 ]; then
      echo "$3" >"$port_file"
    elif [ ! -s "$port_file" ]; then
      free_port >"$port_file"
    fi
    [ "$(id -u)" -eq 0 ] && chown "$PG_USER" "$port_file"
    if running; then
      dsn
      exit 0
    fi
    # A kill -9 of the postmaster can leave its pid file: pg_ctl handles it.
    touch "$log"
    [ "$(id -u)" -eq 0 ] && chown "$PG_USER" "$log"
    if ! as_owner "$BIN/pg_ctl" -D "$data" -l "$log" -w -t 60 \
        -o "-p $(cat "$port_file")" start >/dev/null; then
      echo "throwaway-postgres: the server did not start; its log ($log):" >&2
      tail -n 20 "$log" >&2
      exit 1
    fi
    dsn
    ;;
  stop)
    BIN=$(find_bin)
    mode=fast
    [ "${3:-}" = immediate ] && mode=immediate
    if running; then
      as_owner "$BIN/pg_ctl" -D "$data" -m "$mode" -w -t 60 stop >/dev/null
    fi
    ;;
  dsn)
    dsn
    ;;
  status)
    BIN=$(find_bin)
    running
    ;;
  destroy)
    if [ -d "$data" ]; then
      BIN=$(find_bin)
      if running; then
        as_owner "$BIN/pg_ctl" -D "$data" -m immediate -w -t 60 stop >/dev/null || true
      fi
    fi
    rm -rf "$dir"
    ;;
  *)
    usage
    ;;
esac
