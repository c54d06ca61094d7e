// Wayfinder inspector, drawing: the state the page shows, the view (pan
// and zoom), raster tiles, and every frame's drawing. Loaded before
// inspector.js, which fetches from the API, handles input and starts it.
//
// Rasters (grid, movingai and hex maps, flow-field heat maps) are painted
// once into offscreen tiles of TILE x TILE cells; a frame only draws the
// tiles in view, so a 4096 x 4096 map pans as fast as a small one.
// Coordinates are the API's world units (x right, y down, one cell = 1).
'use strict';

const TILE = 256;
const WALL = 255;
const GRID_STEPS = [[1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1], [0, -1], [1, -1]];
const FLOW_LINK = 253;   // take the off-mesh link that starts in this cell
const FLOW_GOAL = 254;
const FLOW_NONE = 255;
const LINK_COLOUR = '#b5179e';
const LINK_USED_COLOUR = '#e4572e';
const MAX_FRAME_SAMPLES = 4000;

const $ = (id) => document.getElementById(id);

const state = {
  enums: {},
  maps: [],
  info: null,           // MapInfo of the shown version
  grid: null,           // {width, height, hex, cells: Uint8Array} or null
  shapes: null,         // {walkable, obstacles, areas} of rects and polygons maps
  links: [],            // the map's off-mesh links (GraphGeometry.links)
  tiles: [],            // the raster's tiles
  overlays: new Map(),  // key -> {label, geometry|null, on}
  path: null,           // {start, goal, waypoints}
  flow: null,           // {goals, directions, tiles, width, height}
  flowGoals: [],
  stroke: null,         // cells of a brush stroke in progress (index -> value)
  dragRect: null,       // obstacle rectangle being dragged {a, b}
  reloading: null,
  reloadAgain: false,
  watch: null,
};
const view = { scale: 1, x: 0, y: 0, fitted: '' };
const timing = { deltas: [], drawMs: [], last: 0, pending: false };


// ---------------------------------------------------------------- colours

function rgba(r, g, b, a = 255) {
  return ((a << 24) | (b << 16) | (g << 8) | r) >>> 0;
}

function mix(c0, c1, t) {
  return c0.map((v, i) => Math.round(v + (c1[i] - v) * t));
}

// Cell byte -> pixel: free light, costs toward amber, walls dark.
function cellPalette() {
  const palette = new Uint32Array(256);
  for (let v = 0; v < 256; v++) {
    const c = v <= 1 ? [243, 240, 230] : mix([236, 214, 160], [176, 110, 30], (v - 2) / 252);
    palette[v] = rgba(...c);
  }
  palette[WALL] = rgba(48, 52, 60);
  return palette;
}

// Distance to goal -> pixel: blue near, yellow, red far.
function heatColour(t) {
  const c = t < 0.5 ? mix([44, 123, 182], [255, 255, 191], t * 2) : mix([255, 255, 191], [215, 25, 28], t * 2 - 1);
  return rgba(...c, 170);
}

// ---------------------------------------------------------------- tiles

// Hex maps: odd columns sit half a cell lower, so a tile has two pixel rows
// per cell row (and one more), each column shifted by its parity.
function renderTile(grid, x0, y0, colourOf) {
  const w = Math.min(TILE, grid.width - x0);
  const h = Math.min(TILE, grid.height - y0);
  const rows = grid.hex ? 2 * h + 1 : h;
  const canvas = Object.assign(document.createElement('canvas'), { width: w, height: rows });
  const ctx = canvas.getContext('2d');
  const image = ctx.createImageData(w, rows);
  const px = new Uint32Array(image.data.buffer);
  for (let y = 0; y < h; y++) {
    const row = (y0 + y) * grid.width + x0;
    for (let x = 0; x < w; x++) {
      const c = colourOf(row + x);
      if (!grid.hex) {
        px[y * w + x] = c;
      } else {
        const py = 2 * y + ((x0 + x) & 1);
        px[py * w + x] = c;
        px[(py + 1) * w + x] = c;
      }
    }
  }
  ctx.putImageData(image, 0, 0);
  return { x: x0, y: y0, w, h: grid.hex ? h + 0.5 : h, canvas };
}

function buildTiles(grid, colourOf) {
  const tiles = [];
  for (let y = 0; y < grid.height; y += TILE) {
    for (let x = 0; x < grid.width; x += TILE) tiles.push(renderTile(grid, x, y, colourOf));
  }
  return tiles;
}

function rasterTiles(grid) {
  const palette = cellPalette();
  const cells = grid.cells;
  return buildTiles(grid, (i) => palette[cells[i]]);
}

// ---------------------------------------------------------------- the view

function canvasSize() {
  const canvas = $('view');
  return { w: canvas.clientWidth, h: canvas.clientHeight };
}

function mapBounds() {
  const info = state.info;
  const origin = info.origin || {};
  return { x: origin.x || 0, y: origin.y || 0, w: info.width || 1, h: (info.height || 1) + (state.grid && state.grid.hex ? 0.5 : 0) };
}

function fitView() {
  const { w, h } = canvasSize();
  const b = mapBounds();
  view.scale = Math.min(w / b.w, h / b.h) * 0.96;
  view.x = b.x + b.w / 2 - w / 2 / view.scale;
  view.y = b.y + b.h / 2 - h / 2 / view.scale;
}

function toWorld(px, py) {
  return { x: view.x + px / view.scale, y: view.y + py / view.scale };
}

function eventPoint(event) {
  const r = $('view').getBoundingClientRect();
  return toWorld(event.clientX - r.left, event.clientY - r.top);
}

function visibleRect() {
  const { w, h } = canvasSize();
  return { x0: view.x, y0: view.y, x1: view.x + w / view.scale, y1: view.y + h / view.scale };
}

function intersects(r, x, y, w, h) {
  return x < r.x1 && x + w > r.x0 && y < r.y1 && y + h > r.y0;
}

function zoomAt(px, py, factor) {
  const before = toWorld(px, py);
  view.scale = Math.min(Math.max(view.scale * factor, 0.02), 400);
  view.x = before.x - px / view.scale;
  view.y = before.y - py / view.scale;
  requestDraw();
}

// ---------------------------------------------------------------- drawing

function drawTiles(ctx, tiles, r) {
  for (const t of tiles) {
    if (intersects(r, t.x, t.y, t.w, t.h)) ctx.drawImage(t.canvas, t.x, t.y, t.w, t.h);
  }
}

function polygonPath(polygons) {
  const path = new Path2D();
  for (const p of polygons) {
    const pts = p.points || [];
    if (pts.length < 2) continue;
    path.moveTo(pts[0].x || 0, pts[0].y || 0);
    for (let i = 1; i < pts.length; i++) path.lineTo(pts[i].x || 0, pts[i].y || 0);
    path.closePath();
  }
  return path;
}

function drawShapes(ctx) {
  if (!state.shapes) return;
  ctx.fillStyle = '#f3f0e6';
  if (state.shapes.walkable.length) ctx.fill(polygonPath(state.shapes.walkable), 'nonzero');
  else ctx.fillRect(...Object.values(mapBounds()));
  ctx.fillStyle = '#30343c';
  ctx.fill(polygonPath(state.shapes.obstacles), 'nonzero');
  // Area polygons (mud, road, water): a tint per area id, later ones on top
  // as the server applies them.
  for (const a of state.shapes.areas) {
    const hue = ((a.id || 0) * 137) % 360;
    ctx.fillStyle = `hsla(${hue}, 60%, 45%, 0.28)`;
    ctx.fill(polygonPath([a.polygon || {}]), 'nonzero');
  }
}

// An off-mesh link: a dashed arc bowed to its left (so a link and its
// reverse stay apart), an arrowhead where it leads (both ends when
// bidirectional), dots where it is entered. Links the shown path takes are
// drawn in the path's colour; ids are written once cells are large.
function linkCurve(link) {
  const a = link.start || {}, b = link.end || {};
  const ax = a.x || 0, ay = a.y || 0, bx = b.x || 0, by = b.y || 0;
  const dx = bx - ax, dy = by - ay;
  return { ax, ay, bx, by, cx: (ax + bx) / 2 + dy * 0.2, cy: (ay + by) / 2 - dx * 0.2 };
}

function linkArrow(ctx, tipX, tipY, fromX, fromY) {
  const len = Math.hypot(tipX - fromX, tipY - fromY) || 1;
  const ux = (tipX - fromX) / len, uy = (tipY - fromY) / len;
  const size = 9 / view.scale;
  ctx.moveTo(tipX - ux * size - uy * size * 0.5, tipY - uy * size + ux * size * 0.5);
  ctx.lineTo(tipX, tipY);
  ctx.lineTo(tipX - ux * size + uy * size * 0.5, tipY - uy * size - ux * size * 0.5);
}

function drawLinks(ctx) {
  if (!state.links.length) return;
  const used = new Set((state.path && state.path.linksUsed) || []);
  ctx.save();
  ctx.lineWidth = 2.5 / view.scale;
  ctx.font = `${12 / view.scale}px sans-serif`;
  for (const link of state.links) {
    const c = linkCurve(link);
    const colour = used.has(link.id) ? LINK_USED_COLOUR : LINK_COLOUR;
    ctx.strokeStyle = colour;
    ctx.fillStyle = colour;
    ctx.setLineDash([6 / view.scale, 4 / view.scale]);
    ctx.beginPath();
    ctx.moveTo(c.ax, c.ay);
    ctx.quadraticCurveTo(c.cx, c.cy, c.bx, c.by);
    ctx.stroke();
    ctx.setLineDash([]);
    ctx.beginPath();
    linkArrow(ctx, c.bx, c.by, c.cx, c.cy);
    if (link.bidirectional) linkArrow(ctx, c.ax, c.ay, c.cx, c.cy);
    ctx.stroke();
    ctx.beginPath();
    ctx.arc(c.ax, c.ay, 3.5 / view.scale, 0, 2 * Math.PI);
    ctx.fill();
    // The label at the arc's middle (a quadratic curve's point at t = 1/2).
    if (view.scale >= 8) {
      ctx.fillText(link.id || '', (c.ax + 2 * c.cx + c.bx) / 4, (c.ay + 2 * c.cy + c.by) / 4);
    }
  }
  ctx.restore();
}

function drawLeaves(ctx, geometry, r) {
  ctx.beginPath();
  for (const l of geometry.leaves || []) {
    const x = l.x || 0, y = l.y || 0;
    if (intersects(r, x, y, l.width, l.height)) ctx.rect(x, y, l.width, l.height);
  }
  ctx.strokeStyle = 'rgba(30, 110, 200, 0.8)';
  ctx.stroke();
}

function drawNavmesh(ctx, geometry) {
  ctx.fillStyle = 'rgba(60, 170, 110, 0.16)';
  ctx.strokeStyle = 'rgba(30, 130, 80, 0.85)';
  const path = polygonPath(geometry.polygons || []);
  ctx.fill(path);
  ctx.stroke(path);
}

// Cell lines (grid) or hexagon outlines, only when cells are large enough.
function drawCellLines(ctx, hex, r) {
  if (view.scale < 8 || !state.grid) return;
  const g = state.grid;
  const x0 = Math.max(0, Math.floor(r.x0)), x1 = Math.min(g.width, Math.ceil(r.x1));
  const y0 = Math.max(0, Math.floor(r.y0) - 1), y1 = Math.min(g.height, Math.ceil(r.y1));
  ctx.beginPath();
  for (let x = x0; x < x1; x++) {
    for (let y = y0; y < y1; y++) {
      if (hex) hexOutline(ctx, x + 0.5, y + 0.5 + (x & 1) * 0.5);
      else ctx.rect(x, y, 1, 1);
    }
  }
  ctx.strokeStyle = 'rgba(90, 95, 105, 0.35)';
  ctx.stroke();
}

// The region of points nearest a hex centre: top and bottom sides at
// centre.y -+ 0.5, corners at x -+ 0.375 and the side points at x -+ 0.625.
const HEX_CORNERS = [[-0.375, -0.5], [0.375, -0.5], [0.625, 0], [0.375, 0.5], [-0.375, 0.5], [-0.625, 0]];
function hexOutline(ctx, cx, cy) {
  HEX_CORNERS.forEach(([dx, dy], i) => (i ? ctx.lineTo : ctx.moveTo).call(ctx, cx + dx, cy + dy));
  ctx.closePath();
}

function drawOverlays(ctx, r) {
  for (const overlay of state.overlays.values()) {
    if (!overlay.on) continue;
    if (overlay.kind === 'GRID' || overlay.kind === 'HEX') drawCellLines(ctx, overlay.kind === 'HEX', r);
    else if (!overlay.geometry) continue;
    else if (overlay.kind === 'QUADTREE') drawLeaves(ctx, overlay.geometry, r);
    else drawNavmesh(ctx, overlay.geometry);
  }
}

function flowStep(x, y, d) {
  if (!state.grid || !state.grid.hex) return GRID_STEPS[d];
  const odd = x & 1;
  const hexSteps = [[0, -1], [1, -1 + odd], [1, odd], [0, 1], [-1, odd], [-1, -1 + odd]];
  const [dx, dy] = hexSteps[d];
  return [dx, dy + (((x + dx) & 1) - odd) * 0.5];
}

function drawFlowArrows(ctx, r) {
  const f = state.flow;
  if (!f || view.scale < 9) return;
  const hexShift = state.grid && state.grid.hex;
  const x0 = Math.max(0, Math.floor(r.x0)), x1 = Math.min(f.width, Math.ceil(r.x1));
  const y0 = Math.max(0, Math.floor(r.y0) - 1), y1 = Math.min(f.height, Math.ceil(r.y1));
  ctx.beginPath();
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const d = f.directions[y * f.width + x];
      if (d === FLOW_NONE || d === FLOW_GOAL) continue;
      if (d === FLOW_LINK) {  // a ring: this cell's best move is the link it holds
        const cx = x + 0.5, cy = y + 0.5 + (hexShift ? (x & 1) * 0.5 : 0);
        ctx.moveTo(cx + 0.3, cy);
        ctx.arc(cx, cy, 0.3, 0, 2 * Math.PI);
        continue;
      }
      const [dx, dy] = flowStep(x, y, d);
      const len = Math.hypot(dx, dy);
      const cx = x + 0.5, cy = y + 0.5 + (hexShift ? (x & 1) * 0.5 : 0);
      const ex = cx + (dx / len) * 0.38, ey = cy + (dy / len) * 0.38;
      ctx.moveTo(cx - (dx / len) * 0.3, cy - (dy / len) * 0.3);
      ctx.lineTo(ex, ey);
      ctx.lineTo(ex - (dx - dy * 0.6) / len * 0.2, ey - (dy + dx * 0.6) / len * 0.2);
      ctx.moveTo(ex, ey);
      ctx.lineTo(ex - (dx + dy * 0.6) / len * 0.2, ey - (dy - dx * 0.6) / len * 0.2);
    }
  }
  ctx.strokeStyle = 'rgba(20, 30, 60, 0.7)';
  ctx.stroke();
}

function drawPath(ctx) {
  const p = state.path;
  if (!p) return;
  const pts = p.waypoints || [];
  if (pts.length > 1) {
    ctx.beginPath();
    ctx.moveTo(pts[0].x || 0, pts[0].y || 0);
    for (const q of pts) ctx.lineTo(q.x || 0, q.y || 0);
    ctx.lineWidth = 3 / view.scale;
    ctx.strokeStyle = '#e4572e';
    ctx.stroke();
  }
  drawMarker(ctx, p.start, '#2e9e4f');
  drawMarker(ctx, p.goal, '#c0392b');
}

function drawMarker(ctx, point, colour) {
  if (!point) return;
  ctx.beginPath();
  ctx.arc(point.x, point.y, 6 / view.scale, 0, 2 * Math.PI);
  ctx.fillStyle = colour;
  ctx.fill();
}

function drawEditPreview(ctx) {
  if (state.stroke && state.grid) {
    ctx.fillStyle = 'rgba(228, 87, 46, 0.55)';
    for (const i of state.stroke.keys()) {
      const x = i % state.grid.width, y = Math.floor(i / state.grid.width);
      ctx.fillRect(x, y + (state.grid.hex ? (x & 1) * 0.5 : 0), 1, 1);
    }
  }
  if (state.dragRect) {
    const r = obstacleRect(state.dragRect);
    ctx.fillStyle = 'rgba(228, 87, 46, 0.35)';
    ctx.fillRect(r.x, r.y, r.width, r.height);
  }
  for (const g of state.flowGoals) drawMarker(ctx, g, '#7b2cbf');
}

function draw() {
  const canvas = $('view');
  const dpr = window.devicePixelRatio || 1;
  const { w, h } = canvasSize();
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
  }
  const ctx = canvas.getContext('2d');
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.fillStyle = '#d8d4c8';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  if (!state.info) return;
  const s = view.scale * dpr;
  ctx.setTransform(s, 0, 0, s, -view.x * s, -view.y * s);
  // Crisp cells when magnified; filtered when minified, or walls one cell
  // thin would drop out between samples.
  ctx.imageSmoothingEnabled = view.scale < 1;
  ctx.imageSmoothingQuality = 'medium';
  ctx.lineWidth = 1 / view.scale;
  const r = visibleRect();
  drawTiles(ctx, state.tiles, r);
  drawShapes(ctx);
  if (state.flow) drawTiles(ctx, state.flow.tiles, r);
  drawOverlays(ctx, r);
  ctx.lineWidth = 1 / view.scale;
  drawFlowArrows(ctx, r);
  drawLinks(ctx);
  drawPath(ctx);
  drawEditPreview(ctx);
}

// ---------------------------------------------------------------- frames

function requestDraw() {
  if (timing.pending) return;
  timing.pending = true;
  requestAnimationFrame(frame);
}

// Frame time = the delta between consecutive animation frames while the
// view keeps changing (pauses longer than a second are not frames).
function frame(now) {
  timing.pending = false;
  if (timing.last && now - timing.last < 1000) pushSample(timing.deltas, now - timing.last);
  const t0 = performance.now();
  draw();
  const ms = performance.now() - t0;
  pushSample(timing.drawMs, ms);
  inspector.lastFrameMs = ms;
  timing.last = now;
  $('frame-info').textContent = `draw ${ms.toFixed(1)} ms`;
}

function pushSample(samples, value) {
  samples.push(value);
  if (samples.length > MAX_FRAME_SAMPLES) samples.shift();
}
