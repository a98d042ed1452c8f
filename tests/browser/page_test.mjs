// Drives Debian's chromium (headless, over the DevTools protocol with puppeteer-core) through
// trailmap-query's page, as tests/page_browser_system_test.cc asks, and prints what the page
// showed as one JSON object on standard output; the C++ test compares it with the CLI's documents.
//
//   tests/browser/run.sh page_test.mjs '{"url": "...", "out": DIR, "cell": [row, col], "region": [r0, c0, r1, c1]}'
//
// Every wait is bounded (waitForFunction with a timeout); screenshots go to DIR.
import puppeteer from 'puppeteer-core';

const args = JSON.parse(process.argv[2]);
const timeout = 30000;
const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
const result = { console: [] };
// The page down to the end of its content (no empty space below), for docs/.
async function shot(page, name) {
  const bottom = await page.evaluate(() => document.querySelector('main').getBoundingClientRect().bottom);
  await page.screenshot({ path: `${args.out}/${name}`, clip: { x: 0, y: 0, width: 1640, height: Math.min(1000, Math.ceil(bottom) + 4) } });
}
// A new tab of the page at args.url with `params` set, once its heat map is drawn.
async function openTab(params) {
  const tab = await browser.newPage();
  await tab.setViewport({ width: 1640, height: 1000 });
  const u = new URL(args.url);
  for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
  await tab.goto(u.href, { timeout });
  await tab.waitForFunction(() => window.trailmap && window.trailmap.ready && window.trailmap.heatmap, { timeout });
  return tab;
}
// A mouse drag from point a to point b in `steps` moves.
async function drag(tab, a, b, steps) {
  await tab.mouse.move(a.x, a.y);
  await tab.mouse.down();
  await tab.mouse.move(b.x, b.y, { steps });
  await tab.mouse.up();
}
try {
  const page = await browser.newPage();
  page.on('console', (m) => { if (m.type() === 'error') result.console.push(m.text()); });
  page.on('pageerror', (e) => result.console.push(String(e)));
  await page.setViewport({ width: 1640, height: 1000 });
  const t0 = Date.now();
  await page.goto(args.url, { timeout });
  await page.waitForFunction(() => window.trailmap && window.trailmap.ready && window.trailmap.heatmap && window.trailmap.columns, { timeout });
  result.first_paint_ms = Date.now() - t0;
  // Live columns are re-shaded in the page: the page's shading of the server's counts must be the
  // server's, for rank and linear coloring, globally and per column.
  result.recolor_mismatches = await page.evaluate(async () => {
    let bad = 0;
    for (const extra of ['coloring=rank', 'coloring=linear', 'coloring=rank&per-column=1', 'coloring=linear&per-column=1']) {
      const d = window.trailmap.heatmap;
      const token = sessionStorage.getItem('trailmap-token');  // the page's, from #token=
      const headers = token ? { Authorization: `Bearer ${token}` } : {};
      const doc = await fetch(`/api/heatmap?metric=${d.metric}&from=${d.from}&to=${d.to}&${extra}`, { headers }).then((r) => r.json());
      const levels = window.trailmap.recolor(doc);
      doc.levels.forEach((row, r) => row.forEach((l, c) => { if (levels[r][c] !== l) bad++; }));
    }
    return bad;
  });
  await shot(page, 'page-heatmap.png');

  // A click on a known cell: the panel's numbers.
  const [row, col] = args.cell;
  const at = await page.evaluate((r, c) => window.trailmap.cellCenter(r, c), row, col);
  await page.mouse.click(at.x, at.y);
  await page.waitForFunction(() => window.trailmap.cell && document.getElementById('cell-count'), { timeout });
  result.cell = await page.evaluate(() => ({
    count: Number(document.getElementById('cell-count').textContent),
    hosts: [...document.querySelectorAll('#cell-hosts tr')].map((tr) => [tr.cells[0].textContent, Number(tr.cells[1].textContent)]),
    from: window.trailmap.cell.from,
    url: location.search,
  }));
  await shot(page, 'page-cell.png');

  // A drag over the planted slow band: the region's flame graph.
  const [r0, c0, r1, c1] = args.region;
  const a = await page.evaluate((r, c) => window.trailmap.cellCenter(r, c), r0, c0);
  const b = await page.evaluate((r, c) => window.trailmap.cellCenter(r, c), r1, c1);
  await drag(page, a, b, 8);
  await page.waitForFunction(() => window.trailmap.flame && window.trailmap.diff && document.getElementById('top-frames-list'), { timeout });
  result.region = await page.evaluate(() => ({
    top: [...document.querySelectorAll('#top-frames-list li')].map((li) => li.textContent),
    caption: document.getElementById('flame-cap').textContent,
    selection: window.trailmap.flame.region,
    url: location.search,
  }));
  await shot(page, 'page-region.png');
  // Search the region's graph: the share the page reports for the matching frames.
  await page.type('#search', 'compress_planted');
  await page.waitForFunction(() => document.getElementById('flame-info').textContent.startsWith('matched'), { timeout });
  result.search = await page.evaluate(() => document.getElementById('flame-info').textContent);
  await shot(page, 'page-search.png');
  await page.evaluate(() => { const s = document.getElementById('search'); s.value = ''; s.dispatchEvent(new Event('input')); });

  // Y zoom: a drag on the value axis over the region's rows; the server re-resamples that band.
  const rows = await page.evaluate(() => window.trailmap.heatmap.rows);
  const y0 = await page.evaluate((r) => window.trailmap.cellCenter(r, -1), r0);
  const y1 = await page.evaluate((r) => window.trailmap.cellCenter(r, -1), r1);
  await drag(page, y0, y1, 4);
  // Drawn once the document of the band has come: its first row starts at ymin.
  await page.waitForFunction(() => {
    const ymin = new URLSearchParams(location.search).get('ymin');
    const d = window.trailmap.heatmap;
    return ymin && window.trailmap.ready && d && d.row_bounds[0][0] === Number(ymin);
  }, { timeout });
  result.zoom = await page.evaluate(() => {
    const q = new URLSearchParams(location.search);
    return { ymin: q.get('ymin'), ymax: q.get('ymax'), counts: window.trailmap.heatmap.counts, row_bounds: window.trailmap.heatmap.row_bounds };
  });
  result.zoom.rows_before = rows;
  await shot(page, 'page-yzoom.png');
  // A double click on the axis zooms out again.
  await page.mouse.click(y0.x, y0.y, { clickCount: 2 });
  await page.waitForFunction(() => !new URLSearchParams(location.search).get('ymax') && window.trailmap.ready && window.trailmap.heatmap && window.trailmap.heatmap.row_bounds[0][0] === 0, { timeout });
  result.unzoomed_ymax = await page.evaluate(() => new URLSearchParams(location.search).get('ymax'));

  // Sort the columns by p99 (from another key, so the page really asks again).
  for (const key of ['name', 'p99']) {
    await page.evaluate(() => { window.trailmap.columns = null; });
    await page.select('#sort', key);
    await page.waitForFunction(() => window.trailmap.columns, { timeout });
  }
  result.columns = await page.evaluate(() => window.trailmap.columns.hosts.map((h) => h.host));
  const columns = await page.$('#columns');
  await columns.screenshot({ path: `${args.out}/page-columns.png` });

  // The outliers action: the list and the differential flame graph of them against the rest.
  await page.evaluate(() => { window.trailmap.outliers = null; window.trailmap.diff = null; });
  await page.click('#outliers');
  await page.waitForFunction(() => window.trailmap.outliers && window.trailmap.diff, { timeout });
  result.outliers = await page.evaluate(() => window.trailmap.outliers.outliers);
  await shot(page, 'page-outliers.png');

  // The sub-second tab (FlameScope's map of cpu.offsets) and a drag within it from cell
  // (column c0, row r0) to (c1, r1): the flame graph of the whole seconds of that range.
  if (args.subsecond) {
    await page.evaluate(() => { window.trailmap.subsecond = null; window.trailmap.flame = null; });
    await page.click('#tabs button[data-tab="subsecond"]');
    await page.waitForFunction(() => window.trailmap.subsecond, { timeout });
    const [c0, r0, c1, r1] = args.subsecond;
    const a = await page.evaluate((c, r) => window.trailmap.subsecondCellCenter(c, r), c0, r0);
    const b = await page.evaluate((c, r) => window.trailmap.subsecondCellCenter(c, r), c1, r1);
    await drag(page, a, b, 6);
    await page.waitForFunction(() => window.trailmap.flame && window.trailmap.flame.range && document.getElementById('top-frames-list'), { timeout });
    result.subsecond = await page.evaluate(() => ({
      counts: window.trailmap.subsecond.counts,
      range: new URLSearchParams(location.search).get('srange'),
      flame_value: window.trailmap.flame.value,
      caption: document.getElementById('flame-cap').textContent,
      top: [...document.querySelectorAll('#top-frames-list li')].map((li) => li.textContent),
    }));
    await shot(page, 'page-subsecond.png');
    // Back to the columns, as the steps below expect.
    await page.evaluate(() => { window.trailmap.columns = null; });
    await page.click('#tabs button[data-tab="columns"]');
    await page.waitForFunction(() => window.trailmap.columns, { timeout });
  }

  // The sub-second tab with the heat map's `where`: the map of the hosts it keeps.
  if (args.subsecond_where) {
    const tab = await openTab({ tab: 'subsecond', where: args.subsecond_where });
    await tab.waitForFunction(() => window.trailmap.subsecond, { timeout });
    result.subsecond_where = await tab.evaluate(() => ({
      counts: window.trailmap.subsecond.counts,
      samples: window.trailmap.subsecond.samples,
      caption: document.getElementById('subsecond-cap').textContent,
    }));
    await shot(tab, 'page-subsecond-where.png');
    await tab.close();
    await page.bringToFront();
  }

  // A pasted address restores the view: the region's URL, loaded afresh.
  const restored = await browser.newPage();
  await restored.setViewport({ width: 1640, height: 1000 });
  // A new tab has its own sessionStorage: the pasted address carries the token again.
  const pasted = new URL(result.region.url, args.url);
  if (args.token) pasted.hash = `token=${encodeURIComponent(args.token)}`;
  await restored.goto(pasted.href, { timeout });
  await restored.waitForFunction(() => window.trailmap && window.trailmap.ready && window.trailmap.flame, { timeout });
  result.restored_region = await restored.evaluate(() => window.trailmap.flame.region.region);
  await restored.close();
  await page.bringToFront();  // a background tab gets no animation frames, which waits poll on

  // Focus a host by clicking its column: the trails tab with that host drawn in red.
  await page.evaluate(() => { window.trailmap.trails = null; });
  const first = await page.evaluate(() => window.trailmap.columnCenter(0));
  await page.mouse.click(first.x, first.y);
  await page.waitForFunction(() => window.trailmap.trails && window.trailmap.ready, { timeout });
  result.focus = await page.evaluate(() => new URLSearchParams(location.search).get('hosts'));
  await shot(page, 'page-focus.png');
  const trails = await page.$('#trails');
  await trails.screenshot({ path: `${args.out}/page-trails.png` });
  result.errors = await page.evaluate(() => window.trailmap.errors);

  // Without a token: the API answers 401, the page prompts (dismissed here) and shows the error.
  if (args.token) {
    const bare = await browser.newPage();
    bare.on('dialog', (d) => d.dismiss());
    await bare.goto(args.url.replace(/#.*$/, ''), { timeout });
    await bare.waitForFunction(() => window.trailmap && window.trailmap.ready, { timeout });
    result.no_token_banners = await bare.evaluate(() => window.trailmap.errors);
    await bare.close();
    await page.bringToFront();
  }

  // Hue by host: the legend's 'only' and 'hide' buttons of one host.
  if (args.legend_host) {
    const hue = await openTab({ by: 'host' });
    await hue.waitForFunction(() => window.trailmap.heatmap.groups, { timeout });
    result.legend = {};
    for (const [label, mode] of [['only', 'isolate'], ['hide', 'exclude']]) {
      await hue.evaluate((host, label) => {
        const span = [...document.querySelectorAll('#legend span')].find((s) => s.textContent.startsWith(host));
        [...span.querySelectorAll('button')].find((b) => b.textContent === label).click();
      }, args.legend_host, label);
      await hue.waitForFunction((mode) => new URLSearchParams(location.search).get(mode) === '1' && window.trailmap.ready && window.trailmap.heatmap, { timeout }, mode);
      // The click wrote the URL and cleared `ready` at once, so ready again means drawn.
      result.legend[mode] = await hue.evaluate(() => ({ url: location.search, counts: window.trailmap.heatmap.counts, groups: window.trailmap.heatmap.groups }));
      await shot(hue, `page-legend-${mode}.png`);
    }
    await hue.close();
    await page.bringToFront();
  }

  // Live: the last minute, scrolling one column a second as the server's seconds complete.
  if (args.live) {
    const live = await openTab({ from: '-1m', to: 'now', live: '1' });
    const first = await live.evaluate(() => ({ from: window.trailmap.heatmap.from, to: window.trailmap.heatmap.to, step: window.trailmap.heatmap.step, columns: window.trailmap.heatmap.columns }));
    await live.waitForFunction((to) => window.trailmap.heatmap.to >= to + 2, { timeout: 15000 }, first.to);
    const later = await live.evaluate(() => ({ from: window.trailmap.heatmap.from, to: window.trailmap.heatmap.to, times: window.trailmap.heatmap.column_times.length, stream: window.trailmap.stream && window.trailmap.stream.readyState }));
    result.live = { first, later };
    await live.close();
    await page.bringToFront();
  }

  // A node with a shard that does not answer: the page says so in a banner naming it.
  if (args.missing_url) {
    const missing = await browser.newPage();
    await missing.setViewport({ width: 1640, height: 1000 });
    await missing.goto(args.missing_url, { timeout });
    await missing.waitForFunction(() => window.trailmap && window.trailmap.ready, { timeout });
    result.missing_banners = await missing.evaluate(() => [...document.querySelectorAll('.banner-missing')].map((b) => b.textContent));
    await shot(missing, 'page-missing-shard.png');
    await missing.close();
  }
} catch (e) {
  result.failure = String(e && e.stack || e);
} finally {
  await browser.close();
}
process.stdout.write(JSON.stringify(result) + '\n');
