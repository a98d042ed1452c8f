// A flame graph on a canvas, from the d3-flame-graph JSON /api/flame gives ({name, value,
// children}, and in a differential also baseline and delta). Canvas, not one DOM node per frame,
// so 100,000 frames stay smooth: only frames wider than half a pixel are drawn.
//
// Click a frame to zoom to it (its ancestors stay, full width), search() highlights frames whose
// name matches a regular expression (magenta) and reports their share, reset() zooms out. The
// tooltip shows the samples, and in a differential both counts: the selection's and the
// baseline's (scaled to the selection's total by the server, docs/region-flame.md).

const ROW = 17;

function hash(name) {
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
  return h;
}

function hotColor(name) {
  const h = hash(name);
  return `rgb(${205 + (h % 50)},${(h >> 8) % 180 + 40},${(h >> 16) % 55})`;
}

function diffColor(node) {
  const base = node.baseline || 0, value = node.value || 0;
  const delta = value - base;
  const scale = Math.min(1, Math.abs(delta) / Math.max(1, Math.max(value, base)));
  const fade = Math.round(255 - 200 * scale);
  if (Math.abs(delta) < 1e-9) return 'rgb(235,235,235)';
  return delta > 0 ? `rgb(255,${fade},${fade})` : `rgb(${fade},${fade},255)`;
}

export class FlameGraph {
  constructor(canvas, tip) {
    this.canvas = canvas;
    this.tip = tip;
    this.root = null;
    this.zoom = null;
    this.pattern = null;
    this.rects = [];
    canvas.addEventListener('click', (e) => {
      const hit = this.hit(e);
      if (hit) { this.zoom = hit.node; this.draw(); }
    });
    canvas.addEventListener('mousemove', (e) => this.hover(e));
    canvas.addEventListener('mouseleave', () => { this.tip.hidden = true; });
  }

  set(tree) {
    this.root = tree;
    this.zoom = tree;
    this.differential = !!tree && tree.baseline !== undefined;
    if (tree) {  // parents, for the zoom path
      const stack = [tree];
      while (stack.length) {
        const n = stack.pop();
        for (const c of n.children || []) { c.parent = n; stack.push(c); }
      }
    }
    this.draw();
  }

  reset() { this.zoom = this.root; this.draw(); }

  search(text) {
    try { this.pattern = text ? new RegExp(text) : null; } catch { this.pattern = null; }
    this.draw();
    if (!this.pattern || !this.root) return null;
    let matched = 0;  // samples under matching frames, not counting a match inside a match
    const walk = (n) => {
      if (this.pattern.test(n.name)) { matched += n.value; return; }
      for (const c of n.children || []) walk(c);
    };
    walk(this.root);
    return matched / Math.max(1, this.root.value);
  }

  draw() {
    const g = this.canvas.getContext('2d');
    const W = this.canvas.width;
    g.fillStyle = '#fff';
    g.fillRect(0, 0, W, this.canvas.height);
    this.rects = [];
    if (!this.root) {  // nothing to show: keep no empty space
      this.canvas.height = 4;
      return;
    }
    if (!this.root.value) {
      g.fillStyle = '#777';
      g.font = '12px system-ui, sans-serif';
      g.fillText(this.root ? 'no samples' : '', 10, 20);
      return;
    }
    // Depth needed, for the canvas height.
    let depth = 0;
    const measure = (n, d) => { depth = Math.max(depth, d); for (const c of n.children || []) measure(c, d + 1); };
    measure(this.zoom, 0);
    let ancestors = 0;
    for (let p = this.zoom.parent; p; p = p.parent) ancestors++;
    const height = Math.min(4000, (depth + ancestors + 1) * ROW + 4);
    if (this.canvas.height !== height) this.canvas.height = height;
    g.font = '11px system-ui, sans-serif';
    g.textBaseline = 'middle';
    const bottom = this.canvas.height - 2;
    const box = (node, x, w, level) => {
      const y = bottom - (level + 1) * ROW;
      const match = this.pattern && this.pattern.test(node.name);
      g.fillStyle = match ? 'rgb(230,0,230)' : this.differential ? diffColor(node) : hotColor(node.name);
      g.fillRect(x, y, Math.max(0.5, w - 0.5), ROW - 1);
      if (w > 30) {
        g.fillStyle = '#000';
        g.save();
        g.beginPath();
        g.rect(x, y, w - 2, ROW);
        g.clip();
        g.fillText(node.name, x + 3, y + ROW / 2);
        g.restore();
      }
      this.rects.push({ x, y, w, node });
    };
    // The zoomed frame's ancestors, full width, below it.
    const path = [];
    for (let p = this.zoom.parent; p; p = p.parent) path.unshift(p);
    path.forEach((n, i) => box(n, 0, W, i));
    const scale = W / this.zoom.value;
    const stack = [[this.zoom, 0, path.length]];
    while (stack.length) {
      const [n, x, level] = stack.pop();
      const w = n.value * scale;
      box(n, x, w, level);
      let cx = x;
      for (const c of n.children || []) {
        const cw = c.value * scale;
        if (cw >= 0.5) stack.push([c, cx, level + 1]);
        cx += cw;
      }
    }
  }

  hit(e) {
    const r = this.canvas.getBoundingClientRect();
    const x = (e.clientX - r.left) * this.canvas.width / r.width;
    const y = (e.clientY - r.top) * this.canvas.height / r.height;
    for (let i = this.rects.length - 1; i >= 0; i--) {
      const b = this.rects[i];
      if (x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + ROW) return b;
    }
    return null;
  }

  hover(e) {
    const hit = this.hit(e);
    if (!hit) { this.tip.hidden = true; return; }
    const n = hit.node, total = this.root.value;
    let text = `${n.name}\n${n.value} samples (${(100 * n.value / total).toFixed(2)}%)`;
    if (this.differential) {
      const b = n.baseline || 0;
      const pct = b ? ((n.value - b) / b * 100).toFixed(1) + '%' : 'new';
      text = `${n.name}\nselection: ${+n.value.toFixed(1)}\nbaseline (scaled): ${+b.toFixed(1)}\nchange: ${pct}`;
    }
    this.tip.textContent = text;
    this.tip.style.left = e.clientX + 12 + 'px';
    this.tip.style.top = e.clientY + 12 + 'px';
    this.tip.hidden = false;
  }

  // The frames with the most self samples: [name, self] largest first.
  topSelf(n = 8) {
    const self = new Map();
    const walk = (node) => {
      const kids = (node.children || []).reduce((s, c) => s + c.value, 0);
      if (node !== this.root) self.set(node.name, (self.get(node.name) || 0) + node.value - kids);
      for (const c of node.children || []) walk(c);
    };
    if (this.root) walk(this.root);
    return [...self.entries()].filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]).slice(0, n);
  }
}
