#!/usr/bin/env bash
# Installs every Debian 12 package Wayfinder needs to build, test and run.
# Idempotent: packages already present are skipped, so a second run is a
# no-op that needs neither root nor the network.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build pkg-config
  # test scripts (free port, JSON checks)
  python3
  # RPC stack
  libgrpc++-dev libgrpc-dev protobuf-compiler protobuf-compiler-grpc libprotobuf-dev
  # engine and service libraries (zlib: CRC-32 of chunked uploads)
  libabsl-dev libspdlog-dev libfmt-dev zlib1g-dev
  # RandomPoints' generator: PCG64, fixed bit for bit, seeded in a few
  # multiplications (header-only, Apache-2.0)
  libpcg-cpp-dev
  # Prometheus /metrics endpoint (prometheus-cpp core + pull, civetweb)
  prometheus-cpp-dev
  # the HTTP/JSON port and its HTTPS (--http_listen): cpp-httplib, MIT,
  # compiled against OpenSSL 3 (Debian's CivetWeb cannot load OpenSSL 3)
  libcpp-httplib-dev
  # the shared map store of a fleet of replicas (libpq), and the server
  # binaries its tests and make fleet start throwaway clusters with
  libpq-dev postgresql
  # the overload benchmark scrapes /metrics with it (make bench-quick in CI)
  curl
  # navmesh generation: polygon clipping and offsetting (the triangulation
  # is our own)
  libpolyclipping-dev
  # benchmark baseline: Recast/Detour navmeshes (bench only)
  librecast-dev
  # tests and benchmarks (openssl: certificates made by the TLS tests;
  # CGAL, GPL-3+: the triangulation's test oracle and exact rationals for
  # the obstacle raster's reference, never in a shipped program)
  libgtest-dev libgmock-dev libbenchmark-dev openssl libcgal-dev
  # fuzz targets in make test (tests/fuzz): clang 14, its libFuzzer and
  # sanitizer runtimes (only recommended by clang, so named here), and
  # llvm-symbolizer for readable stacks
  clang libclang-rt-14-dev llvm-14
  # the linker (CMakeLists.txt: WAYFINDER_LLD; Apache-2.0 with the LLVM
  # exception, and it puts nothing of its own into the programs)
  lld
  # browser tests of the inspector page (test only)
  chromium fonts-dejavu-core
)

missing=()
for p in "${PACKAGES[@]}"; do
  if [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
