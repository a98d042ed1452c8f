// trailmap's page: the controller. It keeps the view's state in the URL (so a pasted address
// restores it), asks the JSON API for documents (the same the CLI prints with --format json),
// and hands them to the canvases of heatmap.js, flame.js and columns.js. Every error the server
// sends is shown in a banner with its message; a missing shard is a banner too, never a gap.
import { drawHeatmap, cellAt, cellCenter, colorize, formatValue, formatTime } from './heatmap.js';
import { FlameGraph } from './flame.js';
import { drawColumns, columnAt, drawTrails } from './columns.js';
import { drawSubsecond, subsecondCellAt, subsecondCellCenter, rangeOf } from './subsecond.js';

const $ = (id) => document.getElementById(id);
const KEYS = ['metric', 'from', 'to', 'where', 'by', 'hosts', 'coloring', 'palette', 'per-column', 'clip',
              'live', 'ymin', 'ymax', 'select', 'isolate', 'exclude', 'cell', 'region', 'sort',
              'tab', 'outliers', 'srange'];
const state = { from: '-5m', to: 'now', coloring: 'rank', palette: 'heat', sort: 'p99', tab: 'columns' };
const page = { heatmap: null, columns: null, trails: null, cell: null, flame: null, diff: null,
               outliers: null, subsecond: null, busy: 0, stream: null, errors: [] };
window.trailmap = page;  // for the browser test and the curious

// ---- state <-> URL and the form ----
function readUrl() {
  const q = new URLSearchParams(location.search);
  for (const k of KEYS) if (q.has(k)) state[k] = q.get(k);
}
function writeUrl() {
  const q = new URLSearchParams();
  for (const k of KEYS) if (state[k] !== undefined && state[k] !== '') q.set(k, state[k]);
  history.replaceState(null, '', '?' + q.toString());
}
function toForm() {
  for (const k of ['from', 'to', 'where', 'by', 'coloring', 'palette', 'clip']) $(k).value = state[k] || '';
  $('per-column').checked = state['per-column'] === '1';
  $('live').checked = state.live === '1';
  $('sort').value = state.sort;
}
function fromForm() {
  for (const k of ['metric', 'from', 'to', 'where', 'by', 'coloring', 'palette', 'clip']) state[k] = $(k).value.trim();
  state['per-column'] = $('per-column').checked ? '1' : '';
  state.live = $('live').checked ? '1' : '';
}

// ---- the API ----
function viewParams(extra = {}) {
  const p = { metric: state.metric, from: state.from, to: state.to };
  for (const k of ['where', 'hosts']) if (state[k]) p[k] = state[k];
  return Object.assign(p, extra);
}
function heatmapParams(extra = {}) {
  const p = viewParams({ coloring: state.coloring, palette: state.palette });
  for (const k of ['by', 'ymin', 'ymax', 'select', 'clip']) if (state[k]) p[k] = state[k];
  if (state['per-column'] === '1') p['per-column'] = '1';
  if (state.isolate === '1') p.isolate = '1';
  if (state.exclude === '1') p.exclude = '1';
  return Object.assign(p, extra);
}
const query = (params) => new URLSearchParams(params).toString();

// ---- access: the bearer token trailmap-query asks for when it runs with --tokens ----
// From #token=... in the address (taken out of it at once) or a prompt at the first 401, kept in
// sessionStorage: this tab only, gone when it closes.
const TOKEN_KEY = 'trailmap-token';
function takeTokenFromHash() {
  const m = location.hash.match(/(?:^#|&)token=([^&]*)/);
  if (!m) return;
  sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
  history.replaceState(null, '', location.pathname + location.search);
}
const token = () => sessionStorage.getItem(TOKEN_KEY) || '';
let asking = null;  // one prompt for all the requests refused at once
function askToken() {
  asking = asking || Promise.resolve().then(() => {
    const t = window.prompt('trailmap-query needs an access token (it answered 401). Token:');
    if (t && t.trim()) sessionStorage.setItem(TOKEN_KEY, t.trim());
    return !!(t && t.trim());
  }).finally(() => { asking = null; });
  return asking;
}
// fetch with the token; at a 401 asks for a token once and tries again.
async function authFetch(url) {
  const get = () => fetch(url, { headers: token() ? { Authorization: `Bearer ${token()}` } : {} });
  const reply = await get();
  if (reply.status !== 401 || !(await askToken())) return reply;
  return get();
}
// EventSource cannot send headers: the token goes as the access_token parameter (RFC 6750).
const withToken = (params) => (token() ? Object.assign({}, params, { access_token: token() }) : params);

// GET path?params: the JSON document; a server error becomes a banner and an exception.
async function api(path, params) {
  page.busy++;
  try {
    const reply = await authFetch(`${path}?${query(params)}`);
    const body = await reply.json().catch(() => ({ error: `${reply.status} ${reply.statusText}` }));
    if (!reply.ok) throw new Error(`${path}: ${body.error || reply.status}`);
    const missing = body.missing_shards || [];
    if (missing.length) banner('missing', `Missing shards (${path}): the view shows only the shards that answered. ${missing.join('; ')}`);
    return body;
  } catch (e) {
    banner('error', e.message);
    throw e;
  } finally {
    page.busy--;
  }
}

function banner(kind, text) {
  if (kind === 'error') page.errors.push(text);
  const div = document.createElement('div');
  div.className = `banner-${kind}`;
  div.textContent = text;
  const close = document.createElement('button');
  close.textContent = '×';
  close.style.float = 'right';
  close.onclick = () => div.remove();
  div.prepend(close);
  $('banners').append(div);
}
function clearBanners() { $('banners').textContent = ''; page.errors = []; }

// ---- heat map ----
const canvas = $('heatmap');
let drag = null;

function draw() {
  if (page.heatmap) drawHeatmap(canvas, page.heatmap, page.selection);
}

async function loadHeatmap() {
  if (page.stream) { page.stream.close(); page.stream = null; }
  if (state.live === '1') return startLive();
  page.heatmap = await api('/api/heatmap', heatmapParams());
  afterHeatmap();
}

function startLive() {
  return new Promise((resolve) => {
    const es = new EventSource(`/api/heatmap/live?${query(withToken(heatmapParams()))}`);
    page.stream = es;
    es.addEventListener('heatmap', (e) => {
      page.heatmap = JSON.parse(e.data);
      if (page.heatmap.step !== 1) {
        banner('note', `Live needs one column a second; this range has ${page.heatmap.step} s columns, so it is not scrolling. Narrow the range (e.g. -10m).`);
        es.close();
      }
      afterHeatmap();
      resolve();
    });
    es.addEventListener('column', (e) => {
      const col = JSON.parse(e.data);
      const d = page.heatmap;
      if (!d || d.step !== 1) return;
      // Scroll left one second: drop the oldest column, append the new one, re-shade.
      d.counts.forEach((row, r) => { row.shift(); row.push(col.counts[r] || 0); });
      d.column_times.shift();
      d.column_times.push(col.time);
      d.from += 1; d.to += 1;
      d.total = d.counts.reduce((s, row) => s + row.reduce((a, b) => a + b, 0), 0);
      const seconds = d.to - d.from;
      d.row_events_per_second = d.counts.map((row) => row.reduce((a, b) => a + b, 0) / seconds);
      // Live columns carry no decomposition: the hues stay on the columns that had them.
      if (d.breakdown) d.breakdown = d.breakdown.filter((b) => b.column > 0).map((b) => Object.assign(b, { column: b.column - 1 }));
      colorize(d);
      if (page.selection) { page.selection.c0--; page.selection.c1--; }
      draw();
      if ((col.missing_shards || []).length) banner('missing', `Missing shards at ${formatTime(col.time)}: ${col.missing_shards.join('; ')}`);
    });
    es.addEventListener('error', (e) => {
      if (e.data) banner('error', JSON.parse(e.data).error);
      else if (es.readyState === EventSource.CLOSED) { banner('error', 'live stream closed'); resolve(); }
    });
  });
}

function afterHeatmap() {
  page.selection = null;
  draw();
  drawLegend();
  if (state.cell) {
    const [t, v] = state.cell.split(',').map(Number);
    const d = page.heatmap;
    const c = d.column_times.findIndex((ct) => ct <= t && t < ct + d.step);
    const r = d.row_bounds.findIndex(([lo, hi]) => lo <= v && v < hi);
    if (c >= 0 && r >= 0) showCell(r, c);
  }
  if (state.region) {
    const sel = selectionOfRegion(state.region);
    if (sel) { page.selection = sel; draw(); }
    showRegion(state.region);
  }
}

function drawLegend() {
  const d = page.heatmap, box = $('legend');
  box.textContent = '';
  if (!d.groups || !d.group_by) return;
  box.append(`${d.group_by}: `);
  d.groups.forEach((name, g) => {
    const span = document.createElement('span');
    const swatch = document.createElement('i');
    swatch.style.background = (d.group_colors || [])[g] || '#999';
    span.append(swatch, name || '(none)');
    for (const [label, mode] of [['hue', 'select'], ['only', 'isolate'], ['hide', 'exclude']]) {
      const b = document.createElement('button');
      b.textContent = label;
      b.title = { select: 'keep its hue, merge the others into grey', isolate: 'show only it', exclude: 'leave it out' }[mode];
      b.onclick = () => {
        state.select = name;
        state.isolate = mode === 'isolate' ? '1' : '';
        state.exclude = mode === 'exclude' ? '1' : '';
        reload();
      };
      span.append(b);
    }
    box.append(span);
  });
  if (state.select) {
    const b = document.createElement('button');
    b.textContent = 'all values';
    b.onclick = () => { state.select = state.isolate = state.exclude = ''; reload(); };
    box.append(b);
  }
}

function canvasPoint(e) {
  const r = canvas.getBoundingClientRect();
  return { x: (e.clientX - r.left) * canvas.width / r.width, y: (e.clientY - r.top) * canvas.height / r.height };
}

canvas.addEventListener('mousedown', (e) => {
  if (!page.heatmap) return;
  const p = canvasPoint(e);
  const cell = cellAt(canvas, page.heatmap, p.x, p.y);
  if (cell) drag = { start: p, cell };
});
canvas.addEventListener('mousemove', (e) => {
  if (!drag || drag.cell.axis) return;
  const p = canvasPoint(e);
  const cell = cellAt(canvas, page.heatmap, p.x, p.y);
  if (!cell || cell.axis) return;
  page.selection = { r0: drag.cell.r, c0: drag.cell.c, r1: cell.r, c1: cell.c };
  draw();
});
canvas.addEventListener('mouseup', (e) => {
  if (!drag) return;
  const p = canvasPoint(e);
  const d = page.heatmap;
  const cell = cellAt(canvas, d, p.x, p.y);
  const start = drag;
  drag = null;
  if (!cell) return;
  const moved = Math.hypot(p.x - start.start.x, p.y - start.start.y);
  if (start.cell.axis && cell.axis) {  // y zoom: the rows between, re-resampled by the server
    // A click is no zoom: a double click's first click would zoom into one row and race the
    // double click's zoom out.
    if (moved < 4) return;
    const lo = Math.min(start.cell.r, cell.r), hi = Math.max(start.cell.r, cell.r);
    state.ymin = String(d.row_bounds[lo][0]);
    state.ymax = String(d.row_bounds[hi][1]);
    return reload();
  }
  if (start.cell.axis || cell.axis) return;
  if (moved < 4) {
    page.selection = null;
    draw();
    return showCell(cell.r, cell.c);
  }
  page.selection = { r0: start.cell.r, c0: start.cell.c, r1: cell.r, c1: cell.c };
  draw();
  showRegion(regionOfSelection(page.selection));
});
canvas.addEventListener('dblclick', (e) => {
  const p = canvasPoint(e);
  const cell = page.heatmap && cellAt(canvas, page.heatmap, p.x, p.y);
  if (cell && cell.axis && (state.ymin || state.ymax)) { state.ymin = state.ymax = ''; reload(); }
});

// ---- cell details: the document of `trailmap heatmap --at TIME,VALUE` ----
async function showCell(r, c) {
  const d = page.heatmap;
  const [lo, hi] = d.row_bounds[r];
  const at = `${d.column_times[c]},${Math.floor((lo + hi) / 2)}`;
  state.cell = at;
  writeUrl();
  const params = heatmapParams({ at });
  if (state.live === '1') { params.from = String(d.from); params.to = String(d.to); }
  const doc = await api('/api/heatmap', params);
  page.cell = doc;
  const rows = [
    ['time', `${formatTime(doc.from)} – ${formatTime(doc.to)} UTC`],
    ['value', `${formatValue(doc.low, doc.unit)} – ${formatValue(doc.high, doc.unit)}`],
    ['count', `<span id="cell-count">${doc.count}</span>`],
  ];
  let html = '<table>' + rows.map(([k, v]) => `<tr><td>${k}</td><td>${v}</td></tr>`).join('') + '</table>';
  const esc = (s) => String(s).replace(/[&<>"]/g, (ch) => `&#${ch.charCodeAt(0)};`);
  if (doc.groups && doc.groups.length) {
    html += `<b>${esc(doc.group_by)}</b><table>` + doc.groups.map((g) => `<tr><td>${esc(g.value)}</td><td class="num">${g.count}</td></tr>`).join('') + '</table>';
  }
  html += '<b>hosts</b><table id="cell-hosts">' + doc.hosts.map((h) => `<tr><td>${esc(h.host)}</td><td class="num">${h.count}</td></tr>`).join('') + '</table>';
  $('cell').innerHTML = html;
}

// ---- region -> code ----
function regionOfSelection(sel) {
  const d = page.heatmap;
  const c0 = Math.max(0, Math.min(sel.c0, sel.c1)), c1 = Math.min(d.columns - 1, Math.max(sel.c0, sel.c1));
  const r0 = Math.min(sel.r0, sel.r1), r1 = Math.max(sel.r0, sel.r1);
  const to = Math.min(d.to, d.column_times[c1] + d.step);
  return `${d.column_times[c0]}..${to},${d.row_bounds[r0][0]}..${d.row_bounds[r1][1]}`;
}
function selectionOfRegion(region) {
  const m = /^(\d+)\.\.(\d+),(\d+)\.\.(\d+)$/.exec(region);
  const d = page.heatmap;
  if (!m || !d) return null;
  const [from, to, lo, hi] = m.slice(1).map(Number);
  const c0 = d.column_times.findIndex((t) => t + d.step > from);
  let c1 = d.column_times.findIndex((t) => t >= to) - 1;
  if (c1 < 0) c1 = d.columns - 1;
  const r0 = d.row_bounds.findIndex(([, h]) => h > lo);
  let r1 = d.row_bounds.findIndex(([l]) => l >= hi) - 1;
  if (r1 < 0) r1 = d.rows - 1;
  return c0 < 0 || r0 < 0 ? null : { c0, c1, r0, r1 };
}

const flame = new FlameGraph($('flame'), $('tip'));
const diff = new FlameGraph($('diff'), $('tip'));

async function showRegion(region) {
  state.region = region;
  state.outliers = state.srange = '';
  writeUrl();
  const [time, value] = region.split(',');
  const [from, to] = time.split('..').map(Number);
  const [lo, hi] = value.split('..').map(Number);
  const unit = page.heatmap ? page.heatmap.unit : 'ns';
  $('flame-title').textContent = `Code of the requests in ${formatTime(from)}–${formatTime(to)}, ${formatValue(lo, unit)}–${formatValue(hi, unit)}`;
  $('flame-cap').textContent = 'loading…';
  $('diff-cap').textContent = '';
  const params = viewParams({ region, format: 'json' });
  if (state.live === '1' && page.heatmap) { params.from = String(page.heatmap.from); params.to = String(page.heatmap.to); }
  const [one, two] = await Promise.all([
    api('/api/flame', params), api('/api/flame', Object.assign({ differential: '1' }, params))]);
  page.flame = one;
  page.diff = two;
  const r = one.region;
  const hosts = r.hosts.slice(0, 5).map((h) => `${h.host} (${h.events})`).join(', ');
  $('flame-cap').textContent = `CPU stacks of ${r.host_seconds} host-seconds holding ${r.events} selected events, each weighted by its events. Hosts: ${hosts}${r.hosts.length > 5 ? ', …' : ''}`;
  $('diff-cap').textContent = 'Differential: the same hosts\' other seconds in view as baseline (red = more in the selection, blue = less)';
  flame.set(one);
  diff.set(two);
  showTopFrames(flame);
}

function showTopFrames(graph) {
  const top = graph.topSelf(8);
  const total = graph.root ? graph.root.value : 0;
  $('top-frames').innerHTML = top.length
    ? '<b>Most self samples</b><ol id="top-frames-list">' + top.map(([n, v]) => `<li>${n.replace(/[&<>]/g, '')} — ${(100 * v / Math.max(1, total)).toFixed(1)}%</li>`).join('') + '</ol>'
    : '';
}

$('search').addEventListener('input', () => {
  const share = flame.search($('search').value);
  diff.search($('search').value);
  $('flame-info').textContent = share === null ? '' : `matched: ${(share * 100).toFixed(1)}% of samples`;
});
$('reset').addEventListener('click', () => { flame.reset(); diff.reset(); });

// ---- outliers ----
async function showOutliers() {
  state.outliers = '1';
  state.region = '';
  writeUrl();
  // The fleet's outliers, whichever host is focused.
  const fleet = viewParams({ format: 'json' });
  delete fleet.hosts;
  $('top-frames').textContent = '';
  const list = await api('/api/outliers', fleet);
  page.outliers = list;
  $('flame-title').textContent = `Outliers by ${list.stat} (modified z-score > ${list.threshold})`;
  if (!list.outliers.length) {
    $('flame-cap').textContent = `No host of ${list.hosts.length} scores above ${list.threshold}.`;
    flame.set(null); diff.set(null);
    return;
  }
  $('flame-cap').textContent = 'Outliers: ' + list.hosts.filter((h) => h.outlier).map((h) => `${h.host} (${formatValue(h[list.stat], list.unit)}, score ${h.score.toFixed(1)})`).join(', ');
  const graph = await api('/api/outliers', Object.assign({ flame: '1' }, fleet));
  $('diff-cap').textContent = 'Differential: the outliers\' stacks against the other hosts\' (red = more in the outliers)';
  flame.set(null);
  diff.set(graph);
  page.diff = graph;
  showTopFrames(diff);
}
$('outliers').addEventListener('click', () => showOutliers().catch(() => {}));

// ---- the preset: this range's stacks against the same span an hour earlier ----
async function showHourAgo() {
  const d = page.heatmap;
  if (!d) return;
  const [from, to] = [d.from, d.to];
  $('flame-title').textContent = `Code: ${formatTime(from)}–${formatTime(to)} against an hour earlier`;
  $('flame-cap').textContent = 'The fleet\'s CPU stacks in the range';
  const params = { from: String(from), to: String(to), format: 'json' };
  if (state.hosts) params.hosts = state.hosts;
  const [now, diffDoc] = await Promise.all([
    api('/api/flame', params),
    api('/api/flame', Object.assign({ 'baseline-from': String(from - 3600), 'baseline-to': String(to - 3600) }, params))]);
  $('diff-cap').textContent = 'Differential against the same span an hour earlier (red = more now)';
  page.flame = now;
  page.diff = diffDoc;
  flame.set(now);
  diff.set(diffDoc);
  showTopFrames(flame);
}
$('hour-ago').addEventListener('click', () => showHourAgo().catch(() => {}));

// ---- columns and trails ----
const columnsCanvas = $('columns');
let columnWidth = 6;
async function loadColumns() {
  page.columns = await api('/api/columns', viewParams({ sort: state.sort, rows: '40', coloring: state.coloring }));
  columnWidth = drawColumns(columnsCanvas, page.columns);
  page.microTrails = null;
}
// Each host's micro trail (from /api/stats by host) for the tooltips, asked for at the first
// hover, so a first paint does not wait for it; a failure only leaves tooltips without trails.
async function loadMicroTrails() {
  page.microTrails = new Map();
  try {
    const stats = await authFetch(`/api/stats?${query(viewParams({ by: 'host', format: 'json' }))}`).then((r) => r.json());
    for (const row of stats.rows || []) page.microTrails.set(row.group, row.trail);
  } catch {
    // tooltips without trails
  }
}
// The fleet's trails whichever host is focused: the focused one is drawn in red among them. The
// focus is left out of this request only (not cleared from `state` meanwhile, where the heat map
// loading alongside would read it, and write it out of the address).
async function loadTrails() {
  const params = viewParams({ sort: state.sort === 'count' || state.sort === 'mean' || state.sort === 'p90' ? 'cov' : state.sort, limit: '60', points: '400' });
  delete params.hosts;
  page.trails = await api('/api/trails', params);
  drawTrails($('trails'), page.trails, state.hosts);
}
columnsCanvas.addEventListener('mousemove', (e) => {
  const d = page.columns;
  if (!d) return;
  const r = columnsCanvas.getBoundingClientRect();
  const c = columnAt(columnsCanvas, d, (e.clientX - r.left) * columnsCanvas.width / r.width, columnWidth);
  const tip = $('tip');
  if (c < 0) { tip.hidden = true; return; }
  const h = d.hosts[c];
  if (!page.microTrails) loadMicroTrails();
  const trail = page.microTrails && page.microTrails.get(h.host);
  tip.textContent = `${h.host}${trail ? '  ' + trail : ''}\ncount ${h.count}\np50 ${formatValue(h.p50, d.unit)}  p99 ${formatValue(h.p99, d.unit)}\nmax ${formatValue(h.max, d.unit)}  cov ${h.cov.toFixed(2)}\nclick: focus this host`;
  tip.style.left = e.clientX + 12 + 'px';
  tip.style.top = e.clientY + 12 + 'px';
  tip.hidden = false;
});
columnsCanvas.addEventListener('mouseleave', () => { $('tip').hidden = true; });
columnsCanvas.addEventListener('click', (e) => {
  const d = page.columns;
  const r = columnsCanvas.getBoundingClientRect();
  const c = columnAt(columnsCanvas, d, (e.clientX - r.left) * columnsCanvas.width / r.width, columnWidth);
  if (c < 0) return;
  state.hosts = d.hosts[c].host;
  state.tab = 'trails';
  reload();
});
$('sort').addEventListener('change', () => { state.sort = $('sort').value; writeUrl(); loadLower().catch(() => {}); });
for (const b of document.querySelectorAll('#tabs button')) {
  b.addEventListener('click', () => { state.tab = b.dataset.tab; writeUrl(); showTab(); loadLower().catch(() => {}); });
}
function showTab() {
  for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('on', b.dataset.tab === state.tab);
  $('columns-box').hidden = state.tab !== 'columns';
  $('trails-box').hidden = state.tab !== 'trails';
  $('subsecond-box').hidden = state.tab !== 'subsecond';
  $('sort').parentElement.hidden = state.tab === 'subsecond';
  $('focus').innerHTML = '';
  if (state.hosts) {
    const b = document.createElement('button');
    b.textContent = `focused on ${state.hosts} ×`;
    b.onclick = () => { state.hosts = ''; reload(); };
    $('focus').append(b);
  }
}
async function loadLower() {
  if (state.tab === 'subsecond') {
    await loadSubsecond();
  } else if (state.tab === 'trails') {
    await loadTrails();
  } else {
    await loadColumns();
  }
}

// ---- the sub-second map (FlameScope) of the fleet's CPU samples, and a range's code ----
// /api/subsecond over the heat map's range, focused host and `where` (its host and label tests
// choose the hosts; a test of the heat map's value is refused by the API, which says why); a drag
// from one cell to another asks for the flame graph of the whole seconds it touches (stacks are
// counted per second), the CLI's `subsecond --range`.
const subCanvas = $('subsecond');
let subDrag = null;
function subsecondParams(extra = {}) {
  const p = { from: state.from, to: state.to };
  if (state.live === '1' && page.heatmap) { p.from = String(page.heatmap.from); p.to = String(page.heatmap.to); }
  for (const k of ['where', 'hosts']) if (state[k]) p[k] = state[k];
  return Object.assign(p, extra);
}
const SUBSECOND_CAP = $('subsecond-cap').textContent;
async function loadSubsecond() {
  const chosen = [state.hosts && `hosts ${state.hosts}`, state.where && `where ${state.where}`].filter(Boolean);
  $('subsecond-cap').textContent = SUBSECOND_CAP + (chosen.length ? ` · ${chosen.join(', ')}` : '');
  page.subsecond = await api('/api/subsecond', subsecondParams({ format: 'json' }));
  drawSubsecond(subCanvas, page.subsecond, state.srange);
  if (state.srange) await showSubsecondRange(state.srange);
}
async function showSubsecondRange(range) {
  const d = page.subsecond;
  state.srange = range;
  state.region = state.outliers = '';
  writeUrl();
  drawSubsecond(subCanvas, d, range);
  $('flame-title').textContent = `Code of seconds ${range} from ${formatTime(d.start_second)} (sub-second map)`;
  $('flame-cap').textContent = 'loading…';
  $('diff-cap').textContent = '';
  $('top-frames').textContent = '';
  const params = subsecondParams({ range, format: 'json', from: String(d.start_second), to: String(d.start_second + d.columns) });
  const doc = await api('/api/subsecond', params);
  page.flame = doc;
  page.diff = null;
  const seconds = doc.range.to - doc.range.from;
  $('flame-cap').textContent = `CPU stacks of the whole second${seconds === 1 ? '' : 's'} ${formatTime(doc.range.from)}–${formatTime(doc.range.to)} (${seconds} s; stacks are counted per second): ${doc.value} samples`;
  flame.set(doc);
  diff.set(null);
  showTopFrames(flame);
}
function subPoint(e) {
  const r = subCanvas.getBoundingClientRect();
  return { x: (e.clientX - r.left) * subCanvas.width / r.width, y: (e.clientY - r.top) * subCanvas.height / r.height };
}
subCanvas.addEventListener('mousedown', (e) => {
  const d = page.subsecond, p = subPoint(e);
  const cell = d && subsecondCellAt(subCanvas, d, p.x, p.y);
  if (cell) subDrag = cell;
});
subCanvas.addEventListener('mousemove', (e) => {
  const d = page.subsecond, p = subPoint(e);
  const cell = subDrag && subsecondCellAt(subCanvas, d, p.x, p.y);
  if (cell) drawSubsecond(subCanvas, d, rangeOf(d, subDrag, cell));
});
subCanvas.addEventListener('mouseup', (e) => {
  const d = page.subsecond, p = subPoint(e);
  const start = subDrag;
  subDrag = null;
  const cell = start && subsecondCellAt(subCanvas, d, p.x, p.y);
  if (cell) showSubsecondRange(rangeOf(d, start, cell)).catch(() => {});
});
page.subsecondCellCenter = (c, r) => {
  const p = subsecondCellCenter(subCanvas, page.subsecond, c, r);
  const b = subCanvas.getBoundingClientRect();
  return { x: b.left + p.x * b.width / subCanvas.width, y: b.top + p.y * b.height / subCanvas.height };
};

// ---- start ----
async function reload() {
  writeUrl();
  clearBanners();
  showTab();
  page.ready = false;
  try {
    await Promise.all([loadHeatmap(), loadLower()]);
  } catch (e) {
    // already in a banner
  }
  if (state.outliers === '1') await showOutliers().catch(() => {});
  page.ready = true;
}
page.reload = reload;
// The levels the page gives `doc`'s counts when live columns re-shade it (the browser test checks
// they are the server's).
page.recolor = (doc) => { const copy = JSON.parse(JSON.stringify(doc)); colorize(copy); return copy.levels; };
page.cellCenter = (r, c) => {
  const p = cellCenter(canvas, page.heatmap, r, c);
  const b = canvas.getBoundingClientRect();
  return { x: b.left + p.x * b.width / canvas.width, y: b.top + p.y * b.height / canvas.height };
};
page.columnCenter = (c) => {
  const b = columnsCanvas.getBoundingClientRect();
  return { x: b.left + (64 + (c + 0.5) * columnWidth) * b.width / columnsCanvas.width, y: b.top + 40 };
};

$('apply').addEventListener('click', () => { fromForm(); state.cell = state.region = state.srange = state.ymin = state.ymax = ''; reload(); });

async function start() {
  takeTokenFromHash();
  readUrl();
  toForm();
  try {
    const metrics = await api('/api/metrics', { format: 'json' });
    const list = (metrics.metrics || []).filter((m) => m.kind === 'latency' || m.kind === 'size' || m.kind === 'scalar');
    for (const m of list) {
      const o = document.createElement('option');
      o.value = o.textContent = m.name;
      $('metric').append(o);
    }
    if (!state.metric && list.length) state.metric = (list.find((m) => m.kind === 'latency') || list[0]).name;
    $('metric').value = state.metric || '';
  } catch (e) {
    // banner shown
  }
  if (state.metric) await reload();
  else banner('note', 'No latency metric stored yet: start agents, or give ?metric=NAME.');
  page.ready = true;
}
start();
