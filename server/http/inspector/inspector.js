// Wayfinder inspector: calls the server's HTTP/JSON API (POST /v1/<Rpc>,
// WatchMaps as Server-Sent Events) and turns clicks into queries and edits;
// inspector-view.js (loaded first) holds the state and draws it.
// No framework and no build step: the files are served as written.
'use strict';

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
    state.shapes = {
      walkable: geometry.walkable || [], obstacles: geometry.obstacles || [], areas: geometry.areas || [],
    };
  }
  state.links = geometry.links || [];
  $('view').dataset.links = state.links.map((l) => l.id).join(',');
}

function showMapFacts() {
  const info = state.info;
  $('map-version').textContent = num(info.version);
  $('map-size').textContent = `${info.width} × ${info.height}` + (info.freeCells ? `, ${num(info.freeCells)} free` : '');
  $('map-graphs').textContent = (info.graphs || []).map((g) => `${g.kind} ${num(g.nodes)}`).join(', ');
  $('map-links').textContent = state.links.length ? `${state.links.length}` : 'none';
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
    p.linksUsed = reply.linksUsed || [];
    showPathFacts(reply, performance.now() - t0);
  } catch (e) {
    p.waypoints = [];
    p.linksUsed = [];
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
  $('path-links').textContent = found ? ((reply.linksUsed || []).join(', ') || 'none') : '–';
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
  // EventSource sends no headers: the token goes as ?access_token=.
  const token = $('token').value.trim();
  const source = new EventSource(
    token ? `/v1/WatchMaps?access_token=${encodeURIComponent(token)}` : '/v1/WatchMaps');
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
  $('token').addEventListener('change', (e) => {
    sessionStorage.setItem('wayfinder-token', e.target.value);
    if (state.watch) rewatch(state.watch);  // the stream carries the token
  });
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
