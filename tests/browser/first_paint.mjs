// Prints how long the page at argv[2] takes in headless chromium, from navigation until its heat
// map is drawn, and until the columns are too (window.trailmap.ready): bench/page-bench's figure.
import puppeteer from 'puppeteer-core';

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1640, height: 1000 });
  const t0 = Date.now();
  await page.goto(process.argv[2], { timeout: 60000 });
  // The heat map is drawn as soon as its document arrives (drawHeatmap runs before anything else
  // waits); the columns come from a second request.
  await page.waitForFunction(() => window.trailmap && (window.trailmap.heatmap || window.trailmap.errors.length), { timeout: 60000, polling: 20 });
  const heatmap = Date.now() - t0;
  await page.waitForFunction(() => window.trailmap.ready, { timeout: 60000, polling: 20 });
  const all = Date.now() - t0;
  const info = await page.evaluate(() => ({ columns: window.trailmap.heatmap && window.trailmap.heatmap.columns, hosts: window.trailmap.columns && window.trailmap.columns.hosts_total, errors: window.trailmap.errors }));
  console.log(`first paint: heat map ${heatmap} ms (${info.columns} columns); with the ${info.hosts} host columns ${all} ms${info.errors.length ? '; errors: ' + info.errors.join('; ') : ''}`);
} catch (e) {
  console.log(`first paint: failed: ${e.message}`);
} finally {
  await browser.close();
}
