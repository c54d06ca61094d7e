#!/usr/bin/env bash
# The client library as a studio gets it: `cmake --install` of the client
# component into an empty prefix, the example examples/client-consumer
# configured and built against that prefix only (find_package(Wayfinder)),
# the same source built once more through pkg-config, then both run against
# a real server on a free loopback port.
#   usage: install_consumer_test.sh BUILD_DIR SOURCE_DIR SERVER PROBE
set -euo pipefail
build=$(cd "$1" && pwd) source=$(cd "$2" && pwd) server_bin=$3 probe_bin=$4

work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; cat "$work/server.log" >&2 2>/dev/null || true; exit 1; }
step() { echo "[$(date +%s.%N | cut -c1-14)] $*"; }

prefix=$work/prefix
step "install the client component into $prefix"
cmake --install "$build" --prefix "$prefix" --component client >"$work/install.log" ||
  { cat "$work/install.log"; fail "cmake --install"; }
libdir=$(cd "$prefix" && dirname "$(find . -name libwayfinder_client.a -print -quit)")
for f in include/wayfinder/client/client.h include/wayfinder/v1/wayfinder.pb.h \
         include/wayfinder/v1/wayfinder.grpc.pb.h "$libdir/libwayfinder_client.a" \
         "$libdir/libwayfinder_proto.a" "$libdir/cmake/Wayfinder/WayfinderConfig.cmake" \
         "$libdir/cmake/Wayfinder/WayfinderTargets.cmake" "$libdir/pkgconfig/wayfinder-client.pc"; do
  [ -f "$prefix/$f" ] || fail "not installed: $f"
done
# Nothing of the server, CLI or tests in the client component.
if [ -n "$(find "$prefix" \( -name 'wayfinder-server*' -o -name '*core*.a' -o -name 'svg.h' \) -print -quit)" ]; then
  fail "the client component installs more than the client library: $(find "$prefix" -type f)"
fi

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
step "configure and build the consumer against the prefix"
cmake -S "$source/examples/client-consumer" -B "$work/consumer" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" "${launcher[@]}" \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "consumer configure"; }
cmake --build "$work/consumer" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; fail "consumer build"; }
# Built from the prefix only: no path into the source or build tree.
if grep -E -q "$source/(client|proto|core|server)|$build" "$work/consumer/build.ninja"; then
  fail "the consumer's build uses the Wayfinder tree: $(grep -E -o "($source/(client|proto|core|server)|$build)[^ ]*" "$work/consumer/build.ninja" | sort -u | sed -n 1,3p)"
fi

step "build the consumer again through pkg-config"
pc_flags=$(PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig" pkg-config --cflags --libs wayfinder-client) ||
  fail "pkg-config wayfinder-client"
cxx=(c++); command -v ccache >/dev/null && cxx=(ccache c++)
# shellcheck disable=SC2086
"${cxx[@]}" -std=c++17 -O1 "$source/examples/client-consumer/main.cc" -o "$work/consumer-pc" \
  $pc_flags >"$work/pc.log" 2>&1 || { cat "$work/pc.log"; fail "pkg-config build"; }

step "start a server"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
addr="127.0.0.1:$port"
"$server_bin" --listen="$addr" --data_dir="$work/data" --workers=2 >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 200); do
  timeout 5 "$probe_bin" --server="$addr" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || fail "server exited at start"
  sleep 0.1
done

for consumer in "$work/consumer/client-consumer" "$work/consumer-pc"; do
  step "run $(basename "$consumer")"
  out=$(timeout 30 "$consumer" "$addr") || fail "$consumer: $out"
  echo "$out"
  # Down to the door in the bottom row and back up (no corner cutting at the
  # door): cell (0,0) to (3,5) is 3 sqrt2 + 2, two straight steps through
  # the door, (5,5) to (7,0) is 2 sqrt2 + 3: 14.0711. The squad likewise.
  grep -q "^PutMap consumer-level version [0-9]*$" <<<"$out" || fail "no PutMap line"
  grep -q "^FindPath FOUND length 14.0711 waypoints [0-9]*$" <<<"$out" || fail "FindPath line"
  grep -q "^FindPaths 3 results: FOUND/13.2426 FOUND/9.2426 FOUND/5.8284$" <<<"$out" ||
    fail "FindPaths line"
  grep -q "^SampleFlowField 4 agents: SAMPLE_STEP->.* SAMPLE_BLOCKED->(4.5,1.5)$" <<<"$out" ||
    fail "SampleFlowField line"
  grep -q "^done$" <<<"$out" || fail "no done line"
done

step "stop the server"
kill -TERM "$server_pid"
for _ in $(seq 1 100); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$server_pid" 2>/dev/null && fail "server still running 10 s after SIGTERM"
wait "$server_pid" || fail "server exited with $? after SIGTERM"
server_pid=""
echo "PASS"
