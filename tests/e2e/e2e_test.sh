#!/usr/bin/env bash
# End to end: the real wayfinder-server, wayfinder CLI and wayfinder-probe as
# processes on loopback. Upload, list, get, find-path (human and JSON),
# raycast, nearest, random points and distances, errors and exit codes,
# persistence across a restart, graceful SIGTERM.
#   usage: e2e_test.sh SERVER CLI PROBE EXAMPLE_MAP
set -euo pipefail
server_bin=$1 cli_bin=$2 probe_bin=$3 example_map=$4

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; echo "--- server log ---" >&2; cat "$work/server.log" >&2 || true; exit 1; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
addr="127.0.0.1:$port"
cli() { timeout 20 "$cli_bin" --server="$addr" "$@"; }

start_server() {
  "$server_bin" --listen="$addr" --data_dir="$work/data" --workers=2 >>"$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 200); do
    if timeout 5 "$probe_bin" --server="$addr" >/dev/null 2>&1; then return 0; fi
    kill -0 "$server_pid" 2>/dev/null || fail "server exited at start"
    sleep 0.1
  done
  fail "server not SERVING after 20 s"
}

stop_server() {
  kill -TERM "$server_pid"
  local rc=0
  for _ in $(seq 1 100); do
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$server_pid" 2>/dev/null && fail "server still running 10 s after SIGTERM"
  wait "$server_pid" || rc=$?
  [ "$rc" -eq 0 ] || fail "server exited with $rc after SIGTERM"
  server_pid=""
}

start_server
out=$(timeout 5 "$probe_bin" --server="$addr") || fail "probe failed: $out"
grep -q SERVING <<<"$out" || fail "probe does not say SERVING: $out"

# Upload: rooms.map is a Moving AI file of our own (examples/maps).
out=$(cli put-map "$example_map") || fail "put-map: $out"
grep -q "stored rooms version 1" <<<"$out" || fail "put-map output: $out"
out=$(cli put-map "$example_map" --name=second) || fail "put-map --name: $out"
grep -q "stored second version 1" <<<"$out" || fail "put-map --name output: $out"

out=$(cli list)
grep -Eq "^rooms +1 +64x48 " <<<"$out" || fail "list output: $out"
grep -Eq "^second +1 " <<<"$out" || fail "list output: $out"
out=$(cli get rooms)
grep -q "version:  1" <<<"$out" || fail "get output: $out"
grep -q "GRID" <<<"$out" || fail "get output: $out"

# A straight run along the top row of the first room: 13 steps.
out=$(cli find-path rooms 1.5 1.5 14.5 1.5)
grep -q "^FOUND  length 13 " <<<"$out" || fail "find-path output: $out"
json=$(cli --json find-path rooms 1.5 1.5 14.5 1.5)
echo "$json" | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["status"] == "FOUND", r
assert abs(r["length"] - 13) < 1e-9, r
assert r["waypoints"][0] == {"x": 1.5, "y": 1.5}, r
assert r["waypoints"][-1] == {"x": 14.5, "y": 1.5}, r
' || fail "find-path --json: $json"

# Random points: one line per point, the same points for the same seed,
# all within the radius; distances: a row per source, the first equal to
# the find-path above.
out=$(cli random rooms 5 --seed=3 --center=8,4 --radius=3) || fail "random: $out"
[ "$(grep -vc '^#' <<<"$out")" -eq 5 ] || fail "random output: $out"
[ "$out" = "$(cli random rooms 5 --seed=3 --center=8,4 --radius=3)" ] || fail "random not repeatable"
awk '!/^#/ { if (($1 - 8) ^ 2 + ($2 - 4) ^ 2 > 9.000001) exit 1 }' <<<"$out" \
  || fail "random point outside the circle: $out"
out=$(cli distances rooms --sources='1.5,1.5;14.5,1.5' --targets='14.5,1.5;1.5,1.5') \
  || fail "distances: $out"
[ "$(head -1 <<<"$out")" = "13 0" ] || fail "distances output: $out"
set +e
err=$(cli random rooms 0 2>&1); rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "INVALID_ARGUMENT: count" <<<"$err" || fail "random 0: $rc $err"
# Raycast along the first room's top row into the wall at x = 16; the
# nearest free point to the corner wall cell (0, 0) is the corner of (1, 1).
out=$(cli raycast rooms 1.5 1.5 20.5 1.5) || fail "raycast: $out"
grep -q "^HIT at (16, 1.5)  fraction 0.763157895  normal (-1, 0)  cost 14.5 " <<<"$out" \
  || fail "raycast output: $out"
out=$(cli raycast rooms 1.5 1.5 14.5 1.5) || fail "raycast: $out"
grep -q "^CLEAR  cost 13 " <<<"$out" || fail "raycast clear output: $out"
out=$(cli nearest rooms 0.5 0.5 --max_distance=5) || fail "nearest: $out"
grep -q "^FOUND (1, 1)  distance 0.707106781  node 65 " <<<"$out" || fail "nearest output: $out"
set +e
err=$(cli nearest rooms 0.5 0.5 --max_distance=0 2>&1); rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "INVALID_ARGUMENT: max_distance" <<<"$err" || fail "nearest 0: $rc $err"

# Render with a ray that hits, a nearest query, random points, and the
# links and areas of a map file (read by the CLI; the file is not uploaded):
# each drawn as its own element.
cat >"$work/extras.json" <<'JSON'
{"name": "extras",
 "polygons": {"walkable": [{"points": [{"x": 0, "y": 0}, {"x": 16, "y": 0}, {"x": 16, "y": 8}]}],
              "areas": [{"id": 2, "polygon": {"points": [{"x": 2, "y": 2}, {"x": 6, "y": 2}, {"x": 6, "y": 6}]}}]},
 "links": [{"id": "ladder", "start": {"x": 2.5, "y": 2.5}, "end": {"x": 5.5, "y": 2.5},
            "cost": 3, "bidirectional": true}]}
JSON
out=$(cli render rooms --out="$work/extras.svg" --ray 1.5,1.5,20.5,1.5 --nearest=0.5,0.5 \
      --max_distance=5 --random=7 --seed=2 --map_file="$work/extras.json") || fail "render: $out"
grep -q "1 rays, 1 nearest, 7 random points, 1 links, 1 areas" <<<"$out" || fail "render output: $out"
svg=$(cat "$work/extras.svg")
for element in 'class="ray-hit"' 'class="ray-normal"' 'class="nearest"' 'class="random-points"' \
               'data-link="ladder"' 'data-area="2"' 'L16 1.5"'; do
  grep -qF "$element" <<<"$svg" || fail "render: no $element in the SVG"
done
set +e
err=$(cli render rooms --out="$work/bad.svg" --ray=1,2,3 2>&1); rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q -- "--ray: \"1,2,3\" is not X0,Y0,X1,Y1" <<<"$err" || fail "render --ray: $rc $err"

# Flow field: two goals, a summary, a text picture and the binary message.
out=$(cli flow-field rooms --goal 1.5,1.5 --goal=14.5,1.5 --out="$work/field.txt") \
  || fail "flow-field: $out"
grep -Eq "^GRID field of map rooms version 1: [0-9]+ cells reach one of 2 goal cells" <<<"$out" \
  || fail "flow-field output: $out"
grep -q "computed now" <<<"$out" || fail "flow-field first call: $out"
[ "$(wc -l < "$work/field.txt")" -eq 48 ] || fail "field.txt has $(wc -l < "$work/field.txt") rows"
[ "$(head -c 1 "$work/field.txt")" = "#" ] || fail "field.txt (0,0) is not blocked"
[ "$(sed -n 2p "$work/field.txt" | cut -c2)" = "*" ] || fail "field.txt goal (1,1) not '*'"
out=$(cli flow-field rooms --goal=14.5,1.5 --goal 1.5,1.5 --window=0,0,16,8 --out="$work/field.pb")
grep -q "from the cache" <<<"$out" || fail "flow-field second call: $out"
grep -q "returned 16 x 8 cells at (0, 0)" <<<"$out" || fail "flow-field window: $out"
[ -s "$work/field.pb" ] || fail "field.pb is empty"
set +e
err=$(cli flow-field rooms --goal 0.5,0.5 2>&1); rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "FAILED_PRECONDITION: goals\[0\]" <<<"$err" || fail "blocked goal: $rc $err"
set +e
cli flow-field rooms >/dev/null 2>&1; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "flow-field without goals exited $rc"

# Errors: the server's code on stderr, exit status 1; usage errors exit 2.
set +e
err=$(cli get nosuchmap 2>&1); rc=$?
set -e
[ "$rc" -eq 1 ] || fail "get of a missing map exited $rc"
grep -q "NOT_FOUND" <<<"$err" || fail "get error: $err"
set +e
err=$(cli find-path rooms 0.5 0.5 5.5 5.5 2>&1); rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "FAILED_PRECONDITION: start" <<<"$err" || fail "blocked start: $rc $err"
set +e
err=$(cli find-path rooms 1.5 1.5 99 1.5 2>&1); rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "INVALID_ARGUMENT: goal" <<<"$err" || fail "outside goal: $rc $err"
set +e
cli find-path rooms 1 2 3 >/dev/null 2>&1; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "usage error exited $rc"

out=$(cli delete second)
grep -q "deleted second" <<<"$out" || fail "delete: $out"
out=$(cli put-map "$example_map") || fail "re-put: $out"
grep -q "stored rooms version 2" <<<"$out" || fail "re-put output: $out"

# Persistence: what was acknowledged is there after a restart, same version.
stop_server
set +e
timeout 5 "$probe_bin" --server="$addr" >/dev/null 2>&1; rc=$?
set -e
[ "$rc" -ne 0 ] || fail "probe succeeded with the server stopped"
start_server
out=$(cli list)
grep -Eq "^rooms +2 " <<<"$out" || fail "after restart: $out"
grep -q "^second" <<<"$out" && fail "deleted map came back: $out"
out=$(cli find-path rooms 1.5 1.5 14.5 1.5)
grep -q "^FOUND  length 13 .*map version 2" <<<"$out" || fail "after restart find-path: $out"
stop_server

# Tokens: the same server with --auth_tokens; the CLI and the probe with
# --token_file or $WAYFINDER_TOKEN.
printf 'read read-token-0123456789abcdef\nadmin admin-token-0123456789abcdef\n' >"$work/tokens"
printf 'read-token-0123456789abcdef\n' >"$work/read.token"
printf 'admin-token-0123456789abcdef\n' >"$work/admin.token"
"$server_bin" --listen="$addr" --data_dir="$work/data" --workers=2 \
  --auth_tokens="$work/tokens" >>"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 200); do
  timeout 5 "$probe_bin" --server="$addr" >/dev/null 2>&1 && break
  sleep 0.1
done
set +e
err=$(cli list 2>&1); rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "UNAUTHENTICATED" <<<"$err" || fail "no token: $rc $err"
out=$(cli --token_file="$work/read.token" list) || fail "read token list: $out"
grep -Eq "^rooms +2 " <<<"$out" || fail "read token list: $out"
set +e
err=$(cli --token_file="$work/read.token" delete rooms 2>&1); rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "PERMISSION_DENIED" <<<"$err" || fail "read token delete: $rc $err"
out=$(WAYFINDER_TOKEN=admin-token-0123456789abcdef cli put-map "$example_map") \
  || fail "admin token put-map: $out"
grep -q "stored rooms version 3" <<<"$out" || fail "admin token put-map: $out"
grep -q "token-0123456789abcdef" "$work/server.log" && fail "a token appears in the server log"
stop_server
echo "e2e: all checks passed"
