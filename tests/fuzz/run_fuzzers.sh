#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang in BUILD_DIR, makes
# their seed corpora, and runs each for SECONDS seconds, JOBS at a time.
# Exits non-zero when a fuzzer finds a crash, leak, undefined behaviour,
# timeout or out-of-memory; the input is saved in BUILD_DIR/fuzz-artifacts/
# and the command to reproduce it is printed.
#
#   tests/fuzz/run_fuzzers.sh BUILD_DIR DATA_DIR SECONDS
#
# DATA_DIR is the benchmark data (../shared/data): Moving AI maps (cropped
# to 32x32 and 64x64) and scenarios (first lines) seed the text parsers;
# when it is absent, examples/maps/ and a built-in scenario do. Corpora
# live in BUILD_DIR/fuzz-corpus/TARGET and grow from run to run.
#
# SECONDS is per target (0 skips everything). Environment: JOBS (fuzzers
# run in parallel; default nproc), FUZZ_TARGETS (a space-separated subset),
# CXX (default clang++).
set -euo pipefail

if [ $# -ne 3 ]; then
  echo "usage: $0 BUILD_DIR DATA_DIR SECONDS" >&2
  exit 2
fi
BUILD_DIR=$1
DATA_DIR=$2
SECONDS_PER_TARGET=$3
JOBS=${JOBS:-$(nproc)}
if [ "$SECONDS_PER_TARGET" = 0 ]; then
  echo "run_fuzzers: SECONDS is 0, fuzzing skipped"
  exit 0
fi
SRC=$(cd "$(dirname "$0")/../.." && pwd)
ALL_TARGETS="fuzz_movingai_map fuzz_movingai_scen fuzz_grid_map fuzz_rect_field fuzz_polygon_map fuzz_triangulate fuzz_build_map"
TARGETS=${FUZZ_TARGETS:-$ALL_TARGETS}

# --- build ---
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  # -O1 with line tables: libFuzzer's usual optimisation, and under its
  # instrumentation half the build time of -O2 -g (most of this step).
  cmake -S "$SRC" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
    -DCMAKE_CXX_COMPILER="${CXX:-clang++}" \
    -DWAYFINDER_FUZZ=ON -DWAYFINDER_WERROR=OFF >/dev/null
fi
cmake --build "$BUILD_DIR" --target wayfinder-fuzzers -j "$JOBS"
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
BIN=$BUILD_DIR/tests/fuzz

# --- seed corpora (regenerated every run, read only by the fuzzers) ---
SEEDS=$BUILD_DIR/fuzz-seeds
rm -rf "$SEEDS"
mkdir -p "$SEEDS"/{movingai_map,movingai_scen,grid_map,rect_field,polygon_map,build_map,maps}

# A Moving AI map cropped to its top-left SIZE x SIZE cells (header rewritten).
crop_map() {  # FILE SIZE OUT
  awk -v n="$2" '
    { sub(/\r$/, "") }
    NR == 1 { next }
    /^height / { h = $2 + 0; next }
    /^width / { w = $2 + 0; next }
    /^map/ { body = 1; ch = (h < n ? h : n); cw = (w < n ? w : n);
             printf "type octile\nheight %d\nwidth %d\nmap\n", ch, cw; next }
    body && rows < ch { print substr($0, 1, cw); rows++ }
  ' "$1" > "$3"
}

maps=()
if [ -d "$DATA_DIR/movingai" ]; then
  while IFS= read -r f; do maps+=("$f"); done < <(find "$DATA_DIR/movingai" -name '*.map' | sort)
  echo "run_fuzzers: seeds from $DATA_DIR (${#maps[@]} Moving AI maps)"
else
  echo "run_fuzzers: no benchmark data in '$DATA_DIR'; seeds from examples/maps"
fi
for f in "${maps[@]}"; do
  name=$(basename "$(dirname "$f")")_$(basename "$f" .map)
  crop_map "$f" 32 "$SEEDS/movingai_map/$name-32.map"
  crop_map "$f" 64 "$SEEDS/movingai_map/$name-64.map"
  cp "$SEEDS/movingai_map/$name-32.map" "$SEEDS/maps/$name-32.map"
  if [ -f "$f.scen" ]; then
    head -n 12 "$f.scen" > "$SEEDS/movingai_scen/$name.scen"
  fi
done
for f in "$SRC"/examples/maps/*.map; do
  [ -e "$f" ] || continue
  cp "$f" "$SEEDS/movingai_map/example-$(basename "$f")"
  crop_map "$f" 16 "$SEEDS/maps/example-$(basename "$f" .map)-16.map"
done
cp "$SRC"/examples/maps/*.json "$SEEDS/maps/" 2>/dev/null || true
first=$(find "$SEEDS/movingai_map" -name '*.map' | sort | sed -n 1p)
[ -z "$first" ] || sed 's/$/\r/' "$first" > "$SEEDS/movingai_map/crlf.map"
printf 'version 1\n0\tmaps/example.map\t8\t8\t1\t1\t6\t5\t6.41421356\n1\texample.map\t8\t8\t0\t0\t7\t7\t9.89949494\n' \
  > "$SEEDS/movingai_scen/builtin.scen"
printf 'version 1.0\r\n3 a.map 512 512 10 20 30 40 35.5563\r\n' > "$SEEDS/movingai_scen/builtin-crlf.scen"
WAYFINDER_FUZZ_SEEDS_OUT="$SEEDS/build_map" WAYFINDER_FUZZ_SEEDS_MAPS="$SEEDS/maps" \
  "$BIN/fuzz_build_map" 2>&1 | grep -v '^INFO:' || true

# --- run ---
ARTIFACTS=$BUILD_DIR/fuzz-artifacts
LOGS=$BUILD_DIR/fuzz-logs
mkdir -p "$ARTIFACTS" "$LOGS"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
fi

run_one() {  # TARGET
  local t=$1 short=${1#fuzz_} corpus=$BUILD_DIR/fuzz-corpus/${1#fuzz_} dict=()
  mkdir -p "$corpus" "$SEEDS/$short"
  case $short in movingai_*) dict=(-dict="$SRC/tests/fuzz/movingai.dict") ;; esac
  local max_len=4096
  case $short in movingai_map|build_map) max_len=20000 ;; esac
  local rc=0
  "$BIN/$t" "$corpus" "$SEEDS/$short" "${dict[@]}" \
    -max_total_time="$SECONDS_PER_TARGET" -timeout=20 -rss_limit_mb=2560 -max_len=$max_len \
    -print_final_stats=1 -artifact_prefix="$ARTIFACTS/$short-" \
    > "$LOGS/$short.log" 2>&1 || rc=$?
  echo "$rc" > "$LOGS/$short.rc"
}

start=$(date +%s)
failed=()
for t in $TARGETS; do
  [ -x "$BIN/$t" ] || { echo "run_fuzzers: $BIN/$t not built" >&2; exit 1; }
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  echo "run_fuzzers: $t for ${SECONDS_PER_TARGET}s"
  rm -f "$LOGS/${t#fuzz_}.rc"
  run_one "$t" &
done
wait
for t in $TARGETS; do
  [ "$(cat "$LOGS/${t#fuzz_}.rc" 2>/dev/null || echo missing)" = 0 ] || failed+=("$t")
done

for t in $TARGETS; do
  short=${t#fuzz_}
  stats=$(grep -E '^stat::(number_of_executed_units|new_units_added):' "$LOGS/$short.log" |
          awk '{printf "%s ", $2}')
  cov=$(grep -oE 'cov: [0-9]+' "$LOGS/$short.log" | tail -n 1 || true)
  echo "run_fuzzers: $t: executed/new units: ${stats:-?}${cov:+($cov)}"
done
if [ ${#failed[@]} -gt 0 ]; then
  for t in "${failed[@]}"; do
    short=${t#fuzz_}
    echo "===== $t FAILED: last lines of $LOGS/$short.log =====" >&2
    tail -n 60 "$LOGS/$short.log" >&2
    artifact=$(grep -oE "Test unit written to [^ ]+" "$LOGS/$short.log" | tail -n 1 | cut -d' ' -f5)
    if [ -n "$artifact" ]; then
      echo "reproduce: $BIN/$t $artifact" >&2
    fi
  done
  echo "run_fuzzers: FAILED: ${failed[*]} ($(( $(date +%s) - start ))s)" >&2
  exit 1
fi
echo "run_fuzzers: all ${TARGETS// /, } passed ($(( $(date +%s) - start ))s)"
