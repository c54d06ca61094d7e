#!/usr/bin/env bash
# make fleet: a fleet on this machine, for trying it out -- a throwaway
# PostgreSQL (in BUILD_DIR/fleet/postgres, deleted when the fleet stops) and
# REPLICAS wayfinder-server replicas on free loopback ports, sharing their
# maps through it. Uploads the example maps through the first replica, prints
# the round-robin target for the CLI and wayfinder-load, and runs until
# Ctrl-C (or until a replica exits), then stops everything.
#
#   usage: scripts/fleet.sh BUILD_DIR [REPLICAS]      (default 3)
#   FLEET_DSN=postgresql://...   use this database instead (left running,
#                                its maps kept)
#   FLEET_LOG_LEVEL=debug        the replicas' --log_level (default info)
#   FLEET_WORK=DIR               where the database and the logs go
#                                (default BUILD_DIR/fleet; emptied first)
# Extra wayfinder-server flags: FLEET_FLAGS="--maps=town-* --workers=1".
set -euo pipefail
build=${1:-build}
replicas=${2:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
work=${FLEET_WORK:-$build/fleet}
# shellcheck source=scripts/fleet-lib.sh
. "$here/scripts/fleet-lib.sh"
cli="$build/client/wayfinder"

rm -rf "$work"
mkdir -p "$work"
trap 'fleet_stop' EXIT
trap 'exit 130' INT TERM
# shellcheck disable=SC2086  # FLEET_FLAGS is a list of flags
fleet_start "$build" "$work" "$replicas" ${FLEET_FLAGS:-}

for file in "$here"/examples/maps/*.map "$here"/examples/maps/*.json; do
  name=$(basename "$file"); name=${name%.*}
  "$cli" --server="${FLEET_ADDRS[0]}" put-map "$file" --name="$name" >/dev/null
done

first=${FLEET_ADDRS[0]}
last=${FLEET_ADDRS[$((replicas - 1))]}
cat <<EOT

A fleet of $replicas Wayfinder replicas is serving, sharing its maps through PostgreSQL.
  PostgreSQL:  $FLEET_DSN
EOT
for ((i = 0; i < replicas; i++)); do
  echo "  replica $i:   ${FLEET_ADDRS[$i]}  (metrics http://${FLEET_METRICS[$i]}/metrics," \
    "log $work/replica-$i.log)"
done
cat <<EOT
  round-robin target:  $FLEET_TARGET

The example maps were uploaded through replica 0; every replica has them.
Try, in another terminal:
  $cli --server=$FLEET_TARGET list
  $cli --server=$FLEET_TARGET find-path rooms 2.5 2.5 60.5 44.5
  $cli --server=$first update rooms 'rect:crate=10,10,4,4'     # write through one replica,
  $cli --server=$last get rooms                                # read it from another
  $build/client/wayfinder-load --server=$FLEET_TARGET --map=rooms --duration=10s --concurrency=8
Ctrl-C stops the replicas and PostgreSQL (its data is thrown away).
EOT
# Until Ctrl-C, or until any replica exits on its own.
set +e
wait -n "${FLEET_PIDS[@]}"
status=$?
echo "fleet: a replica exited (status $status); stopping the fleet" >&2
exit 1
