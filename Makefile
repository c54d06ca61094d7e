# Wayfinder: the two commands a newcomer needs are `make run` and `make test`.
# Both install what is missing (Debian packages, via scripts/install-deps.sh),
# configure and build first.

SHELL         := /bin/bash
BUILD_DIR     ?= build
ASAN_DIR      ?= build-asan
TSAN_DIR      ?= build-tsan
JOBS          ?= $(shell nproc)
LISTEN        ?= 127.0.0.1:50051
HTTP_LISTEN   ?= 127.0.0.1:8080
DATA_DIR      ?= $(HOME)/.local/share/wayfinder
CTEST_ARGS    ?=
DATA          ?= $(CURDIR)/../shared/data

.PHONY: all deps configure build test test-asan test-tsan run bench bench-quick clean

all: build

deps:
	./scripts/install-deps.sh

$(BUILD_DIR)/build.ninja: | deps
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release

configure: $(BUILD_DIR)/build.ninja

build: deps configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

# After ctest: the libFuzzer targets (tests/fuzz), built with clang in their
# own directory and run FUZZ_SECONDS each (0 skips them); a crash, leak or
# undefined behaviour fails the test.
FUZZ_DIR      ?= build-fuzz
FUZZ_SECONDS  ?= 30

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS) $(CTEST_ARGS)
	JOBS=$(JOBS) ./tests/fuzz/run_fuzzers.sh $(FUZZ_DIR) $(DATA) $(FUZZ_SECONDS)

# The sanitizer trees compile at -O1 with line tables only (-g1): enough for
# the reports' stack traces, and with GCC's instrumentation the build takes
# about half the time of -O2 -g, most of CI's wall clock. Under ASan the
# server, the client and the service tests' own files go further, to -O0
# (wayfinder_unoptimized_under_asan in CMakeLists.txt).
SANITIZER_BUILD := -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"

# The whole suite again under AddressSanitizer + UBSan (own build dir,
# without the benchmarks, which only the Release tree runs). The product
# checks (proto lint, licences, the installed client library, the Debian
# packages) look at files and packages, the same from either tree: only
# `make test` runs them.
ASAN_SKIP     ?= ^(lint_proto|lint_proto_rules|license_check|install_client_consumer|package_debs)$$
test-asan: deps
	cmake -S . -B $(ASAN_DIR) -G Ninja $(SANITIZER_BUILD) -DWAYFINDER_SANITIZE=ON \
	  -DWAYFINDER_BENCHMARKS=OFF
	cmake --build $(ASAN_DIR) -j $(JOBS)
	cd $(ASAN_DIR) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -E '$(ASAN_SKIP)' $(CTEST_ARGS)

# The concurrent parts under ThreadSanitizer (own build dir): flow fields,
# whose searches share one map's state between threads (flow_field_test),
# and the living maps' Left-Right bodies (live_map_test, no gRPC inside).
# Only these: the rest of the engine runs on one thread, where TSan has
# nothing to find, and the system's gRPC is not built with TSan, so the
# service tests would report races whose other side it cannot see.
test-tsan: deps
	cmake -S . -B $(TSAN_DIR) -G Ninja $(SANITIZER_BUILD) -DWAYFINDER_TSAN=ON
	cmake --build $(TSAN_DIR) -j $(JOBS) --target flow_field_test live_map_test
	TSAN_OPTIONS=halt_on_error=1 $(TSAN_DIR)/tests/unit/flow_field_test --gtest_brief=1
	TSAN_OPTIONS=halt_on_error=1 $(TSAN_DIR)/tests/service/live_map_test --gtest_brief=1

run: build
	./scripts/run-server.sh $(BUILD_DIR) $(LISTEN) $(DATA_DIR) $(HTTP_LISTEN)

# A fleet on this machine: a throwaway PostgreSQL in $(BUILD_DIR)/fleet and
# $(REPLICAS) replicas on free loopback ports sharing their maps through it;
# prints the round-robin target (ipv4:...) for the CLI and wayfinder-load.
# Ctrl-C stops everything and throws the database away. FLEET_DSN=... uses
# an existing database instead (scripts/fleet.sh says more).
REPLICAS      ?= 3
.PHONY: fleet
fleet: build
	./scripts/fleet.sh $(BUILD_DIR) $(REPLICAS)

# Every benchmark in one run (scripts/bench.sh says what): Moving AI
# scenarios through GRID and QUADTREE, NAVMESH beside Recast/Detour, flow
# fields, google-benchmark micro-benchmarks, and QPS / latency over gRPC on
# loopback beside the trivial-RPC ceiling. Tables go to the terminal and to
# $(BUILD_DIR)/bench.md. bench-quick is the same in about a minute (CI).
bench: build
	./scripts/bench.sh $(BUILD_DIR) $(DATA) full

bench-quick: build
	./scripts/bench.sh $(BUILD_DIR) $(DATA) quick

# The Debian packages wayfinder-client-dev and wayfinder-server (CPack, in
# $(BUILD_DIR)); ctest's package_debs checks their contents. The client
# library alone into a prefix: cmake --install $(BUILD_DIR) --prefix DIR --component client
.PHONY: package
package: build
	cmake --build $(BUILD_DIR) --target package

# Builds docker/Dockerfile into $(IMAGE) and smoke-tests it (server from the
# image, its HEALTHCHECK, a map upload and a FindPath from this host's CLI,
# a short wayfinder-load, SIGTERM, restart from the volume, a fleet replica).
# The image carries the programs of the Release build (a Debian 12 host's,
# like the image's base); IMAGE_PROGRAMS=source compiles them inside the
# build instead, as `docker build -f docker/Dockerfile .` does. Uses docker
# when an engine runs, else buildah (installed on demand with debootstrap;
# see ../shared/CONTAINERS.md). About a minute, plus 3-4 the first time on
# a machine (base images); from source 10-13 minutes on a fresh machine.
IMAGE         ?= wayfinder:latest
IMAGE_PROGRAMS ?= prebuilt
.PHONY: image
image: build
	IMAGE_PROGRAMS=$(IMAGE_PROGRAMS) ./scripts/image-smoke.sh $(BUILD_DIR) $(IMAGE)

# Refreshes the inspector's screenshots in docs/images (inspector-*.png): the
# browser test of ctest's e2e_inspector_browser, writing them into docs/.
.PHONY: inspector-pictures
inspector-pictures: build
	python3 tests/e2e/inspector_browser_test.py --server $(BUILD_DIR)/server/wayfinder-server \
	  --map examples/maps/rooms.map --screenshots docs/images

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) $(TSAN_DIR)
