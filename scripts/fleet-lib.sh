# shellcheck shell=bash
# Sourced by scripts/fleet.sh (make fleet) and scripts/bench.sh (the fleet
# section): a throwaway PostgreSQL and N wayfinder-server replicas on
# loopback, each on a free port with its own metrics port.
#
#   fleet_start BUILD_DIR WORK_DIR N [extra server flags...]
#     starts PostgreSQL in WORK_DIR/postgres (scripts/throwaway-postgres.sh)
#     unless FLEET_DSN is set (then that database is used and left running),
#     then N replicas with --postgres_dsn, and waits until every replica
#     answers SERVING. Sets:
#       FLEET_DSN       the database's connection string
#       FLEET_ADDRS     the replicas' host:port (array)
#       FLEET_METRICS   their /metrics host:port (array)
#       FLEET_PIDS      their process ids (array)
#       FLEET_TARGET    ipv4:HOST:PORT,HOST:PORT,... (round-robin target)
#     Replica i logs to WORK_DIR/replica-i.log.
#   fleet_start_replica I [extra server flags...]
#     (re)starts replica I on its port (after fleet_start).
#   fleet_stop
#     stops the replicas (SIGTERM, then SIGKILL after 10 s), then stops and
#     deletes the PostgreSQL that fleet_start started (WORK_DIR/postgres;
#     the replicas' logs stay). Safe to call twice and from a trap.

_fleet_scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

fleet_free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

fleet_start() {
  FLEET_BUILD=${1:?BUILD_DIR}
  FLEET_WORK=${2:?WORK_DIR}
  local n=${3:?N}
  shift 3
  FLEET_EXTRA=("$@")
  FLEET_ADDRS=()
  FLEET_METRICS=()
  FLEET_PIDS=()
  FLEET_OWN_PG=0
  mkdir -p "$FLEET_WORK"
  if [ -z "${FLEET_DSN:-}" ]; then
    FLEET_OWN_PG=1
    FLEET_DSN=$("$_fleet_scripts/throwaway-postgres.sh" start "$FLEET_WORK/postgres") || {
      echo "fleet: PostgreSQL did not start (see above)" >&2
      return 1
    }
  fi
  local i
  for ((i = 0; i < n; i++)); do
    FLEET_ADDRS+=("127.0.0.1:$(fleet_free_port)")
    FLEET_METRICS+=("127.0.0.1:$(fleet_free_port)")
    FLEET_PIDS+=("")
    fleet_start_replica "$i" || return 1
  done
  for ((i = 0; i < n; i++)); do
    fleet_wait_serving "$i" || return 1
  done
  # shellcheck disable=SC2034  # used by the scripts that source this
  FLEET_TARGET="ipv4:$(IFS=,; echo "${FLEET_ADDRS[*]}")"
}

fleet_start_replica() {
  local i=${1:?I}
  shift
  "$FLEET_BUILD/server/wayfinder-server" --listen="${FLEET_ADDRS[$i]}" \
    --metrics_listen="${FLEET_METRICS[$i]}" --postgres_dsn="$FLEET_DSN" \
    --log_level="${FLEET_LOG_LEVEL:-info}" "${FLEET_EXTRA[@]}" "$@" \
    >>"$FLEET_WORK/replica-$i.log" 2>&1 &
  FLEET_PIDS[i]=$!
}

# Waits (at most FLEET_START_SECONDS, default 60) until replica I reports
# SERVING: it has loaded every map in the database.
fleet_wait_serving() {
  local i=${1:?I} deadline=$((SECONDS + ${FLEET_START_SECONDS:-60}))
  until "$FLEET_BUILD/client/wayfinder-probe" --server="${FLEET_ADDRS[$i]}" --timeout=1 \
      >/dev/null 2>&1; do
    if ! kill -0 "${FLEET_PIDS[$i]}" 2>/dev/null; then
      echo "fleet: replica $i exited; the end of $FLEET_WORK/replica-$i.log:" >&2
      tail -5 "$FLEET_WORK/replica-$i.log" >&2
      return 1
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "fleet: replica $i not SERVING after ${FLEET_START_SECONDS:-60} s" \
        "(see $FLEET_WORK/replica-$i.log)" >&2
      return 1
    fi
    sleep 0.1
  done
}

fleet_stop() {
  local pid waited
  for pid in "${FLEET_PIDS[@]}"; do
    if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; fi
  done
  for pid in "${FLEET_PIDS[@]}"; do
    [ -n "$pid" ] || continue
    waited=0
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 100 ]; do
      sleep 0.1
      waited=$((waited + 1))
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  FLEET_PIDS=()
  if [ "${FLEET_OWN_PG:-0}" = 1 ]; then
    FLEET_OWN_PG=0
    unset FLEET_DSN
    # Thrown away: a fast stop (the replicas are gone already), then deleted.
    "$_fleet_scripts/throwaway-postgres.sh" stop "$FLEET_WORK/postgres" >/dev/null 2>&1 || true
    "$_fleet_scripts/throwaway-postgres.sh" destroy "$FLEET_WORK/postgres" >/dev/null 2>&1 || true
  fi
}
