// Wayfinder inspector: draws the server's maps and graphs on a canvas and
// calls its HTTP/JSON API (POST /v1/<Rpc>, WatchMaps as Server-Sent Events).
// No framework and no build step: the file is served as written.
//
// Rasters (grid, movingai and hex maps, flow-field heat maps) are painted
// once into offscreen tiles of TILE x TILE cells; a frame only draws the
// tiles in view, so a 4096 x 4096 map pans as fast as a small one.
// Coordinates are the API's world units (x right, y down, one cell = 1).
'use strict';

const TILE = 256;
const WALL = 255;
const GRID_STEPS = [[1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1], [0, -1], [1, -1]];
const FLOW_GOAL = 254;
const FLOW_NONE = 255;
const MAX_FRAME_SAMPLES = 4000;

const $ = (id) => document.getElementById(id);

const state = {
  enums: {},
  maps: [],
  info: null,           // MapInfo of the shown version
  grid: null,           // {width, height, hex, cells: Uint8Array} or null
  shapes: null,         // {walkable, obstacles} of rects and polygons maps
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

// ---------------------------------------------------------------- the API

async function api(rpc, body) {
  const headers = { 'Content-Type': 'application/json' };
  const token = $('token').value.trim();
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(`/v1/${rpc}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const reply = await response.json().catch(() => ({ message: response.statusText }));
  if (!response.ok) throw new Error(`${rpc}: ${reply.status || response.status}: ${reply.message || ''}`);
  return reply;
}

function decodeBase64(text) {
  const binary = atob(text || '');
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function encodeBase64(bytes) {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary);
}

// uint64 fields come as strings in the JSON mapping; absent means 0.
function num(value) {
  return Number(value || 0);
}

function showStatus(message, isError) {
  const el = $('status');
  el.textContent = message;
  el.classList.toggle('error', Boolean(isError));
}

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

// ---------------------------------------------------------------- maps

async function loadMapList() {
  const reply = await api('ListMaps', {});
  state.maps = reply.maps || [];
  const select = $('map-select');
  const current = select.value || (state.info && state.info.name) || decodeURIComponent(location.hash.slice(5));
  select.replaceChildren(new Option('(choose a map)', ''));
  for (const m of state.maps) select.add(new Option(`${m.name}  (v${num(m.version)})`, m.name));
  select.value = state.maps.some((m) => m.name === current) ? current : '';
}

async function selectMap(name) {
  location.hash = name ? `map=${encodeURIComponent(name)}` : '';
  state.path = null;
  clearFlow();
  showPathFacts(null);
  if (!name) {
    state.info = null;
    requestDraw();
    return;
  }
  await reloadMap();
}

// Loads the current version of the chosen map; a reload asked for while
// one runs runs again after it (so the newest version, and the latest
// choice, always win).
async function reloadMap() {
  if (state.reloading) {
    state.reloadAgain = true;
    return state.reloading;
  }
  state.reloading = (async () => {
    do {
      state.reloadAgain = false;
      const name = $('map-select').value;
      if (name) await loadMapVersion(name);
    } while (state.reloadAgain);
  })();
  try {
    await state.reloading;
  } catch (e) {
    showStatus(e.message, true);
  } finally {
    state.reloading = null;
  }
}

async function loadMapVersion(name) {
  const info = await api('GetMap', { name });
  const base = await api('GetGraph', { map: name, minVersion: info.version });
  if ($('map-select').value !== name) return;  // another map was chosen meanwhile
  const changedMap = !state.info || state.info.name !== name;
  state.info = info;
  setBaseGeometry(base);
  rebuildOverlays(changedMap);
  await loadOverlayGeometry();
  if (view.fitted !== name) {
    fitView();
    view.fitted = name;
  }
  showMapFacts();
  fillGraphSelects(changedMap);
  requestDraw();
  $('view').dataset.map = name;
  $('view').dataset.version = num(info.version);
  await refreshQueries();
}

function setBaseGeometry(geometry) {
  if (geometry.cellsWidth) {
    state.grid = {
      width: geometry.cellsWidth,
      height: geometry.cellsHeight,
      hex: geometry.graph === 'HEX',
      cells: decodeBase64(geometry.cells),
    };
    state.tiles = rasterTiles(state.grid);
    state.shapes = null;
  } else {
    state.grid = null;
    state.tiles = [];
    state.shapes = { walkable: geometry.walkable || [], obstacles: geometry.obstacles || [] };
  }
}

function showMapFacts() {
  const info = state.info;
  $('map-version').textContent = num(info.version);
  $('map-size').textContent = `${info.width} × ${info.height}` + (info.freeCells ? `, ${num(info.freeCells)} free` : '');
  $('map-graphs').textContent = (info.graphs || []).map((g) => `${g.kind} ${num(g.nodes)}`).join(', ');
  const list = $('obstacle-list');
  list.replaceChildren(...(info.obstacles || []).map((id) => new Option(id, id)));
}

// ---------------------------------------------------------------- overlays

function rebuildOverlays(changedMap) {
  const previous = changedMap ? new Map() : state.overlays;
  state.overlays = new Map();
  for (const g of state.info.graphs || []) {
    if (g.kind === 'NAVMESH') {
      for (const m of g.navmeshes || [{}]) {
        const radius = m.agentRadius || 0;
        addOverlay(previous, `NAVMESH-${radius}`, 'NAVMESH', `navmesh, radius ${radius} (${num(m.polygons)} polygons)`, radius);
      }
    } else {
      const label = { GRID: 'grid cells', HEX: 'hex cells', QUADTREE: `quadtree leaves (${num(g.nodes)})` }[g.kind] || g.kind;
      addOverlay(previous, g.kind, g.kind, label, 0);
    }
  }
  renderOverlayList();
}

function addOverlay(previous, key, kind, label, radius) {
  const old = previous.get(key);
  state.overlays.set(key, { kind, label, radius, on: old ? old.on : false, geometry: null });
}

function renderOverlayList() {
  const list = $('overlay-list');
  list.replaceChildren();
  for (const [key, overlay] of state.overlays) {
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.id = `overlay-${key}`;
    box.checked = overlay.on;
    box.addEventListener('change', () => toggleOverlay(key, box.checked));
    const label = document.createElement('label');
    label.append(box, overlay.label);
    list.append(label);
  }
}

async function toggleOverlay(key, on) {
  state.overlays.get(key).on = on;
  try {
    await loadOverlayGeometry();
  } catch (e) {
    showStatus(e.message, true);
  }
  requestDraw();
}

// Geometry of the overlays switched on, fetched when first needed.
async function loadOverlayGeometry() {
  for (const overlay of state.overlays.values()) {
    if (!overlay.on || overlay.geometry || overlay.kind === 'GRID' || overlay.kind === 'HEX') continue;
    overlay.geometry = await api('GetGraph', {
      map: state.info.name, graph: overlay.kind, agentRadius: overlay.radius, minVersion: state.info.version,
    });
  }
}

// ---------------------------------------------------------------- paths

function fillSelect(select, values, labelOf) {
  const keep = select.value;
  select.replaceChildren(...values.map((v) => new Option(labelOf(v), v)));
  if (values.includes(keep)) select.value = keep;
}

const defaultLabel = (v) => (v.endsWith('_UNSPECIFIED') ? 'default' : v);

function fillGraphSelects(changedMap) {
  const built = (state.info.graphs || []).map((g) => g.kind);
  const kinds = (state.enums.GraphKind || []).filter((k) => k.endsWith('_UNSPECIFIED') || built.includes(k));
  fillSelect($('path-graph'), kinds, defaultLabel);
  if (changedMap) $('path-graph').value = kinds[0] || '';
  fillMethodSelect();
}

function fillMethodSelect() {
  const graph = $('path-graph').value === 'GRAPH_KIND_UNSPECIFIED'
    ? ((state.info && state.info.graphs && state.info.graphs[0]) || {}).kind : $('path-graph').value;
  const values = { GRID: state.enums.GridMethod, NAVMESH: state.enums.NavmeshMethod }[graph] || ['default'];
  fillSelect($('path-method'), values, defaultLabel);
}

function snapPoint(p) {
  if (state.grid && !state.grid.hex) return { x: Math.floor(p.x) + 0.5, y: Math.floor(p.y) + 0.5 };
  return { x: Math.round(p.x * 100) / 100, y: Math.round(p.y * 100) / 100 };
}

function pathRequest(start, goal) {
  const graph = $('path-graph').value;
  const method = $('path-method').value;
  const options = { smoothing: $('path-smoothing').value, agentRadius: Number($('agent-radius').value) || 0 };
  if (state.enums.GridMethod && state.enums.GridMethod.includes(method)) options.gridMethod = method;
  if (state.enums.NavmeshMethod && state.enums.NavmeshMethod.includes(method)) options.navmeshMethod = method;
  return { map: state.info.name, start, goal, graph, options, minVersion: state.info.version };
}

function onPathClick(point) {
  const p = snapPoint(point);
  if (!state.path || state.path.goal) {
    state.path = { start: p, goal: null, waypoints: [] };
    showPathFacts(null);
  } else {
    state.path.goal = p;
    findPath();
  }
  requestDraw();
}

async function findPath() {
  const p = state.path;
  if (!p || !p.goal) return;
  const t0 = performance.now();
  try {
    const reply = await api('FindPath', pathRequest(p.start, p.goal));
    p.waypoints = reply.waypoints || [];
    showPathFacts(reply, performance.now() - t0);
  } catch (e) {
    p.waypoints = [];
    showPathFacts({ status: e.message });
  }
  requestDraw();
}

function formatPoint(p) {
  return p ? `${p.x}, ${p.y}` : '–';
}

function showPathFacts(reply, rttMs) {
  const p = state.path;
  $('path-start').textContent = formatPoint(p && p.start);
  $('path-goal').textContent = formatPoint(p && p.goal);
  $('path-status').textContent = reply ? reply.status || 'PATH_STATUS_UNSPECIFIED' : '–';
  const found = reply && reply.waypoints;
  $('path-length').textContent = found ? (reply.length || 0).toFixed(3) : '–';
  $('path-expansions').textContent = found ? num(reply.stats && reply.stats.expansions) : '–';
  $('path-time').textContent = found ? `${(num(reply.stats && reply.stats.micros) / 1000).toFixed(3)} ms` : '–';
  $('path-rtt').textContent = rttMs ? `${rttMs.toFixed(1)} ms` : '–';
}

// ---------------------------------------------------------------- flow fields

function onFlowClick(point, add) {
  const p = snapPoint(point);
  state.flowGoals = add ? [...state.flowGoals, p] : [p];
  loadFlow();
}

async function loadFlow() {
  if (!state.flowGoals.length || !state.info) return;
  const withDistances = state.grid && state.grid.width * state.grid.height <= (1 << 21);
  try {
    const reply = await api('GetFlowField', {
      map: state.info.name, goals: state.flowGoals, includeDistances: withDistances, minVersion: state.info.version,
    });
    setFlow(reply);
    const stats = reply.stats || {};
    $('flow-goals').textContent = state.flowGoals.map(formatPoint).join('; ');
    $('flow-reachable').textContent = `${num(stats.reachableCells)} cells, max ${(stats.maxDistance || 0).toFixed(1)}`;
    $('flow-time').textContent = `${(stats.computeMs || 0).toFixed(2)} ms${stats.cacheHit ? ' (cached)' : ''}`;
  } catch (e) {
    state.flow = null;
    state.flowGoals = [];
    showStatus(e.message, true);
  }
  requestDraw();
}

function setFlow(reply) {
  const width = reply.width, height = reply.height;
  const directions = decodeBase64(reply.directions);
  const distances = reply.distances ? reply.distances.map(Number) : null;
  const max = (reply.stats && reply.stats.maxDistance) || 1;
  const reachable = rgba(44, 123, 182, 60);
  const colourOf = distances
    ? (i) => (Number.isFinite(distances[i]) ? heatColour(distances[i] / max) : 0)
    : (i) => (directions[i] === FLOW_NONE ? 0 : reachable);
  const grid = { width, height, hex: Boolean(state.grid && state.grid.hex) };
  state.flow = { width, height, directions, tiles: buildTiles(grid, colourOf) };
}

function clearFlow() {
  state.flow = null;
  state.flowGoals = [];
  for (const id of ['flow-goals', 'flow-reachable', 'flow-time']) $(id).textContent = '–';
  requestDraw();
}

// After a new version: the path and the field again, on the new map.
async function refreshQueries() {
  if (state.path && state.path.goal) await findPath();
  if (state.flowGoals.length) await loadFlow();
}

// ---------------------------------------------------------------- edits

function cellAt(p) {
  const g = state.grid;
  if (!g) return null;
  let x = Math.floor(p.x);
  let y = Math.floor(g.hex ? p.y - (x & 1) * 0.5 : p.y);
  if (x < 0 || y < 0 || x >= g.width || y >= g.height) return null;
  return { x, y };
}

function paintAt(point, value) {
  const c = cellAt(point);
  if (!c) return;
  const g = state.grid;
  const brush = Math.max(1, Math.min(64, Number($('brush').value) || 1));
  const x0 = c.x - Math.floor((brush - 1) / 2), y0 = c.y - Math.floor((brush - 1) / 2);
  for (let y = Math.max(0, y0); y < Math.min(g.height, y0 + brush); y++) {
    for (let x = Math.max(0, x0); x < Math.min(g.width, x0 + brush); x++) state.stroke.set(y * g.width + x, value);
  }
  requestDraw();
}

// One CellPatch (HexPatch on hex maps) over the stroke's bounding box:
// painted cells get the brush's value, the others keep theirs.
function strokePatch(stroke) {
  const g = state.grid;
  let x0 = g.width, y0 = g.height, x1 = -1, y1 = -1;
  for (const i of stroke.keys()) {
    const x = i % g.width, y = Math.floor(i / g.width);
    x0 = Math.min(x0, x); y0 = Math.min(y0, y); x1 = Math.max(x1, x); y1 = Math.max(y1, y);
  }
  const width = x1 - x0 + 1, height = y1 - y0 + 1;
  const bytes = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y0 + y) * g.width + x0 + x;
      bytes[y * width + x] = stroke.has(i) ? stroke.get(i) : g.cells[i];
    }
  }
  const patch = { x: x0, y: y0, width, height };
  if (g.hex) return { hex: { ...patch, walls: encodeBase64(bytes.map((v) => (v === WALL ? 1 : 0))) } };
  return { cells: { ...patch, cells: encodeBase64(bytes) } };
}

async function sendEdits(edits) {
  try {
    const info = await api('UpdateMap', { map: state.info.name, expectedVersion: state.info.version, edits });
    showStatus(`edited: version ${num(info.version)}`);
    await onMapVersion(info.name, num(info.version));
  } catch (e) {
    showStatus(e.message, true);
    await reloadMap();
  }
}

function obstacleRect(drag) {
  const snap = state.grid ? Math.floor : (v) => v;
  const snapUp = state.grid ? Math.ceil : (v) => v;
  const x = snap(Math.min(drag.a.x, drag.b.x)), y = snap(Math.min(drag.a.y, drag.b.y));
  return { x, y, width: snapUp(Math.max(drag.a.x, drag.b.x)) - x, height: snapUp(Math.max(drag.a.y, drag.b.y)) - y };
}

function nextObstacleId(id) {
  const m = /^(.*?)(\d+)$/.exec(id);
  return m ? `${m[1]}${Number(m[2]) + 1}` : `${id}-2`;
}

async function addObstacle(drag) {
  const rect = obstacleRect(drag);
  if (rect.width <= 0 || rect.height <= 0) return;
  const input = $('obstacle-id');
  const id = input.value.trim() || `obstacle-${Date.now() % 100000}`;
  input.value = nextObstacleId(id);
  await sendEdits([{ addObstacle: { id, rect } }]);
}

async function removeObstacle() {
  const id = $('obstacle-list').value;
  if (id) await sendEdits([{ removeObstacle: id }]);
}

// ---------------------------------------------------------------- watching

// One stream for every map: versions of the shown map reload it, maps
// created or deleted elsewhere refresh the list.
function watchMaps() {
  const source = new EventSource('/v1/WatchMaps');
  state.watch = source;
  source.addEventListener('open', () => { $('watch-state').textContent = 'watching'; });
  source.addEventListener('map', (e) => onMapEvent(JSON.parse(e.data)));
  source.addEventListener('end', () => rewatch(source));
  source.addEventListener('error', () => {
    if (source.readyState === EventSource.CLOSED) rewatch(source);
    else $('watch-state').textContent = 'reconnecting';
  });
}

function rewatch(source) {
  source.close();
  $('watch-state').textContent = 'reconnecting';
  if (state.watch === source) setTimeout(watchMaps, 2000);
}

async function onMapEvent(event) {
  const known = state.maps.find((m) => m.name === event.map);
  if (!known || event.kind === 'DELETE' || num(known.version) !== num(event.version)) {
    await loadMapList().catch((e) => showStatus(e.message, true));
  }
  if (event.kind !== 'DELETE') await onMapVersion(event.map, num(event.version));
}

async function onMapVersion(name, version) {
  if (!state.info || state.info.name !== name || version <= num(state.info.version)) return;
  await reloadMap();
}

// ---------------------------------------------------------------- input

function onMouseDown(event) {
  if (!state.info) return;
  const edit = ['wall', 'free', 'obstacle'].includes($('tool').value) && event.button === 0;
  const p = eventPoint(event);
  state.pointer = { x: event.clientX, y: event.clientY, moved: false, edit };
  if (edit && $('tool').value === 'obstacle') state.dragRect = { a: p, b: p };
  else if (edit && state.grid) {
    state.stroke = new Map();
    paintAt(p, $('tool').value === 'wall' ? WALL : 0);
  }
  event.preventDefault();
}

function onMouseMove(event) {
  const ptr = state.pointer;
  if (!ptr) return;
  const dx = event.clientX - ptr.x, dy = event.clientY - ptr.y;
  if (Math.abs(dx) + Math.abs(dy) > 3) ptr.moved = true;
  if (state.dragRect) state.dragRect.b = eventPoint(event);
  else if (state.stroke) paintAt(eventPoint(event), $('tool').value === 'wall' ? WALL : 0);
  else if (ptr.moved) {
    $('view').classList.add('panning');
    view.x -= dx / view.scale;
    view.y -= dy / view.scale;
    ptr.x = event.clientX;
    ptr.y = event.clientY;
  }
  requestDraw();
}

function onMouseUp(event) {
  const ptr = state.pointer;
  if (!ptr) return;
  state.pointer = null;
  $('view').classList.remove('panning');
  if (state.dragRect) {
    const drag = state.dragRect;
    state.dragRect = null;
    addObstacle(drag);
  } else if (state.stroke) {
    const stroke = state.stroke;
    state.stroke = null;
    if (stroke.size) sendEdits([strokePatch(stroke)]);
  } else if (!ptr.moved && event.button === 0) {
    onClick(eventPoint(event), event.shiftKey);
  }
  requestDraw();
}

function onClick(point, shift) {
  if ($('tool').value === 'path') onPathClick(point);
  else if ($('tool').value === 'flow') onFlowClick(point, shift);
}

function onWheel(event) {
  event.preventDefault();
  const r = $('view').getBoundingClientRect();
  zoomAt(event.clientX - r.left, event.clientY - r.top, Math.exp(-event.deltaY * 0.0015));
}

function bindInputs() {
  const canvas = $('view');
  canvas.addEventListener('mousedown', onMouseDown);
  canvas.addEventListener('contextmenu', (e) => e.preventDefault());
  window.addEventListener('mousemove', onMouseMove);
  window.addEventListener('mouseup', onMouseUp);
  canvas.addEventListener('wheel', onWheel, { passive: false });
  $('map-select').addEventListener('change', (e) => selectMap(e.target.value));
  $('path-graph').addEventListener('change', () => { fillMethodSelect(); findPath(); });
  for (const id of ['path-method', 'path-smoothing', 'agent-radius']) $(id).addEventListener('change', findPath);
  $('flow-clear').addEventListener('click', clearFlow);
  $('obstacle-remove').addEventListener('click', removeObstacle);
  $('token').value = sessionStorage.getItem('wayfinder-token') || '';
  $('token').addEventListener('change', (e) => sessionStorage.setItem('wayfinder-token', e.target.value));
  new ResizeObserver(requestDraw).observe(canvas);
}

// ---------------------------------------------------------------- start

async function start() {
  bindInputs();
  state.enums = await (await fetch('/enums.json')).json();
  fillSelect($('path-smoothing'), state.enums.Smoothing || [], defaultLabel);
  await loadMapList();
  watchMaps();
  if ($('map-select').value) await selectMap($('map-select').value);
  requestDraw();
}

// For tests and the console: a promise settled when the page has its
// enums, map list and event stream, and frame-time samples (ms).
const inspector = {
  ready: null,
  lastFrameMs: 0,
  frameTimes: () => ({ deltas: timing.deltas.slice(), drawMs: timing.drawMs.slice() }),
  resetFrameTimes: () => { timing.deltas.length = 0; timing.drawMs.length = 0; timing.last = 0; },
};
window.inspector = inspector;
inspector.ready = start().catch((e) => {
  showStatus(e.message, true);
  throw e;
});
