// FlameScope's sub-second offset heat map on a canvas: the document of /api/subsecond
// (`trailmap subsecond --format json`: counts[column][row], one column per second, row 0 = the
// first 1000/rows ms of the second, drawn at the bottom), shaded as the CLI shades it
// (query/render/subsecond.cc SubsecondColor: white → #FF5032 at half the largest count →
// #E50914 at the largest, linearly).
//
// A selection runs in time, as FlameScope's: from the earlier cell's start to the later cell's
// end, through the cells between (up a column, then the next column from its bottom).

import { drawCells } from './heatmap.js';

export const SUB_LAYOUT = { left: 64, top: 8, bottom: 34, right: 12 };

function box(canvas) {
  return { x: SUB_LAYOUT.left, y: SUB_LAYOUT.top, w: canvas.width - SUB_LAYOUT.left - SUB_LAYOUT.right,
           h: canvas.height - SUB_LAYOUT.top - SUB_LAYOUT.bottom };
}

const WHITE = [255, 255, 255], MID = [0xff, 0x50, 0x32], TOP = [0xe5, 0x09, 0x14];
const mix = (a, b, t) => a.map((v, i) => Math.round(v + (b[i] - v) * t));

export function subsecondColor(count, max) {
  if (!count || !max) return null;
  const half = max / 2;
  const [r, g, b] = count <= half ? mix(WHITE, MID, count / half) : mix(MID, TOP, (count - half) / (max - half));
  return `rgb(${r},${g},${b})`;
}

// The time of cell (c, r) in seconds from the first column: its start.
const cellTime = (doc, c, r) => c + r / doc.rows;

// The range "A..B" (seconds from the first column, 3 decimals, as the CLI's --range) of a
// selection from cell a to cell b, either order.
export function rangeOf(doc, a, b) {
  const [t0, t1] = [cellTime(doc, a.c, a.r), cellTime(doc, b.c, b.r)].sort((x, y) => x - y);
  return `${t0.toFixed(3)}..${(t1 + 1 / doc.rows).toFixed(3)}`;
}

export function drawSubsecond(canvas, doc, selection) {
  const g = canvas.getContext('2d');
  const b = box(canvas);
  const cols = Math.max(1, doc.columns), rows = doc.rows;
  const { cw, ch } = drawCells(g, b, rows, cols, (r, c) => (c < doc.columns ? subsecondColor(doc.counts[c][r], doc.max_count) : null),
    (r) => `${+(1000 * r / rows).toFixed(1)} ms`);
  if (selection) {
    const [t0, t1] = selection.split('..').map(Number);
    g.fillStyle = 'rgba(21,101,192,0.35)';
    for (let c = Math.floor(t0); c < Math.min(cols, Math.ceil(t1)); c++) {
      const lo = Math.max(0, Math.round((t0 - c) * rows)), hi = Math.min(rows, Math.round((t1 - c) * rows));
      if (hi > lo) g.fillRect(b.x + c * cw, b.y + b.h - hi * ch, Math.max(1, cw), (hi - lo) * ch);
    }
    g.fillStyle = '#333';
  }
  g.textAlign = 'center';
  g.textBaseline = 'top';
  const labelEvery = [1, 2, 5, 10, 20, 30, 60, 120, 300, 600].find((n) => n * cw >= 36) || 600;
  for (let c = 0; c < cols; c += labelEvery) g.fillText(String(c), b.x + (c + 0.5) * cw, b.y + b.h + 5);
  const start = new Date(doc.start_second * 1000).toISOString().slice(11, 19);
  g.fillText(`seconds from ${start} UTC · ${doc.samples} samples · largest cell ${doc.max_count}`,
             b.x + b.w / 2, b.y + b.h + 19);
}

// The cell under canvas point (x, y), or null outside the plot.
export function subsecondCellAt(canvas, doc, x, y) {
  const b = box(canvas);
  if (x < b.x || x >= b.x + b.w || y < b.y || y >= b.y + b.h || !doc.columns) return null;
  return { c: Math.min(doc.columns - 1, Math.floor((x - b.x) / (b.w / doc.columns))),
           r: Math.min(doc.rows - 1, Math.floor((b.y + b.h - y) / (b.h / doc.rows))) };
}

// The canvas point at the middle of cell (c, r).
export function subsecondCellCenter(canvas, doc, c, r) {
  const b = box(canvas);
  return { x: b.x + (c + 0.5) * b.w / doc.columns, y: b.y + b.h - (r + 0.5) * b.h / doc.rows };
}
