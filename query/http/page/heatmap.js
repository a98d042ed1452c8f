// The heat map on a canvas: the server's document (/api/heatmap, docs/json.md) drawn cell by
// cell in its own colors, the side panel of events per second per row, and the geometry the
// mouse needs (cell under a point, the rectangle of a drag, a drag on the value axis).
//
// Live columns (/api/heatmap/live) arrive as counts only; colorize() then shades the grid by the
// rule the CLI uses (query/views/heatmap.cc ColorCells, query/draw/palette.cc ShadeLevel): rank =
// the mean 1-based position of the cell's count among the non-empty cells, over their number;
// linear = count / max; level = clamp(ceil(saturation * 31 - 1e-9), 1, 31).

export const LAYOUT = { left: 64, top: 8, bottom: 34, panel: 120, gap: 8 };

export function plotBox(canvas) {
  const w = canvas.width - LAYOUT.left - LAYOUT.panel - LAYOUT.gap;
  const h = canvas.height - LAYOUT.top - LAYOUT.bottom;
  return { x: LAYOUT.left, y: LAYOUT.top, w, h };
}

function colorCells(counts, cells, coloring, saturation) {
  const sorted = cells.map(([r, c]) => counts[r][c]).filter((n) => n > 0).sort((a, b) => a - b);
  if (!sorted.length) return;
  const lowerBound = (v) => { let lo = 0, hi = sorted.length; while (lo < hi) { const m = (lo + hi) >> 1; if (sorted[m] < v) lo = m + 1; else hi = m; } return lo; };
  const upperBound = (v) => { let lo = 0, hi = sorted.length; while (lo < hi) { const m = (lo + hi) >> 1; if (sorted[m] <= v) lo = m + 1; else hi = m; } return lo; };
  for (const [r, c] of cells) {
    const n = counts[r][c];
    if (!n) continue;
    if (coloring === 'rank') {
      const first = lowerBound(n) + 1, last = upperBound(n);
      saturation[r][c] = (first + last) / 2 / sorted.length;
    } else {
      saturation[r][c] = n / sorted[sorted.length - 1];
    }
  }
}

// Recomputes doc.saturation and doc.levels from doc.counts, as the server does.
export function colorize(doc) {
  const rows = doc.counts.length, cols = rows ? doc.counts[0].length : 0;
  const sat = doc.counts.map((row) => row.map(() => 0));
  if (doc.per_column) {
    for (let c = 0; c < cols; c++) {
      const cells = [];
      for (let r = 0; r < rows; r++) cells.push([r, c]);
      colorCells(doc.counts, cells, doc.coloring, sat);
    }
  } else {
    const cells = [];
    for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) cells.push([r, c]);
    colorCells(doc.counts, cells, doc.coloring, sat);
  }
  doc.saturation = sat;
  doc.levels = sat.map((row, r) => row.map((s, c) =>
    doc.counts[r][c] ? Math.min(31, Math.max(1, Math.ceil(Math.min(1, Math.max(0, s)) * 31 - 1e-9))) : 0));
  let max = 0, nonzero = 0;
  for (const row of doc.counts) for (const n of row) { if (n) nonzero++; if (n > max) max = n; }
  doc.max_count = max;
  doc.nonzero_cells = nonzero;
}

export function formatValue(v, unit) {
  if (unit === 'ns') {
    const steps = [[1e9, 's'], [1e6, 'ms'], [1e3, 'µs'], [1, 'ns']];
    for (const [f, u] of steps) if (Math.abs(v) >= f || f === 1) return +(v / f).toPrecision(3) + u;
  }
  if (unit === 'B') {
    const steps = [[2 ** 30, 'GiB'], [2 ** 20, 'MiB'], [2 ** 10, 'KiB'], [1, 'B']];
    for (const [f, u] of steps) if (Math.abs(v) >= f || f === 1) return +(v / f).toPrecision(3) + u;
  }
  return String(+Number(v).toPrecision(4));
}

export function formatTime(t) {
  return new Date(t * 1000).toISOString().slice(11, 19);
}

function hexToRgb(h) {
  return [parseInt(h.slice(1, 3), 16), parseInt(h.slice(3, 5), 16), parseInt(h.slice(5, 7), 16)];
}

// The color of cell (r, c): the palette's level, or with a decomposition (by) the hue of the
// cell's largest group, faded towards white by the cell's saturation.
function cellColor(doc, r, c, dominant) {
  const level = doc.levels[r][c];
  if (!level) return null;
  if (dominant) {
    const g = dominant.get(r * 1e7 + c);
    if (g !== undefined && doc.group_colors && doc.group_colors[g]) {
      const [R, G, B] = hexToRgb(doc.group_colors[g]);
      const s = 0.25 + 0.75 * doc.saturation[r][c];
      return `rgb(${255 + (R - 255) * s | 0},${255 + (G - 255) * s | 0},${255 + (B - 255) * s | 0})`;
    }
  }
  return doc.palette[level];
}

function dominantGroups(doc) {
  if (!doc.breakdown) return null;
  const index = new Map(doc.groups.map((g, i) => [g, i]));
  const out = new Map();
  for (const cell of doc.breakdown) {
    let best = null, bestCount = -1;
    for (const [g, n] of Object.entries(cell.counts)) if (n > bestCount) { best = g; bestCount = n; }
    const gi = index.has(best) ? index.get(best) : doc.groups.length;
    out.set(cell.row * 1e7 + cell.column, gi);
  }
  return out;
}

// A grid of rows x cols cells in `box` (row 0 at the bottom), each filled in colorAt(r, c) (null:
// left white), framed, with the value axis labelled every few rows by rowLabel(r) (r = rows: the
// top edge). Leaves the text style set for more labels; returns the cell size.
export function drawCells(g, box, rows, cols, colorAt, rowLabel) {
  g.fillStyle = '#fff';
  g.fillRect(0, 0, g.canvas.width, g.canvas.height);
  const cw = box.w / cols, ch = box.h / rows;
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const color = colorAt(r, c);
      if (!color) continue;
      g.fillStyle = color;
      g.fillRect(box.x + c * cw, box.y + box.h - (r + 1) * ch, Math.ceil(cw), Math.ceil(ch));
    }
  }
  g.strokeStyle = '#999';
  g.strokeRect(box.x - 0.5, box.y - 0.5, box.w + 1, box.h + 1);
  g.fillStyle = '#333';
  g.font = '11px system-ui, sans-serif';
  g.textAlign = 'right';
  g.textBaseline = 'middle';
  const labelEvery = Math.max(1, Math.ceil(14 / ch));
  for (let r = 0; r <= rows; r += labelEvery) g.fillText(rowLabel(r), box.x - 5, box.y + box.h - r * ch);
  return { cw, ch };
}

export function drawHeatmap(canvas, doc, selection) {
  const g = canvas.getContext('2d');
  const box = plotBox(canvas);
  const rows = doc.rows, cols = doc.columns;
  const dominant = dominantGroups(doc);
  // Axes: values on the left (row bounds), times below.
  const { cw, ch } = drawCells(g, box, rows, cols, (r, c) => cellColor(doc, r, c, dominant),
    (r) => formatValue(r < rows ? doc.row_bounds[r][0] : doc.row_bounds[rows - 1][1], doc.unit));
  g.textAlign = 'center';
  g.textBaseline = 'top';
  const every = Math.max(1, Math.ceil(70 / cw));
  for (let c = 0; c < cols; c += every) {
    g.fillText(formatTime(doc.column_times[c]), box.x + c * cw, box.y + box.h + 5);
  }
  g.fillText(`UTC · ${doc.metric} · ${doc.coloring}${doc.per_column ? ' per column' : ''} · ${doc.total} events`,
             box.x + box.w / 2, box.y + box.h + 19);
  // Side panel: events per second per row.
  const px = box.x + box.w + LAYOUT.gap;
  const eps = doc.row_events_per_second || [];
  const maxEps = Math.max(1e-9, ...eps);
  g.fillStyle = '#607d8b';
  // Log-scaled bars, so a sparse slow band beside a dense fast one still shows.
  for (let r = 0; r < rows; r++) {
    const w = (Math.log1p(eps[r]) / Math.log1p(maxEps)) * (LAYOUT.panel - 10);
    g.fillRect(px, box.y + box.h - (r + 1) * ch + 0.5, w, Math.max(1, ch - 1));
  }
  g.fillStyle = '#333';
  g.textAlign = 'left';
  g.fillText('events/s per row (log)', px, box.y + box.h + 5);
  g.fillText(`max ${+maxEps.toPrecision(3)}`, px, box.y + box.h + 19);
  if (selection) {
    const [c0, c1] = [Math.min(selection.c0, selection.c1), Math.max(selection.c0, selection.c1)];
    const [r0, r1] = [Math.min(selection.r0, selection.r1), Math.max(selection.r0, selection.r1)];
    g.strokeStyle = '#1565c0';
    g.lineWidth = 2;
    g.setLineDash([5, 3]);
    g.strokeRect(box.x + c0 * cw, box.y + box.h - (r1 + 1) * ch, (c1 - c0 + 1) * cw, (r1 - r0 + 1) * ch);
    g.setLineDash([]);
    g.lineWidth = 1;
  }
}

// The cell under canvas point (x, y), or null outside the plot. `axis` is true left of the plot.
export function cellAt(canvas, doc, x, y) {
  const box = plotBox(canvas);
  const inY = y >= box.y && y < box.y + box.h;
  const r = Math.min(doc.rows - 1, Math.max(0, Math.floor((box.y + box.h - y) / (box.h / doc.rows))));
  if (x < box.x && inY) return { axis: true, r };
  if (x >= box.x + box.w || !inY) return null;
  const c = Math.min(doc.columns - 1, Math.max(0, Math.floor((x - box.x) / (box.w / doc.columns))));
  return { r, c };
}

// The canvas point at the middle of cell (r, c).
export function cellCenter(canvas, doc, r, c) {
  const box = plotBox(canvas);
  return { x: box.x + (c + 0.5) * box.w / doc.columns, y: box.y + box.h - (r + 0.5) * box.h / doc.rows };
}
