#!/usr/bin/env bash
# Starts wayfinder-server in the foreground with a persistent data directory
# and the example maps loaded (uploaded once; later runs load them from the
# data directory). Ctrl-C stops it gracefully.
#   usage: scripts/run-server.sh BUILD_DIR LISTEN DATA_DIR
set -euo pipefail
build=${1:-build}
listen=${2:-127.0.0.1:50051}
data=${3:-$HOME/.local/share/wayfinder}
http=${4:-127.0.0.1:8080}   # the HTTP/JSON API and the inspector page; "" = off
here=$(cd "$(dirname "$0")/.." && pwd)
cli="$build/client/wayfinder"
probe="$build/client/wayfinder-probe"

mkdir -p "$data"
"$build/server/wayfinder-server" --listen="$listen" --data_dir="$data" --http_listen="$http" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null || true; wait "$pid"' INT TERM

for _ in $(seq 1 100); do
  "$probe" --server="$listen" >/dev/null 2>&1 && break
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "run-server: wayfinder-server exited (is $listen already in use?)" >&2
    exit 1
  fi
  sleep 0.1
done

for file in "$here"/examples/maps/*.map "$here"/examples/maps/*.json; do
  name=$(basename "$file"); name=${name%.*}
  if ! "$cli" --server="$listen" get "$name" >/dev/null 2>&1; then
    "$cli" --server="$listen" put-map "$file" --name="$name"
  fi
done

cat <<EOT

Wayfinder is serving gRPC on $listen, maps stored in $data.
${http:+HTTP/JSON and the inspector page: http://$http/
}Try, in another terminal:
  $cli --server=$listen list
  $cli --server=$listen find-path rooms 2.5 2.5 60.5 44.5
  $cli --server=$listen find-path warehouse 2 2 78 20 --agent_radius=0.5
Ctrl-C stops the server.
EOT
wait "$pid"
