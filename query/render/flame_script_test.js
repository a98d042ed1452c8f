// Checks the flame graph SVG's script (zoom, reset, search) without a browser: a stub DOM built
// from the SVG's frames, the script run on it, clicks and searches simulated.
//   trailmap flame --folded seed.folded -o seed.svg && node query/render/flame_script_test.js seed.svg
// where seed.folded is seed 004's example (flame_test.cc's kSeedFolded). Exits non-zero on a
// failed check. ctest runs it (cli/CMakeLists.txt: flame_script_plain_test, _diff_test). The
// script itself is flame_script.js, embedded in the SVG at build time (flame_script.h).
const fs = require('fs');
const assert = require('assert');
const svg = fs.readFileSync(process.argv[2], 'utf8');
const js = svg.slice(svg.indexOf('<![CDATA[') + 9, svg.indexOf(']]>'));
function El(attrs, text) {
  return { attrs: Object.assign({}, attrs), textContent: text || '', style: {}, cls: new Set(),
    getAttribute(k) { return this.attrs[k]; }, setAttribute(k, v) { this.attrs[k] = String(v); },
    get classList() { const s = this.cls; return { add: c => s.add(c), remove: c => s.delete(c),
      toggle: (c, on) => on ? s.add(c) : s.delete(c) }; },
    addEventListener(ev, fn) { (this.handlers = this.handlers || {})[ev] = fn; } };
}
const gframes = [];
const re = /<g><title>(.*?)<\/title><rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="\d+" fill="([^"]+)"[^>]*\/><text x="[\d.]+" y="[\d.]+">(.*?)<\/text><\/g>/g;
let m;
while ((m = re.exec(svg))) {
  const rect = El({x: m[2], y: m[3], width: m[4], fill: m[5]}), title = El({}, m[1]), text = El({}, m[6]);
  const g = El({}); g.getElementsByTagName = t => [({rect, title, text})[t]]; g.closest = () => g;
  gframes.push(g);
}
const byId = { details: El({}), unzoom: El({}), search: El({}, 'Search'), matched: El({}), frames: El({}) };
byId.details.firstChild = { nodeValue: ' ' }; byId.matched.firstChild = { nodeValue: ' ' };
byId.frames.children = gframes;
byId.unzoom.cls.add('hide');
global.document = { getElementById: id => byId[id] };
global.window = { addEventListener() {} };
let promptAnswer = '';
global.prompt = () => promptAnswer; global.alert = x => console.log('ALERT', x);
eval(js + '; global.api = {init, zoom, unzoom, search, clearSearch, frames: () => frames};');
api.init();
const F = api.frames();
const show = () => F.map(f => `${f.name}:${f.g.style.display === 'none' ? 'hidden' : f.r.attrs.x + '+' + f.r.attrs.width + (f.g.cls.has('parent') ? '(parent)' : '') + ' "' + f.t.textContent + '"'}`).join('\n');
const fill = f => f.r.attrs.fill;
byId.frames.handlers.click({ target: F[2].g });  // click foo1
assert.deepStrictEqual(F.map(f => f.name), ['all', 'main', 'foo1', 'bar', 'foo2', 'bar']);
assert.strictEqual(F[2].r.attrs.width, '1180.00');                  // foo1 fills the width
assert.ok(F[0].g.cls.has('parent') && F[1].g.cls.has('parent'));    // its ancestors stay, pale
assert.ok(Math.abs(+F[3].r.attrs.width - 2.5 / 4 * 1180) < 0.05);    // bar scaled with it
assert.strictEqual(F[4].g.style.display, 'none');                   // foo2 and its bar hidden
assert.strictEqual(F[5].g.style.display, 'none');
assert.ok(!byId.unzoom.cls.has('hide'));
api.unzoom();
assert.strictEqual(F[2].r.attrs.width, (4 / 9 * 1180).toFixed(2));
assert.strictEqual(F[4].g.style.display, '');
assert.ok(byId.unzoom.cls.has('hide'));
promptAnswer = '^bar$';
byId.search.handlers.click();
assert.strictEqual(byId.matched.firstChild.nodeValue, 'Matched: 55.6%');  // 5 of 9
assert.strictEqual(F.filter(f => fill(f) === 'rgb(230,0,230)').length, 2);
byId.search.handlers.click();                                             // reset search
assert.strictEqual(byId.matched.firstChild.nodeValue, ' ');
assert.strictEqual(F.filter(f => fill(f) === 'rgb(230,0,230)').length, 0);
promptAnswer = 'foo|bar';
byId.search.handlers.click();
assert.strictEqual(byId.matched.firstChild.nodeValue, 'Matched: 77.8%');  // nested bar once
console.log('flame SVG script: 1 passed, 0 failed');
