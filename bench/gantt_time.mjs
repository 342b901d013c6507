// Times the dashboard's Gantt tab of a served run in headless Chromium (Debian's): the first draw (node names and
// the view), then three redraws of the whole run. Usage: node bench/gantt_time.mjs http://127.0.0.1:8080
// (the npm packages of a built tree in build/ui/web/node_modules).
import { createRequire } from 'node:module';
const require = createRequire(new URL('../build/ui/web/node_modules/x.js', import.meta.url).pathname);
const { chromium } = require('playwright-core');
const url = process.argv[2];
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
const t0 = Date.now();
await page.goto(`${url}/?tab=gantt`);
await page.waitForFunction(() => document.body.dataset.rendered?.startsWith('gantt@'), null, { timeout: 120000 });
console.log('first draw (page load to drawn):', Date.now() - t0, 'ms; canvas says', await page.getAttribute('#gantt', 'data-draw-ms'), 'ms');
for (let i = 0; i < 3; i++) {
  const t1 = Date.now();
  await page.evaluate(() => { document.getElementById('gantt').dataset.drawMs = ''; document.getElementById('gantt-reset').click(); });
  await page.waitForFunction(() => document.getElementById('gantt').dataset.drawMs !== '', null, { timeout: 60000 });
  console.log('redraw whole run:', Date.now() - t1, 'ms; canvas says', await page.getAttribute('#gantt', 'data-draw-ms'), 'ms;', await page.innerText('#gantt-info'));
}

await browser.close();
