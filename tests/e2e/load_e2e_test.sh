#!/usr/bin/env bash
# End to end: wayfinder-load against a real wayfinder-server on loopback.
# Closed loop (JSON sanity: requests, no errors, ordered percentiles), open
# loop (achieves the asked rate), a mix of every request kind on an
# uploaded grid and a polygon map, maps already on the server with a .scen
# file, the human report, and the exit codes.
#   usage: load_e2e_test.sh SERVER PROBE LOAD EXAMPLE_MAPS_DIR
set -euo pipefail
server_bin=$1 probe_bin=$2 load_bin=$3 maps=$4

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  echo "--- server log ---" >&2
  tail -50 "$work/server.log" >&2 || true
  exit 1
}

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
addr="127.0.0.1:$port"
load() { timeout 60 "$load_bin" --server="$addr" "$@"; }

"$server_bin" --listen="$addr" --workers=2 >>"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 200); do
  if timeout 5 "$probe_bin" --server="$addr" >/dev/null 2>&1; then break; fi
  kill -0 "$server_pid" 2>/dev/null || fail "server exited at start"
  sleep 0.1
done
timeout 5 "$probe_bin" --server="$addr" >/dev/null || fail "server not SERVING"

# Closed loop, 4 outstanding, 2 s after 0.5 s of warm-up.
load --maps="$maps/rooms.map" --concurrency=4 --duration=2 --warmup=0.5 --json \
  >"$work/closed.json" || fail "closed loop exited $?"
python3 - "$work/closed.json" <<'EOF' || fail "closed loop: $(cat "$work/closed.json")"
import json, sys
r = json.load(open(sys.argv[1]))
c = r["config"]
assert c["mode"] == "closed" and c["concurrency"] == 4, c
assert c["maps"][0]["name"] == "rooms" and c["maps"][0]["uploaded"], c
assert c["maps"][0]["points_from"] == "free_cells" and c["maps"][0]["points"] == 2596, c
assert c["mix"] == [{"entry": "findpath", "weight": 1}], c
assert c["sched_batch"] is True, c
assert r["requests"] > 0 and r["ok"] == r["requests"], r
assert r["errors"] == 0 and r["errors_by_code"] == {}, r
assert r["warmup_requests"] > 0, r
assert 1.9 < r["duration_s"] < 3.0, r
assert abs(r["qps"] - r["requests"] / r["duration_s"]) <= 0.01 * r["qps"] + 0.1, r
l = r["latency_us"]
assert 0 < l["min"] <= l["p50"] <= l["p90"] <= l["p99"] <= l["p999"] <= l["max"], l
assert l["min"] <= l["mean"] <= l["max"], l
assert sum(r["path_status"].values()) == r["requests"], r
assert r["interrupted"] is False, r
print("closed loop: %d requests, %.0f/s, p50 %.0f us, p99 %.0f us"
      % (r["requests"], r["qps"], l["p50"], l["p99"]))
EOF

# Open loop at 200/s for 2 s: about 400 requests at about 200/s.
load --map=rooms --rate=200 --duration=2 --warmup=0.5 --json --nosched_batch \
  >"$work/open.json" || fail "open loop exited $?"
python3 - "$work/open.json" <<'EOF' || fail "open loop: $(cat "$work/open.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["config"]["mode"] == "open" and r["config"]["rate"] == 200, r["config"]
assert r["config"]["maps"][0]["points_from"] == "validated_random", r["config"]
assert r["config"]["sched_batch"] is False, r["config"]
assert r["errors"] == 0, r
# 400 send times fall in the measured 2 s; the rate is counted up to the
# last answer, so a slow answer only lowers it a little.
assert 395 <= r["requests"] <= 400, r
assert 160 <= r["qps"] <= 240, r
l = r["latency_us"]
assert l["p50"] <= l["p90"] <= l["p99"] <= l["max"], l
print("open loop: %d requests, %.1f/s, send lag max %.0f us"
      % (r["requests"], r["qps"], r["send_lag_max_us"]))
EOF

# A map already on the server with start/goal pairs from a .scen file; the
# human report.
printf 'version 1\n0\trooms.map\t64\t48\t1\t1\t14\t1\t13\n0\trooms.map\t64\t48\t2\t2\t60\t44\t70\n' \
  >"$work/rooms.scen"
out=$(load --map=rooms --scen="$work/rooms.scen" --requests=200 --warmup=0 \
  --mix=findpath:grid=3,getmap) || fail "scen run exited $?"
grep -q "^maps      rooms (2 scenario pairs)" <<<"$out" || fail "scen report: $out"
grep -Eq "^requests  200 in [0-9.]+ s = [0-9.]+/s; ok 200, errors 0$" <<<"$out" \
  || fail "scen report: $out"
grep -Eq "^latency   p50 .* p90 .* p99 .* p99.9 .* max .* mean " <<<"$out" \
  || fail "scen report: $out"
grep -q "^paths     FOUND " <<<"$out" || fail "scen report: $out"
grep -Eq "^  getmap +[0-9]+ req " <<<"$out" || fail "scen report: $out"

# Exit codes: usage 2, setup failure 1.
for args in "--map=rooms --mix=walk" "--map=rooms --concurrency=0" "--map=rooms --rate=-1" \
    "--requests=1" "--map=rooms --mix=getmap@other" "--map=rooms extra"; do
  set +e
  # shellcheck disable=SC2086
  load $args >/dev/null 2>&1; rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "usage error \"$args\" exited $rc"
done
set +e
load --map=nosuch --requests=1 >/dev/null 2>"$work/err"; rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "setup failed: map nosuch: NOT_FOUND" "$work/err" \
  || fail "unknown map: $rc $(cat "$work/err")"
set +e
load --map=rooms --mix=findpath:hex --requests=1 >/dev/null 2>"$work/err"; rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "HEX" "$work/err" || fail "graph not built: $rc $(cat "$work/err")"

# Every request kind, on a grid map and a polygon map (random points,
# checked before the run), by request count.
mix='findpath@rooms=2,findpath:quadtree:checkpoints@rooms,batch:8@rooms,sample:50:g4@rooms'
mix="$mix,findpath:navmesh@warehouse,getmap"
load --maps="$maps/rooms.map,$maps/warehouse.json" --requests=600 --warmup=0.2 \
  --concurrency=8 --json --cleanup --mix="$mix" >"$work/mix.json" || fail "mix exited $?"
python3 - "$work/mix.json" <<'EOF' || fail "mix: $(cat "$work/mix.json")"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["requests"] == 600 and r["errors"] == 0, r
entries = {e["entry"]: e for e in r["entries"]}
assert set(entries) == {"findpath@rooms", "findpath:quadtree:checkpoints@rooms", "batch:8@rooms",
                        "sample:50:g4@rooms", "findpath:navmesh@warehouse", "getmap"}, entries
for e in entries.values():
    assert e["requests"] > 0 and e["errors"] == 0, e
    assert e["latency_us"]["p50"] <= e["latency_us"]["max"], e
assert sum(e["requests"] for e in entries.values()) == 600, entries
assert entries["findpath@rooms"]["requests"] > entries["getmap"]["requests"] / 2, entries
b = entries["batch:8@rooms"]
assert sum(b["path_status"].values()) == 8 * b["requests"], b
assert r["batch_query_errors_by_code"] == {}, r
maps = {m["name"]: m for m in r["config"]["maps"]}
assert maps["warehouse"]["points_from"] == "validated_random" and maps["warehouse"]["points"] == 256, maps
EOF
# --cleanup deleted the uploaded maps.
set +e
load --map=warehouse --requests=1 >/dev/null 2>"$work/err"; rc=$?
set -e
[ "$rc" -eq 1 ] && grep -q "NOT_FOUND" "$work/err" || fail "warehouse after --cleanup: $rc $(cat "$work/err")"

# The server took all that and still shuts down cleanly.
kill -TERM "$server_pid"
for _ in $(seq 1 100); do
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.1
done
kill -0 "$server_pid" 2>/dev/null && fail "server still running 10 s after SIGTERM"
rc=0
wait "$server_pid" || rc=$?
server_pid=""
[ "$rc" -eq 0 ] || fail "server exited with $rc after SIGTERM"

echo "PASS"
