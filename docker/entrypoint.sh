#!/bin/sh
# The image's entry point: runs wayfinder-server with flags taken from
# WAYFINDER_* environment variables, then from the arguments.
#
#   WAYFINDER_LISTEN=0.0.0.0:50051       --listen
#   WAYFINDER_DATA_DIR=/var/lib/wayfinder --data_dir
#   WAYFINDER_WORKERS=4                  --workers
#   WAYFINDER_METRICS_LISTEN=0.0.0.0:9464 --metrics_listen
#   WAYFINDER_AUTH_TOKENS=/run/secrets/wayfinder-tokens  --auth_tokens
#   WAYFINDER_TLS_CERT, _TLS_KEY, _TLS_CLIENT_CA          --tls_cert, ...
#   WAYFINDER_LOG_LEVEL=debug            --log_level
#   WAYFINDER_MAPS='town-*'              --maps (a replica holding only these)
#   WAYFINDER_POSTGRES_DSN=postgresql://USER:PASSWORD@HOST:5432/DB
#       a fleet replica: maps in PostgreSQL instead of the data directory.
#       Not turned into a flag: the server reads this variable itself, which
#       keeps the password out of the process list. Set WAYFINDER_DATA_DIR=
#       (empty) beside it.
# and likewise every other flag of wayfinder-server: WAYFINDER_ + the flag's
# name in capitals (WAYFINDER_MAX_QUEUE, WAYFINDER_SHUTDOWN_GRACE=10s, ...).
# An unset or empty variable passes no flag (the server's default applies).
#
# Arguments starting with '-' are appended to the server's flags (the last
# occurrence of a flag wins, so they override the environment). Any other
# first argument is run instead of the server, e.g.
#   docker run --rm wayfinder wayfinder --server=host:50051 list
set -eu

if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  exec "$@"
fi

# The server's own flags, as its --helpfull lists them under any file of
# server/ (so a new flag needs no change here); the list below if that
# output ever changes shape.
names=$(/usr/local/bin/wayfinder-server --helpfull 2>&1 |
  awk '/^  Flags from /{s = ($0 ~ /server\/.*\.cc:$/); next}
       s && /^    --[a-z0-9_]+ /{sub(/^    --/, ""); sub(/ .*/, ""); print}') || true
if [ -z "$names" ]; then
  names="listen metrics_listen data_dir workers max_queue max_message_bytes max_map_cells
         default_max_expansions max_max_expansions flow_cache_mb flow_threads max_batch_queries
         max_total_map_mb max_upload_bytes max_upload_mb max_upload_buffer_mb max_polygons
         max_polygon_vertices max_call_seconds auth_tokens
         tls_cert tls_key tls_client_ca log_level shutdown_grace maps"
fi
for name in $names; do
  # Read from the environment by the server itself (see above).
  [ "$name" = postgres_dsn ] && continue
  var="WAYFINDER_$(echo "$name" | tr '[:lower:]' '[:upper:]')"
  eval "value=\${$var:-}"
  if [ -n "$value" ]; then
    # One flag per positional parameter, so values may hold spaces.
    set -- "--$name=$value" "$@"
  fi
done

if [ -n "${WAYFINDER_DATA_DIR:-}" ] && [ ! -w "$WAYFINDER_DATA_DIR" ]; then
  echo "wayfinder-entrypoint: $WAYFINDER_DATA_DIR is not writable by uid $(id -u);" \
       "chown the volume or set WAYFINDER_DATA_DIR" >&2
fi
exec /usr/local/bin/wayfinder-server "$@"
