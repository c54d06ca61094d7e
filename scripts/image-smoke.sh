#!/usr/bin/env bash
# `make image`: builds docker/Dockerfile into an image and smoke-tests it.
#   usage: [IMAGE_PROGRAMS=prebuilt|source] scripts/image-smoke.sh BUILD_DIR [IMAGE_TAG]
#
# The image carries BUILD_DIR's programs (prebuilt, the default) or compiles
# its own from this tree inside the build (source), see "build" below.
#
# With a Docker engine (`docker info` succeeds): docker build / docker run.
# Without one (our machines): buildah, as ../shared/CONTAINERS.md describes --
# buildah and debootstrap are installed on demand, the debian:bookworm and
# debian:bookworm-slim base images are made once with debootstrap and kept in
# buildah's (vfs) storage, the Dockerfile is built unchanged with cached layers,
# and the server runs with `buildah run --isolation chroot --network host`.
# Untagged images are pruned from buildah's storage afterwards (the cache
# of the build dependencies is kept, tagged localhost/wayfinder-build-deps);
# IMAGE_PRUNE=0 keeps them.
#
# The smoke test: the server starts from the image on a free loopback port
# with an empty data directory (through the image's entry point and
# WAYFINDER_* variables, as the non-root user); the image's own HEALTHCHECK
# command must report SERVING; from outside, the host-built CLI
# (BUILD_DIR/client/wayfinder) uploads a map and finds a path, /metrics
# answers; wayfinder-load runs a short load from inside the image; SIGTERM must
# stop the server with exit status 0; a second start must load the map back
# from the data directory. Then the image's server as a fleet replica on a
# throwaway PostgreSQL of this host: a map put through it must be readable
# through a replica built on the host.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
tag=${2:-wayfinder:latest}
cli="$build/client/wayfinder"
t0=$SECONDS

say() { echo "image: $*"; }
die() {
  [ -z "${log:-}" ] || [ ! -s "$log" ] || { echo "image: server log:" >&2; tail -20 "$log" >&2; }
  echo "image: FAIL: $*" >&2
  exit 1
}

[ -x "$cli" ] || die "$cli missing (make build first)"

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ------------------------------------------------------------------ engines
if docker info >/dev/null 2>&1; then
  engine=docker
else
  engine=buildah
  missing=()
  for p in buildah debootstrap; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] ||
      missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    say "no Docker engine; installing ${missing[*]}"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  B=(buildah --storage-driver vfs)
  [ -z "$SUDO" ] || B=(sudo "${B[@]}")
fi
say "engine: $engine"

# -------------------------------------------------------- base images (buildah)
# Local stand-ins for the official debian:bookworm and debian:bookworm-slim
# (no registry is reachable here): a debootstrap minbase with the official
# images' apt sources (bookworm, -updates, -security) and empty package
# lists; the slim one also without docs, man pages and locales, with the
# official slim image's dpkg excludes. Made once, then reused.
have_image() { "${B[@]}" inspect --type image "$1" >/dev/null 2>&1; }

make_base() {
  local rootfs
  rootfs=$(mktemp -d /tmp/wayfinder-rootfs.XXXXXX)
  say "making debian:bookworm and debian:bookworm-slim with debootstrap (once)"
  $SUDO debootstrap --variant=minbase bookworm "$rootfs" >/tmp/wayfinder-debootstrap.log 2>&1 ||
    { tail -20 /tmp/wayfinder-debootstrap.log >&2; die "debootstrap failed"; }
  rm -f /tmp/wayfinder-debootstrap.log
  $SUDO rm -f "$rootfs/etc/apt/sources.list"
  $SUDO tee "$rootfs/etc/apt/sources.list.d/debian.sources" >/dev/null <<'EOT'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOT
  $SUDO find "$rootfs/var/cache/apt" "$rootfs/var/lib/apt/lists" -type f -delete
  local c
  c=$("${B[@]}" from scratch)
  "${B[@]}" add "$c" "$rootfs" / >/dev/null
  "${B[@]}" config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --cmd bash "$c"
  "${B[@]}" commit -q "$c" docker.io/library/debian:bookworm >/dev/null
  "${B[@]}" rm "$c" >/dev/null

  $SUDO tee "$rootfs/etc/dpkg/dpkg.cfg.d/docker" >/dev/null <<'EOT'
# As in the official slim images: no docs, man pages or translations.
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
EOT
  $SUDO find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  $SUDO rm -rf "$rootfs"/usr/share/{man,groff,info,lintian,linda,locale}/*
  c=$("${B[@]}" from scratch)
  "${B[@]}" add "$c" "$rootfs" / >/dev/null
  "${B[@]}" config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --cmd bash "$c"
  "${B[@]}" commit -q "$c" docker.io/library/debian:bookworm-slim >/dev/null
  "${B[@]}" rm "$c" >/dev/null
  $SUDO rm -rf "$rootfs"
}

# -------------------------------------------------------------------- build
# IMAGE_PROGRAMS=prebuilt (`make image`'s default): the image carries the
# programs of BUILD_DIR, stripped, from a build context of their own (the
# Dockerfile's source stages are skipped). IMAGE_PROGRAMS=source: they are
# compiled inside the build, from this tree.
programs=${IMAGE_PROGRAMS:-prebuilt}
context=.
build_args=(--build-arg "PROGRAMS=$programs")
case "$programs" in
  source) ;;
  prebuilt)
    context=$(mktemp -d /tmp/wayfinder-image-context.XXXXXX)
    trap 'rm -rf "$context"' EXIT   # until cleanup() below takes over
    mkdir -p "$context/prebuilt" "$context/docker" "$context/examples"
    for p in server/wayfinder-server client/wayfinder client/wayfinder-probe client/wayfinder-load; do
      [ -x "$build/$p" ] || die "$build/$p missing (make build first)"
      install -s -m 0755 "$build/$p" "$context/prebuilt/"
    done
    cp docker/entrypoint.sh docker/healthcheck.sh "$context/docker/"
    cp -r examples/maps "$context/examples/"
    cp LICENSE NOTICE THIRD_PARTY.md "$context/"
    ;;
  *) die "IMAGE_PROGRAMS must be prebuilt or source, not '$programs'" ;;
esac
tb=$SECONDS
if [ "$engine" = docker ]; then
  docker build -f docker/Dockerfile "${build_args[@]}" -t "$tag" "$context"
else
  if ! have_image docker.io/library/debian:bookworm ||
     ! have_image docker.io/library/debian:bookworm-slim; then
    make_base
  fi
  say "base images ready ($((SECONDS - tb)) s)"
  bud=("${B[@]}" bud --pull=never --isolation chroot --format docker --layers -f docker/Dockerfile)
  # The build-dependency stage gets a name of its own, so that pruning below
  # keeps it as the cache of the next build.
  if [ "$programs" = source ]; then
    "${bud[@]}" --target deps -t localhost/wayfinder-build-deps:latest .
  fi
  # buildah 1.28 leaves the working container of a stage without steps
  # (the Dockerfile's `FROM programs-${PROGRAMS} AS programs`) behind, and
  # it would pin its image against the prune below: remove whatever
  # containers this build left.
  before=$("${B[@]}" containers -q | sort)
  "${bud[@]}" "${build_args[@]}" -t "$tag" "$context"
  for leftover in $(comm -13 <(echo "$before") <("${B[@]}" containers -q | sort)); do
    "${B[@]}" rm "$leftover" >/dev/null
  done
  # vfs has no copy-on-write: every cached layer is a full copy of its
  # image (the build stage ~1.6 GB). Drop the untagged leftovers (earlier
  # builds' layers, this build's build stage) unless IMAGE_PRUNE=0.
  if [ "${IMAGE_PRUNE:-1}" != 0 ]; then
    "${B[@]}" rmi --prune >/dev/null
  fi
fi
say "built $tag ($((SECONDS - tb)) s)"

# -------------------------------------------------------------- smoke test
port=$(free_port)
mport=$(free_port)
addr=127.0.0.1:$port
data=$(mktemp -d /tmp/wayfinder-image-data.XXXXXX)
log=$(mktemp /tmp/wayfinder-image-log.XXXXXX)
$SUDO chown 10001:10001 "$data"   # the image's wayfinder user
env_args=(-e "WAYFINDER_LISTEN=$addr" -e "WAYFINDER_METRICS_LISTEN=127.0.0.1:$mport"
          -e "WAYFINDER_WORKERS=2" -e "WAYFINDER_LOG_LEVEL=info")
ctr=""
run_pid=""
server_pid=""

cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    $SUDO kill -KILL "$server_pid" 2>/dev/null || true
  fi
  if [ "$engine" = docker ]; then
    [ -z "$ctr" ] || docker rm -f "$ctr" >/dev/null 2>&1 || true
  else
    [ -z "$run_pid" ] || wait "$run_pid" 2>/dev/null || true
    [ -z "$ctr" ] || "${B[@]}" rm "$ctr" >/dev/null 2>&1 || true
  fi
  $SUDO rm -rf "$data"
  rm -f "$log"
  [ "$context" = . ] || rm -rf "$context"
  if [ -n "$host_pid" ]; then kill -KILL "$host_pid" 2>/dev/null || true; fi
  [ -z "$pgdir" ] || scripts/throwaway-postgres.sh destroy "$pgdir" >/dev/null 2>&1 || true
}
host_pid=""
pgdir=""
trap cleanup EXIT

# in_image CMD...: runs CMD inside the image, as the image's user, with the
# test's environment, on the host network.
in_image() {
  if [ "$engine" = docker ]; then
    docker exec "$ctr" "$@"
  else
    "${B[@]}" run --isolation chroot --network host "${env_args[@]}" "$ctr" -- "$@"
  fi
}

# Descendants of PID (buildah run -> chroot helper -> the server).
descendants() {
  local kid
  for kid in $(ps -o pid= --ppid "$1"); do
    echo "$kid"
    descendants "$kid"
  done
}

start_server() {
  if [ "$engine" = docker ]; then
    ctr=$(docker run -d --network host "${env_args[@]}" -v "$data:/var/lib/wayfinder" "$tag")
  else
    "${B[@]}" run --isolation chroot --network host "${env_args[@]}" \
      -v "$data:/var/lib/wayfinder" "$ctr" -- /usr/local/bin/wayfinder-entrypoint >"$log" 2>&1 &
    run_pid=$!
  fi
  # Wait for SERVING, asking the image's HEALTHCHECK command, as Docker would.
  local ts=$SECONDS
  until in_image /usr/local/bin/wayfinder-healthcheck >/dev/null 2>&1; do
    if [ "$engine" = buildah ] && ! kill -0 "$run_pid" 2>/dev/null; then
      die "the server exited before serving"
    fi
    [ $((SECONDS - ts)) -lt 60 ] || die "no SERVING from the health check within 60 s"
    sleep 0.5
  done
  say "health check: $(in_image /usr/local/bin/wayfinder-healthcheck) after $((SECONDS - ts)) s"
  # The WAYFINDER_* variables reached the server as flags.
  [ "$engine" = buildah ] || docker logs "$ctr" >"$log" 2>&1
  grep -q "listening on $addr (port $port), 2 workers" "$log" ||
    { cat "$log" >&2; die "the server did not get its flags from WAYFINDER_*"; }
  if [ "$engine" = buildah ]; then
    server_pid=""
    local p
    for p in $(descendants "$run_pid"); do
      if [ "$(ps -o comm= -p "$p")" = wayfinder-serve ]; then server_pid=$p; fi
    done
    [ -n "$server_pid" ] || die "cannot find the server's process"
  fi
}

# stop_server: SIGTERM, as `docker stop` sends; the server must exit 0.
stop_server() {
  local rc
  if [ "$engine" = docker ]; then
    docker stop -t 20 "$ctr" >/dev/null
    rc=$(docker inspect -f '{{.State.ExitCode}}' "$ctr")
    docker rm "$ctr" >/dev/null
    ctr=""
  else
    $SUDO kill -TERM "$server_pid"
    rc=0
    wait "$run_pid" || rc=$?
    run_pid=""
    server_pid=""
  fi
  [ "$rc" = 0 ] || die "the server exited with status $rc after SIGTERM"
  say "SIGTERM: the server stopped cleanly (exit 0)"
}

if [ "$engine" = buildah ]; then
  ctr=$("${B[@]}" from --pull=never "$tag")
  hc=$("${B[@]}" inspect --type image --format '{{.Docker.Config.Healthcheck.Test}}' "$tag")
  user=$("${B[@]}" inspect --type image --format '{{.Docker.Config.User}}' "$tag")
  say "image config: HEALTHCHECK $hc, USER $user"
  [[ "$hc" == *wayfinder-healthcheck* ]] || die "no HEALTHCHECK in the image"
  [[ "$user" == wayfinder* ]] || die "the image does not run as the wayfinder user"
fi

ts=$SECONDS
start_server
"$cli" --server="$addr" put-map examples/maps/rooms.map --name=rooms >/dev/null
out=$("$cli" --server="$addr" find-path rooms 2.5 2.5 60.5 44.5)
sed -n 1,3p <<<"$out"
grep -qi 'length' <<<"$out" || die "find-path gave no path"
python3 - "$mport" <<'EOT' || die "no metrics at /metrics"
import sys, urllib.request
body = urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=5).read().decode()
assert 'wayfinder_requests_total{' in body and 'method="FindPath"' in body, body[:500]
EOT
say "metrics: wayfinder_requests_total has FindPath"
# The compose file's load service, shortened: upload every example map with
# wayfinder-load and run 2 s of FindPath.
# shellcheck disable=SC2016  # expanded by the shell inside the image
in_image sh -c 'exec wayfinder-load --server="$0" --concurrency=2 --warmup=0.5 --duration=2 \
  --maps="$(echo /usr/share/wayfinder/maps/* | tr " " ,)"' "$addr" | grep -E '^(maps|requests|latency)' ||
  die "wayfinder-load failed"
stop_server
owner=$(stat -c %u "$data/maps/rooms.wfmap" 2>/dev/null) || die "rooms not stored in the volume"
[ "$owner" = 10001 ] || die "stored map owned by uid $owner, not the image's user"

start_server   # again: the map must come back from the volume
"$cli" --server="$addr" get rooms >/dev/null || die "rooms not reloaded from the data directory"
say "restart: rooms loaded from the volume"
stop_server

# A fleet replica: the image's server on a throwaway PostgreSQL of this host
# (WAYFINDER_POSTGRES_DSN, no data directory; this also proves the image
# carries libpq). A map put through it must be read back through a replica
# built on this host, from the database. Skipped when the host's server
# has no --postgres_dsn or PostgreSQL is not installed.
# (--helpfull exits non-zero: its text is taken whatever the status.)
if grep -q -- '--postgres_dsn' <<<"$("$build/server/wayfinder-server" --helpfull 2>&1 || true)" &&
   command -v initdb >/dev/null; then
  pgdir=$(mktemp -d /tmp/wayfinder-image-pg.XXXXXX)
  chmod 755 "$pgdir"   # PostgreSQL runs as its own user when this runs as root
  dsn=$(scripts/throwaway-postgres.sh start "$pgdir") || die "PostgreSQL did not start"
  env_args+=(-e "WAYFINDER_DATA_DIR=" -e "WAYFINDER_POSTGRES_DSN=$dsn")
  start_server
  "$cli" --server="$addr" put-map examples/maps/rooms.map --name=fleet-rooms >/dev/null ||
    die "put-map through the image's replica failed"
  hport=$(free_port)
  "$build/server/wayfinder-server" --listen="127.0.0.1:$hport" --postgres_dsn="$dsn" \
    --log_level=warn >/dev/null 2>&1 &
  host_pid=$!
  for _ in $(seq 1 100); do
    "$build/client/wayfinder-probe" --server="127.0.0.1:$hport" >/dev/null 2>&1 && break
    sleep 0.2
  done
  "$cli" --server="127.0.0.1:$hport" get fleet-rooms >/dev/null ||
    die "the map put through the image's replica is not on the host's replica"
  kill -TERM "$host_pid"
  wait "$host_pid" || true
  host_pid=""
  say "fleet: a map put through the image's replica (PostgreSQL store) read from another replica"
  stop_server
  scripts/throwaway-postgres.sh destroy "$pgdir" >/dev/null
  pgdir=""
fi
say "smoke test passed ($((SECONDS - ts)) s)"

if [ "$engine" = docker ]; then
  size=$(docker image inspect -f '{{.Size}}' "$tag")
  size="$((size / 1000000)) MB"
else
  size=$("${B[@]}" images --format '{{.Size}}' "$tag" | sed -n 1p)
fi
say "OK: $tag, $size, make image took $((SECONDS - t0)) s"
