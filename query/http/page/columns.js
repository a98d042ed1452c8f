// The sorted per-server columns (/api/columns) and the frequency trails (/api/trails) on canvases.
// Columns are at least 6 px wide and the canvas scrolls sideways, so 1,000 hosts stay readable;
// a host's name is written under its column when the column is wide enough, and is always in
// the tooltip with its statistics.
import { formatValue } from './heatmap.js';

export const COLUMNS_LAYOUT = { left: 64, top: 8, bottom: 70, minWidth: 6 };

export function drawColumns(canvas, doc) {
  const L = COLUMNS_LAYOUT;
  const n = doc.columns;
  const cw = Math.max(L.minWidth, Math.floor(900 / Math.max(1, n)));
  canvas.width = L.left + n * cw + 10;
  const g = canvas.getContext('2d');
  g.fillStyle = '#fff';
  g.fillRect(0, 0, canvas.width, canvas.height);
  const h = canvas.height - L.top - L.bottom;
  const ch = h / doc.rows;
  for (let c = 0; c < n; c++) {
    for (let r = 0; r < doc.rows; r++) {
      const level = doc.levels[r][c];
      if (!level) continue;
      g.fillStyle = doc.palette[level];
      g.fillRect(L.left + c * cw, L.top + h - (r + 1) * ch, cw - 1, Math.ceil(ch));
    }
  }
  g.strokeStyle = '#999';
  g.strokeRect(L.left - 0.5, L.top - 0.5, n * cw + 1, h + 1);
  g.fillStyle = '#333';
  g.font = '11px system-ui, sans-serif';
  g.textAlign = 'right';
  g.textBaseline = 'middle';
  const every = Math.max(1, Math.ceil(14 / ch));
  for (let r = 0; r <= doc.rows; r += every) {
    const v = r < doc.rows ? doc.row_bounds[r][0] : doc.row_bounds[doc.rows - 1][1];
    g.fillText(formatValue(v, doc.unit), L.left - 5, L.top + h - r * ch);
  }
  // Host names, rotated, when there is room for them (11 px font: 10 px columns or wider).
  if (cw >= 10) {
    g.textAlign = 'right';
    for (let c = 0; c < n; c++) {
      g.save();
      g.translate(L.left + c * cw + cw / 2, L.top + h + 4);
      g.rotate(-Math.PI / 2.6);
      g.fillText(doc.hosts[c].host, 0, 0);
      g.restore();
    }
  } else {
    g.textAlign = 'left';
    g.fillText(`${n} hosts: point at a column for its name`, L.left, L.top + h + 12);
  }
  return cw;
}

export function columnAt(canvas, doc, x, cw) {
  const c = Math.floor((x - COLUMNS_LAYOUT.left) / cw);
  return c >= 0 && c < doc.columns ? c : -1;
}

// The waterfall: back trail on top, each trail a line where dense and rug ticks where sparse.
export function drawTrails(canvas, doc, focus) {
  const trails = doc.trails || [];
  const step = 14, amp = 40, left = 120, width = 820;
  canvas.height = Math.max(120, trails.length * step + amp + 40);
  const g = canvas.getContext('2d');
  g.fillStyle = '#fff';
  g.fillRect(0, 0, canvas.width, canvas.height);
  g.font = '11px system-ui, sans-serif';
  g.textBaseline = 'middle';
  trails.forEach((t, i) => {
    const base = amp + 10 + i * step;
    const pts = t.density.length;
    const xAt = (p) => left + (p / pts) * width;
    const focused = focus && t.group === focus;
    g.strokeStyle = focused ? '#d32f2f' : `hsl(${(i * 37) % 360},45%,35%)`;
    g.lineWidth = focused ? 2 : 1;
    g.fillStyle = '#fff';
    for (const [b, e] of t.lines) {
      g.beginPath();
      g.moveTo(xAt(b), base);
      for (let p = b; p < e; p++) g.lineTo(xAt(p), base - t.density[p] * amp);
      g.lineTo(xAt(e - 1), base);
      g.closePath();
      g.fill();
      g.stroke();
    }
    for (const p of t.rug) {
      g.beginPath();
      g.moveTo(xAt(p), base);
      g.lineTo(xAt(p), base - 5);
      g.stroke();
    }
    g.fillStyle = focused ? '#d32f2f' : '#333';
    g.textAlign = 'right';
    g.fillText(t.group, left - 6, base - 2);
  });
  g.lineWidth = 1;
  g.fillStyle = '#333';
  g.textAlign = 'center';
  const [lo, hi] = doc.range;
  for (let k = 0; k <= 4; k++) {
    g.fillText(formatValue(lo + (hi - lo) * k / 4, doc.unit), left + width * k / 4,
               canvas.height - 12);
  }
}
