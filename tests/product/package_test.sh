#!/usr/bin/env bash
# make package's Debian packages: cpack on the built tree (into a temporary
# directory, so the build tree is left alone), then the contents and control
# fields of wayfinder-client-dev and wayfinder-server checked with dpkg-deb.
#   usage: package_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; fail "cpack"; }
client=$(ls "$work"/wayfinder-client-dev_*.deb 2>/dev/null) || fail "no wayfinder-client-dev .deb"
server=$(ls "$work"/wayfinder-server_*.deb 2>/dev/null) || fail "no wayfinder-server .deb"

has() {  # has DEB PATH...: every PATH is in DEB
  local deb=$1; shift
  local list; list=$(dpkg-deb -c "$deb" | awk '{print $6}')
  for p in "$@"; do
    grep -qx "\./$p" <<<"$list" || fail "$(basename "$deb") lacks $p"
  done
}
lacks() {  # lacks DEB REGEX: no path of DEB matches REGEX
  local hit; hit=$(dpkg-deb -c "$1" | awk '{print $6}' | grep -E "$2" || true)
  [ -z "$hit" ] || fail "$(basename "$1") has $hit"
}

has "$client" usr/include/wayfinder/client/client.h usr/include/wayfinder/v1/wayfinder.pb.h \
  usr/include/wayfinder/v1/wayfinder.grpc.pb.h usr/lib/libwayfinder_client.a \
  usr/lib/libwayfinder_proto.a usr/lib/cmake/Wayfinder/WayfinderConfig.cmake \
  usr/lib/cmake/Wayfinder/WayfinderConfigVersion.cmake \
  usr/lib/cmake/Wayfinder/WayfinderTargets.cmake usr/lib/pkgconfig/wayfinder-client.pc \
  usr/share/doc/wayfinder-client-dev/LICENSE usr/share/doc/wayfinder-client-dev/THIRD_PARTY.md
lacks "$client" 'bin/|systemd|etc/'
has "$server" usr/bin/wayfinder-server usr/bin/wayfinder usr/bin/wayfinder-load \
  usr/bin/wayfinder-probe usr/lib/systemd/system/wayfinder.service etc/default/wayfinder \
  usr/share/doc/wayfinder-server/LICENSE usr/share/doc/wayfinder-server/NOTICE \
  usr/share/doc/wayfinder-server/THIRD_PARTY.md
lacks "$server" 'include/|\.a$|_test|bench'

# Depends: the -dev packages a program linking the static library needs;
# the server's from dpkg-shlibdeps (gRPC, protobuf, libpq, ...) and adduser
# for its maintainer script.
cdeps=$(dpkg-deb -f "$client" Depends)
for p in libgrpc++-dev libprotobuf-dev libabsl-dev; do
  grep -q "$p" <<<"$cdeps" || fail "wayfinder-client-dev Depends lacks $p: $cdeps"
done
sdeps=$(dpkg-deb -f "$server" Depends)
for p in adduser libgrpc++1.51 libprotobuf32 libpq5 libc6; do
  grep -q "$p" <<<"$sdeps" || fail "wayfinder-server Depends lacks $p: $sdeps"
done

# Maintainer scripts: the user and state directory, the conffile.
dpkg-deb -e "$server" "$work/control"
[ "$(cat "$work/control/conffiles")" = /etc/default/wayfinder ] || fail "conffiles"
grep -q "adduser .*--system" "$work/control/postinst" || fail "postinst makes no system user"
grep -q "/var/lib/wayfinder" "$work/control/postinst" || fail "postinst makes no state dir"
for s in postinst prerm postrm; do
  [ -x "$work/control/$s" ] || fail "$s not executable"
  sh -n "$work/control/$s" || fail "$s: syntax"
done
# The unit runs the packaged server as the dedicated user with the conffile.
dpkg-deb -x "$server" "$work/root"
unit=$work/root/usr/lib/systemd/system/wayfinder.service
grep -q "^User=wayfinder$" "$unit" || fail "unit: User"
grep -q "^EnvironmentFile=-/etc/default/wayfinder$" "$unit" || fail "unit: EnvironmentFile"
grep -q "^ExecStart=/usr/bin/wayfinder-server " "$unit" || fail "unit: ExecStart"
if command -v systemd-analyze >/dev/null; then
  systemd-analyze verify "$unit" 2>&1 | grep -v "wayfinder-server.*No such file" || true
fi
"$work/root/usr/bin/wayfinder-server" --version >/dev/null 2>&1 ||
  "$work/root/usr/bin/wayfinder-server" --help >/dev/null 2>&1 ||
  fail "the packaged server does not run"
echo "PASS: $(basename "$client") $(basename "$server")"
