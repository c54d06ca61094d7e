#!/usr/bin/env bash
# make fleet, end to end: scripts/fleet.sh starts a throwaway PostgreSQL and
# two replicas and prints their round-robin target; a map edited through one
# replica must be read back through the other and through the target; on
# SIGTERM the script must stop both replicas and delete the database.
# Skipped (exit 77) where PostgreSQL's initdb is not installed or the server
# was built without the PostgreSQL store.
#   usage: fleet_script_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$2
command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 ||
  { echo "SKIP: no PostgreSQL (initdb)"; exit 77; }
# (--helpfull exits non-zero: its text is taken whatever the status.)
help=$("$build/server/wayfinder-server" --helpfull 2>&1 || true)
grep -q -- '--postgres_dsn' <<<"$help" ||
  { echo "SKIP: this wayfinder-server has no --postgres_dsn"; exit 77; }
cli="$build/client/wayfinder"

work=$(mktemp -d)
chmod 755 "$work"   # PostgreSQL runs as its own user when the test runs as root
fleet_pid=""
cleanup() {
  if [ -n "$fleet_pid" ] && kill -0 "$fleet_pid" 2>/dev/null; then
    kill -TERM "$fleet_pid" 2>/dev/null || true
    wait "$fleet_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; cat "$work/out" >&2 || true; tail -n 5 "$work"/fleet/replica-*.log >&2 || true; exit 1; }

FLEET_WORK="$work/fleet" "$src/scripts/fleet.sh" "$build" 2 >"$work/out" 2>&1 &
fleet_pid=$!
for _ in $(seq 1 600); do
  grep -q 'round-robin target:' "$work/out" && break
  kill -0 "$fleet_pid" 2>/dev/null || fail "fleet.sh exited before serving"
  sleep 0.1
done
target=$(sed -n 's/^  round-robin target:  //p' "$work/out")
mapfile -t replicas < <(sed -n 's/^  replica [0-9]*: *\([0-9.:]*\) .*/\1/p' "$work/out")
if [ -z "$target" ] || [ "${#replicas[@]}" != 2 ]; then
  fail "no target or not two replicas in the banner"
fi
[ "$target" = "ipv4:${replicas[0]},${replicas[1]}" ] || fail "target $target does not list both replicas"
[ -d "$work/fleet/postgres" ] || fail "no throwaway PostgreSQL in $work/fleet/postgres"

# The example maps were uploaded through replica 0: replica 1 has them.
"$cli" --server="${replicas[1]}" get rooms >/dev/null || fail "rooms not on replica 1"
before=$("$cli" --server="${replicas[1]}" get rooms | sed -n 's/^version: *//p')
"$cli" --server="${replicas[0]}" update rooms 'rect:crate=10,10,4,4' >/dev/null ||
  fail "update through replica 0"
want=$((before + 1))
seen=""
for _ in $(seq 1 50); do
  seen=$("$cli" --server="${replicas[1]}" get rooms | sed -n 's/^version: *//p')
  [ "$seen" = "$want" ] && break
  sleep 0.1
done
[ "$seen" = "$want" ] || fail "replica 1 has rooms version $seen, not $want, 5 s after the edit"
"$cli" --server="$target" find-path rooms 2.5 2.5 60.5 44.5 >/dev/null ||
  fail "find-path through the round-robin target"

kill -TERM "$fleet_pid"
rc=0
wait "$fleet_pid" || rc=$?
fleet_pid=""
[ "$rc" != 0 ] || fail "fleet.sh exited 0 on SIGTERM (expected the signal's status)"
for a in "${replicas[@]}"; do
  if "$build/client/wayfinder-probe" --server="$a" --timeout=1 >/dev/null 2>&1; then
    fail "replica $a still answers after the fleet stopped"
  fi
done
[ ! -e "$work/fleet/postgres" ] || fail "the throwaway PostgreSQL was not deleted"
echo "PASS: make fleet served, propagated an edit between replicas, and stopped cleanly"
