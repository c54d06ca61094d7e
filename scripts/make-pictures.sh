#!/usr/bin/env bash
# Renders the README's pictures from the benchmark data: starts a server on a
# free loopback port, uploads maps, draws them with `wayfinder render` and
# converts the SVGs to PNG with rsvg-convert (Debian librsvg2-bin).
#   usage: scripts/make-pictures.sh [BUILD_DIR] [DATA_DIR] [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$here/build}
data=${2:-$here/../shared/data}
out=${3:-$here/docs/images}
command -v rsvg-convert >/dev/null || { echo "needs rsvg-convert (apt-get install librsvg2-bin)" >&2; exit 1; }
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$build/server/wayfinder-server" --listen="127.0.0.1:$port" >"$work/server.log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true; rm -rf "$work"' EXIT
cli() { "$build/client/wayfinder" --server="127.0.0.1:$port" "$@"; }
for _ in $(seq 1 100); do "$build/client/wayfinder-probe" --server="127.0.0.1:$port" >/dev/null 2>&1 && break; sleep 0.1; done

# A Moving AI map as a hex map: the same walls, hexagon cells.
python3 - "$data/movingai/dao/den312d.map" "$work/den312d-hex.json" <<'PY'
import base64, json, sys
lines = open(sys.argv[1]).read().split("\n")
h = int(lines[1].split()[1]); w = int(lines[2].split()[1])
rows = lines[4:4 + h]
walls = bytes(0 if c in ".G" else 1 for row in rows for c in row[:w])
json.dump({"name": "den312d-hex", "hex": {"width": w, "height": h,
           "walls": base64.b64encode(walls).decode()}}, open(sys.argv[2], "w"))
PY

cli put-map "$data/movingai/bg512/AR0011SR.map" --agent_radii=0,1.5 >/dev/null
cli put-map "$work/den312d-hex.json" >/dev/null
cli put-map "$data/movingai/street/Boston_0_1024.map" --graphs=grid >/dev/null

cli render AR0011SR --graph=quadtree --path 210.5,395.5,87.5,201.5 --out="$work/quadtree.svg"
cli render AR0011SR --graph=navmesh --agent_radius=1.5 --path 210.5,395.5,87.5,201.5 \
  --out="$work/navmesh.svg"
cli render den312d-hex --flow 7.5,76 --path 50.5,10.5,7.5,76 --out="$work/hex-flow.svg"
cli render Boston_0_1024 --flow 512.5,512.5 --path 20.5,20.5,1000.5,1000.5 --out="$work/grid-flow.svg"
mkdir -p "$out"
for name in quadtree navmesh hex-flow grid-flow; do
  rsvg-convert -w 640 "$work/$name.svg" -o "$out/$name.png"
done
ls -l "$out"
