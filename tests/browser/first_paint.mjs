// Prints how long the page at argv[2] takes, from navigation until its heat map and columns are
// drawn (window.trailmap.ready), in headless chromium: bench/page-bench's first-paint figure.
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
  await page.waitForFunction(() => window.trailmap && window.trailmap.ready && window.trailmap.heatmap && window.trailmap.columns, { timeout: 60000 });
  const ms = Date.now() - t0;
  const info = await page.evaluate(() => ({ columns: window.trailmap.heatmap.columns, hosts: window.trailmap.columns.hosts_total, errors: window.trailmap.errors }));
  console.log(`first paint ${ms} ms (heat map ${info.columns} columns, ${info.hosts} host columns)${info.errors.length ? ' errors: ' + info.errors.join('; ') : ''}`);
} finally {
  await browser.close();
}
