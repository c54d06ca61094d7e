#!/usr/bin/env bash
# make bench / make bench-quick: every benchmark of the project in one run,
# on this machine, printed as markdown and written to BUILD_DIR/bench.md
# (the README quotes it).
#
#   usage: scripts/bench.sh BUILD_DIR DATA_DIR full|quick
#
#   1. GRID and QUADTREE on the Moving AI scenarios (wayfinder-scen):
#      µs/query in process, expansions, length / optimal, validity; also
#      on seeded caves, city and rocks maps (1024², 256² in quick). The
#      subgoal graph on every scenario against the optimal lengths, beside
#      A* and JPS on every 4th (ratios, build ms, memory / grid), per map
#      and per map set.
#   1b. GRID on maps with cost bytes (wayfinder-weightbench): A* beside jump
#      points that stop at the rims of equal-cost regions, on the Moving AI
#      maps with seeded mud and on generated patch and per-cell-cost maps.
#   2. NAVMESH beside Recast/Detour (wayfinder-navbench), on the same maps,
#      and on seeded polygon worlds against exact shortest paths.
#      Raycast and NearestPoint beside Detour's raycast and
#      findNearestPoly (wayfinder-raybench); RandomPoints beside
#      findRandomPointAroundCircle (wayfinder-samplebench); CORRIDOR with
#      area costs beside Detour's filter with setAreaCost
#      (wayfinder-areabench); FindPath over off-mesh links (16 to 4,096)
#      beside Detour's findPath with off-mesh connections
#      (wayfinder-linksbench).
#   3. Flow fields (wayfinder-flowbench); build cost and limits
#      (wayfinder-buildbench).
#   4. Micro-benchmarks with google-benchmark (wayfinder-micro): graph build
#      time and memory, FindPath per graph.
#   5. Over gRPC on loopback (wayfinder-server + wayfinder-load): QPS and
#      latency of FindPath on GRID (median-length scenarios of a 512x512
#      map) at concurrency 1, 4, 16, 64, beside GetMap of a tiny map as the
#      RPC ceiling of this machine (three pairs of runs a level, the median
#      shown); p99 at half of the peak FindPath rate (three runs).
#   5b. Flow fields through that server (wayfinder-flowgrpcbench): a
#      fresh goal's compute_ms beside the same field in process, on the
#      maps of wayfinder-flowbench, and the server's page faults per field.
#   6. Overload (scripts/overload-bench.sh): a cheap FindPath's latency
#      while wayfinder-load floods the server with ANY_ANGLE FindPaths at
#      20,000/s (three rounds of 20 probes; quick: one round of 10).
#   7. Living maps over gRPC (wayfinder-editlatency, its own server with
#      --max_map_cells raised): edit latency, UpdateMap until a FindPath
#      across the edit answers from the new version, per graph kind at
#      512², 2048², 4096² and on a polygon world (quick: 512² only); then
#      sustained edits at 1,000/s on a 2048² GRID map while wayfinder-load
#      runs FindPath on it: QPS with and without edits, server RSS
#      before/after (full: 60 s of edits; quick: 3 s).
#   8. A fleet (scripts/fleet-lib.sh: a throwaway PostgreSQL, three
#      replicas; wayfinder-fleetbench): propagation from replica A to B of
#      a 512² PutMap and of a small UpdateMap, p50/p99; UpdateMap throughput
#      through PostgreSQL beside one server with a data directory; FindPath
#      QPS of one replica and of three through one round-robin client.
#      Skipped without PostgreSQL (initdb). Quick: a few writes, 1 s runs.
#
# full takes under 10 minutes on the 2-core development machine, quick
# under 1 minute (CI runs it to keep every benchmark working).
set -euo pipefail
build=${1:?BUILD_DIR}
data=${2:?DATA_DIR}
mode=${3:-full}
case "$mode" in full | quick) ;; *) echo "bench.sh: mode is full or quick" >&2; exit 2 ;; esac
bench=$build/tests/bench
out=$build/bench.md
started=$(date +%s)
: >"$out"
say() { echo "$@" | tee -a "$out"; }
run() { "$@" 2>&1 | tee -a "$out"; }

if [ ! -d "$data/movingai" ]; then
  echo "bench.sh: no benchmark data in $data (expected $data/movingai)" >&2
  # CI machines without the data still pass: quick is a smoke run.
  [ "$mode" = quick ] && exit 0
  exit 1
fi

say "# Wayfinder benchmarks ($mode, $(date -u +%Y-%m-%d), $(nproc) cores)"
say ""

# 1-2. Scenarios and navmeshes.
if [ "$mode" = full ]; then
  run "$bench/wayfinder-scen" --data_dir="$data" --grid_sample=4 --quadtree_sample=20 \
    --generated=1024
  # Recast needs minutes for the 1-wide maze and the 40% random map: left out.
  run "$bench/wayfinder-navbench" --data_dir="$data" --sample=20 \
    --skip=maze512-1,random512-40,Aurora,Boston --generated=1024
  # Against the Detour most games ship: Recast's default contour
  # simplification (error 1.3), a coarser mesh that cuts blocked corners.
  run "$bench/wayfinder-navbench" --data_dir="$data" --sample=40 --worlds=0 \
    --skip=maze512-1,random512-40,Aurora,Boston --generated=1024 --detour_max_error=1.3
else
  run "$bench/wayfinder-scen" --data_dir="$data" --filter=den312d --quadtree_sample=5 \
    --generated=256
  run "$bench/wayfinder-navbench" --data_dir="$data" --sample=20 --filter=den312d \
    --worlds=2 --world_queries=10 --generated=256
fi

# 1b. GRID on maps with cost bytes: A* beside jump points with rims as stops,
# on the Moving AI maps with seeded mud and on generated patch and noise maps.
say ""
if [ "$mode" = full ]; then
  run "$bench/wayfinder-weightbench" --data_dir="$data" --sample=8
else
  run "$bench/wayfinder-weightbench" --data_dir="$data" --quick --filter=den312d --rounds=1
fi

# 2b. Raycast and NearestPoint beside Detour's raycast and findNearestPoly
# on the same meshes.
say ""
if [ "$mode" = full ]; then
  run "$bench/wayfinder-raybench" --data_dir="$data" --queries=40000
else
  run "$bench/wayfinder-raybench" --data_dir="$data" --queries=2000
fi
# RandomPoints (one point in a circle, reachable from its centre) beside
# Detour's findRandomPointAroundCircle.
say ""
if [ "$mode" = full ]; then
  run "$bench/wayfinder-samplebench" --data_dir="$data" --queries=20000
else
  run "$bench/wayfinder-samplebench" --data_dir="$data" --queries=1000
fi
# Area costs: NAVMESH CORRIDOR with and without an area_costs table beside
# Detour's findPath with the default filter and with setAreaCost, on a
# seeded polygon world with mud areas.
say ""
if [ "$mode" = full ]; then
  run "$bench/wayfinder-areabench" --queries=4000 --rounds=3
else
  run "$bench/wayfinder-areabench" --queries=500 --rounds=1
fi

# Off-mesh links: FindPath on a 512x512 map with 16 to 4,096 links beside
# Detour's findPath with the same links as off-mesh connections.
say ""
if [ "$mode" = full ]; then
  run "$bench/wayfinder-linksbench" AR0011SR "$data" 5
else
  run "$bench/wayfinder-linksbench" AR0011SR "$data" 1
fi

# 3. Flow fields.
if [ "$mode" = full ]; then
  run "$bench/wayfinder-flowbench" --data_dir="$data"
else
  run "$bench/wayfinder-flowbench" --data_dir="$data" --quick
fi

# 3b. Build cost: the circular obstacle at growing N, the data maps beside
# the build limits, the 2048^2 noise map refused, paths with clearance.
say ""
if [ "$mode" = full ]; then
  run "$bench/wayfinder-buildbench" --data_dir="$data"
else
  run "$bench/wayfinder-buildbench" --data_dir="$data" --quick
fi

# 4. Micro-benchmarks.
say ""
say "## Micro-benchmarks (google-benchmark, AR0011SR 512x512, median-length scenarios)"
say ""
say '```'
if [ "$mode" = full ]; then
  run "$bench/wayfinder-micro" --data_dir="$data" --benchmark_min_time=0.5
else
  run "$bench/wayfinder-micro" --data_dir="$data" --benchmark_min_time=0.02
fi
say '```'

# 5. Over gRPC on loopback.
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
addr=127.0.0.1:$port
"$build/server/wayfinder-server" --listen="$addr" --log_level=warn >"$work/server.log" 2>&1 &
server=$!
trap 'kill -TERM $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do
  "$build/client/wayfinder-probe" --server="$addr" >/dev/null 2>&1 && break
  sleep 0.1
done
map=$data/movingai/bg512/AR0011SR.map
# The median bucket's scenarios: median-length paths.
python3 - "$map.scen" "$work/median.scen" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
rows = [l for l in lines[1:] if l.strip()]
buckets = sorted({int(l.split()[0]) for l in rows})
median = buckets[len(buckets) // 2]
with open(sys.argv[2], "w") as f:
    f.write(lines[0] + "\n")
    f.writelines(l + "\n" for l in rows if int(l.split()[0]) == median)
PY
printf 'type octile\nheight 2\nwidth 2\nmap\n..\n..\n' >"$work/tiny.map"
"$build/client/wayfinder" --server="$addr" put-map "$map" --graphs=grid >/dev/null
"$build/client/wayfinder" --server="$addr" put-map "$work/tiny.map" >/dev/null

# This machine's speed drifts by a fifth between runs a few seconds apart
# (a shared VM), so one FindPath run beside one GetMap run can land in
# different phases: in full mode each level runs the pair `pairs` times,
# FindPath then GetMap, and the row is the pair of median ratio, with every
# pair's ratio beside it; the open loop runs as often, the median p99 shown.
if [ "$mode" = full ]; then seconds=4; levels="1 4 16 64"; pairs=3; else seconds=1; levels="1 16"; pairs=1; fi
load() {  # concurrency mix -> JSON
  "$build/client/wayfinder-load" --server="$addr" --json --warmup=0.5 --duration="$seconds" \
    --concurrency="$1" --map=AR0011SR,tiny --scen="$work/median.scen" --mix="$2"
}
say ""
say "## Over gRPC on loopback: FindPath (GRID, AR0011SR median-length scenarios) vs GetMap (the RPC ceiling)"
say ""
say "| concurrency | FindPath QPS | p50 µs | p99 µs | GetMap QPS | p50 µs | p99 µs | FindPath / ceiling | every pair's ratio |"
say "|---:|---:|---:|---:|---:|---:|---:|---:|---|"
peak=0
for c in $levels; do
  for k in $(seq 1 "$pairs"); do
    load "$c" "findpath:grid@AR0011SR" >"$work/find$k.json"
    load "$c" "getmap@tiny" >"$work/get$k.json"
  done
  # Prints the row, then the median pair's FindPath QPS on a line of its own.
  row=$(python3 - "$work" "$pairs" "$c" <<'PY'
import json, sys
work, pairs, c = sys.argv[1], int(sys.argv[2]), sys.argv[3]
runs = []
for k in range(1, pairs + 1):
    f = json.load(open("%s/find%d.json" % (work, k))); g = json.load(open("%s/get%d.json" % (work, k)))
    assert f["errors"] == 0 and g["errors"] == 0, (f["errors_by_code"], g["errors_by_code"])
    runs.append((f["qps"] / g["qps"], f, g))
ratios = ", ".join("%.1f%%" % (100 * r[0]) for r in runs)
ratio, f, g = sorted(runs, key=lambda r: r[0])[len(runs) // 2]
print("| %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.1f%% | %s |" % (
    c, f["qps"], f["latency_us"]["p50"], f["latency_us"]["p99"],
    g["qps"], g["latency_us"]["p50"], g["latency_us"]["p99"], 100 * ratio, ratios))
print(int(f["qps"]))
PY
)
  say "$(head -1 <<<"$row")"
  qps=$(tail -1 <<<"$row")
  [ "$qps" -gt "$peak" ] && peak=$qps
done
half=$((peak / 2))
for k in $(seq 1 "$pairs"); do
  "$build/client/wayfinder-load" --server="$addr" --json --warmup=0.5 --duration="$seconds" \
    --rate="$half" --map=AR0011SR --scen="$work/median.scen" --mix="findpath:grid" >"$work/open$k.json"
done
line=$(python3 - "$work" "$pairs" "$half" <<'PY'
import json, sys
work, pairs, half = sys.argv[1], int(sys.argv[2]), sys.argv[3]
runs = sorted((json.load(open("%s/open%d.json" % (work, k))) for k in range(1, pairs + 1)),
              key=lambda r: r["latency_us"]["p99"])
r = runs[len(runs) // 2]
l = r["latency_us"]
every = ", ".join("%.0f" % x["latency_us"]["p99"] for x in runs)
print("Open loop at half the peak FindPath rate (%s/s), the run of median p99 of %d: achieved "
      "%.0f/s, p50 %.0f µs, p99 %.0f µs (every run: %s µs), p99.9 %.0f µs, max %.0f µs, "
      "errors %d." % (half, pairs, r["qps"], l["p50"], l["p99"], every, l["p999"], l["max"],
                      sum(x["errors"] for x in runs)))
PY
)
say ""
say "$line"

# 5b. Flow fields through the same server: a fresh goal's compute_ms
# beside the same field in process (the server's --flow_threads default
# is the in-process --threads default, 2), and the server's page faults
# per field.
say ""
say "Machine load before the flow fields over gRPC (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
if [ "$mode" = full ]; then
  run "$bench/wayfinder-flowgrpcbench" --server="$addr" --server_pid="$server" --data_dir="$data"
else
  run "$bench/wayfinder-flowgrpcbench" --server="$addr" --server_pid="$server" --data_dir="$data" \
    --quick
fi

# 6. Overload: its own server, so stop this one first.
kill -TERM "$server" 2>/dev/null || true
wait "$server" 2>/dev/null || true
say ""
run "$(dirname "$0")/overload-bench.sh" "$build" "$data" "$mode"

# 7. Living maps: its own server (4096² needs more than the default
# --max_map_cells).
say ""
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
addr=127.0.0.1:$port
"$build/server/wayfinder-server" --listen="$addr" --log_level=warn --max_map_cells=33554432 \
  >"$work/live-server.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do
  "$build/client/wayfinder-probe" --server="$addr" >/dev/null 2>&1 && break
  sleep 0.1
done
say "Machine load before the living-map runs (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
say ""
if [ "$mode" = full ]; then
  run "$bench/wayfinder-editlatency" --server="$addr" --mode=latency --sizes=512,2048,4096 \
    --edits=201 --polygon_edits=41
  # The baselines together last as long as the run with edits: other
  # work on the machine moves a few seconds' QPS by up to 2x either way.
  base_s=30; edit_s=60
else
  run "$bench/wayfinder-editlatency" --server="$addr" --mode=latency --sizes=512 \
    --edits=41 --polygon_edits=11
  base_s=2; edit_s=3
fi
"$bench/wayfinder-editlatency" --server="$addr" --mode=setup --map=sustain --size=2048 \
  --graphs=grid --scen_out="$work/sustain.scen"
sustain_load() {  # seconds [warm-up seconds] -> JSON
  "$build/client/wayfinder-load" --server="$addr" --json --warmup="${2:-0.5}" --duration="$1" \
    --concurrency=4 --map=sustain --scen="$work/sustain.scen" --mix=findpath:grid
}
rss() { awk '/^VmRSS/ {print $2}' "/proc/$server/status"; }
# The server's CPU time, in clock ticks.
server_ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }
# Waits (at most 20 s) until the server has been idle for half a second,
# so that a no-edit baseline never shares the server with leftover work.
settle() {
  local before now
  for _ in $(seq 1 40); do
    before=$(server_ticks); sleep 0.5; now=$(server_ticks)
    [ $((now - before)) -le 2 ] && return 0
  done
}
settle
# The machine's load (1 min) as each run starts: the ratio below is only
# as good as the machine was quiet.
loads=""
load_now() { loads="$loads $(cut -d' ' -f1 /proc/loadavg)"; }
load_now
sustain_load "$base_s" 2 >"$work/base1.json"
rss_before=$(rss)
# The edits start with the load's warm-up and end with it.
"$bench/wayfinder-editlatency" --server="$addr" --mode=sustain --map=sustain --size=2048 \
  --rate=1000 --duration="$edit_s.5" >"$work/edits.json" &
edits=$!
load_now
# RSS a sixth of the way in: the first edits make FindPath fall back from
# the (now stale) subgoal graph to jump point search, whose workers each
# allocate their search arrays once; memory must stay flat after that.
warm_s=$((edit_s >= 6 ? edit_s / 6 : 1))
(sleep "$warm_s"; rss >"$work/rss_warm") &
warm=$!
sustain_load "$edit_s" >"$work/with.json"
wait "$edits" || true
wait "$warm" || true
rss_warm=$(cat "$work/rss_warm")
rss_after=$(rss)
settle
load_now
sustain_load "$base_s" 2 >"$work/base2.json"
rss_end=$(rss)
kill -TERM "$server" 2>/dev/null || true
wait "$server" 2>/dev/null || true
say ""
say "$(python3 - "$work" "$rss_before" "$rss_after" "$rss_end" "$edit_s" "$loads" "$rss_warm" "$warm_s" <<'PY'
import json, os, sys
work, before, after, end, edit_s = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
loads = sys.argv[6].split()
warm, warm_s = int(sys.argv[7]), int(sys.argv[8])
b1, b2, w = (json.load(open("%s/%s.json" % (work, n))) for n in ("base1", "base2", "with"))
e = json.load(open(work + "/edits.json"))
base = (b1["qps"] + b2["qps"]) / 2
ratio = w["qps"] / base
print("## Living maps: sustained edits (2048² GRID map, 15% walls) while wayfinder-load runs FindPath (concurrency 4)\n")
print("| | FindPath QPS | p50 µs | p99 µs | errors |\n|---|---:|---:|---:|---:|")
for name, r in (("no edits, before", b1), ("with edits (%s s)" % edit_s, w), ("no edits, after", b2)):
    print("| %s | %.0f | %.0f | %.0f | %d |" % (name, r["qps"], r["latency_us"]["p50"],
                                            r["latency_us"]["p99"], r["errors"]))
print("\nEdits: %d sent in %.1f s, %.0f/s sustained (answered OK) of %.0f/s asked (8x8 building "
      "placed/removed, %d threads each sending one at a time), %d errors%s; UpdateMap p50 %.2f ms, "
      "p99 %.2f ms, max %.1f ms." % (
      e["edits"], e["seconds"], e["rate"], e["target_rate"], e["threads"], e["errors"],
      (" (" + e["first_error"] + ")") if e["errors"] else "",
      e["update_ms"]["p50"], e["update_ms"]["p99"], e["update_ms"]["max"]))
print("FindPath QPS with edits / without (mean of before and after): %.0f%% (target >= 50%%): %s." % (
      100 * ratio, "met" if ratio >= 0.5 else "MISSED"))
print("Machine load (1 min) as the runs started (before, with edits, after): %s on %s cores." % (
      ", ".join(loads), os.cpu_count()))
print("Server RSS (both bodies of the map made by the setup's edit): %.1f MiB before the edits; "
      "%.1f MiB %d s into them (search workers allocate their arrays once); %.1f MiB at "
      "their end: %+.1f MiB over the last %d s of edits (flat: within 2%%); %.1f MiB after the last "
      "run." % (before / 1024, warm / 1024, warm_s, after / 1024, (after - warm) / 1024,
                int(float(edit_s)) - warm_s, end / 1024))
PY
)"

# 8. A fleet: a throwaway PostgreSQL and three replicas on loopback.
say ""
if [ ! -x "$(dirname "$0")/throwaway-postgres.sh" ] || ! command -v initdb >/dev/null ||
   ! grep -q -- '--postgres_dsn' <<<"$("$build/server/wayfinder-server" --helpfull 2>&1 || true)"; then
  say "## Fleet: skipped (needs PostgreSQL's initdb and a server built with --postgres_dsn)"
else
  # shellcheck source=scripts/fleet-lib.sh
  . "$(dirname "$0")/fleet-lib.sh"
  trap 'fleet_stop; rm -rf "$work"' EXIT
  # PostgreSQL runs as its own user when this runs as root: it must reach
  # the cluster's directory under $work (mktemp -d makes it private).
  chmod 755 "$work"
  FLEET_LOG_LEVEL=warn fleet_start "$build" "$work/fleet" 3
  fleetbench=$bench/wayfinder-fleetbench
  replicas=$(IFS=,; echo "${FLEET_ADDRS[*]}")
  if [ "$mode" = full ]; then
    puts=40; edits=400; update_s=10; qps_s=4; pairs=3
  else
    puts=3; edits=20; update_s=1; qps_s=1; pairs=1
  fi
  say "Machine load before the fleet runs (1, 5, 15 min): $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores; PostgreSQL $(initdb --version 2>/dev/null | awk '{print $3}'), replicas and clients on the same cores."
  say ""
  run "$fleetbench" --replicas="$replicas" --mode=propagation --puts="$puts" --edits="$edits"
  say ""
  if [ "$mode" = full ]; then
    say "## Fleet: UpdateMap throughput, PostgreSQL store (3 replicas) against the directory store (one server)"
  else
    say "## Fleet: UpdateMap throughput, PostgreSQL store (3 replicas)"
  fi
  say ""
  run "$fleetbench" --replicas="$replicas" --mode=updates --writers=4 --duration="$update_s"
  # The same edits on one server with a data directory: what the database
  # costs (full mode only, to keep quick under a minute).
  if [ "$mode" = full ]; then
    port=$(fleet_free_port)
    mkdir -p "$work/dir-store"
    "$build/server/wayfinder-server" --listen="127.0.0.1:$port" --log_level=warn \
      --data_dir="$work/dir-store" >"$work/dir-server.log" 2>&1 &
    server=$!
    for _ in $(seq 1 100); do
      "$build/client/wayfinder-probe" --server="127.0.0.1:$port" >/dev/null 2>&1 && break
      sleep 0.1
    done
    run "$fleetbench" --replicas="127.0.0.1:$port" --mode=updates --writers=4 --duration="$update_s"
    kill -TERM "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi

  # FindPath through one round-robin client: one replica, then all three.
  "$build/client/wayfinder" --server="${FLEET_ADDRS[0]}" put-map "$map" --graphs=grid >/dev/null
  for a in "${FLEET_ADDRS[@]}"; do
    for _ in $(seq 1 100); do
      "$build/client/wayfinder" --server="$a" get AR0011SR >/dev/null 2>&1 && break
      sleep 0.1
    done
  done
  fleet_load() {  # target -> JSON
    "$build/client/wayfinder-load" --server="$1" --json --warmup=0.5 --duration="$qps_s" \
      --concurrency=16 --map=AR0011SR --scen="$work/median.scen" --mix=findpath:grid
  }
  for k in $(seq 1 "$pairs"); do
    fleet_load "${FLEET_ADDRS[0]}" >"$work/one$k.json"
    fleet_load "$FLEET_TARGET" >"$work/three$k.json"
  done
  say ""
  say "$(python3 - "$work" "$pairs" "$(nproc)" "$(cut -d' ' -f1 /proc/loadavg)" <<'PY'
import json, sys
work, pairs, cores, load = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
runs = []
for k in range(1, pairs + 1):
    one = json.load(open("%s/one%d.json" % (work, k))); three = json.load(open("%s/three%d.json" % (work, k)))
    assert one["errors"] == 0 and three["errors"] == 0, (one["errors_by_code"], three["errors_by_code"])
    runs.append((three["qps"] / one["qps"], one, three))
ratio, one, three = sorted(runs, key=lambda r: r[0])[len(runs) // 2]
print("## Fleet: FindPath QPS through one round-robin client (GRID, AR0011SR median-length scenarios, concurrency 16)\n")
print("| replicas | QPS | p50 µs | p99 µs |\n|---:|---:|---:|---:|")
for n, r in ((1, one), (3, three)):
    print("| %d | %.0f | %.0f | %.0f |" % (n, r["qps"], r["latency_us"]["p50"], r["latency_us"]["p99"]))
print("\n3 replicas / 1: %.2fx (every pair: %s) on %s cores shared by the replicas, the load "
      "generator and PostgreSQL (load %s as the runs ended): the ratio is bounded by the cores, "
      "not the fleet." % (ratio, ", ".join("%.2fx" % r[0] for r in runs), cores, load))
PY
)"
  fleet_stop
fi

say ""
say "(bench.sh $mode took $(( $(date +%s) - started )) s)"
