// End-to-end test of a live run's dashboard in Debian's headless Chromium, driven by playwright-core:
// `gputwin run scenarios/quickstart.json --serve` at 600 simulated seconds per wall second. The page follows the
// simulation (the live badge's clock and the Overview move on by themselves), a drain clicked on the Nodes tab shows
// up in the live event feed (from the SSE stream) and in /api/nodes, an XID injected there reaches the feed, a scale
// without a cloud pool is refused on the page, pause holds the clock, a restart clicked then shows in the feed and
// /api/nodes (REBOOTING or DRAINING), the Costs tab draws the spend so far (with a cost model given in RUN_ARGS), and
// Ctrl-C (SIGINT) stops the run and writes its results. Screenshots go to $ARTIFACTS.
//
//   node tests/ui/live_e2e.mjs GPUTWIN SCENARIO OUT_DIR [RUN_ARGS...]     (NODE_PATH must reach playwright-core)
import { spawn } from 'node:child_process';
import { mkdirSync, existsSync, readFileSync, rmSync } from 'node:fs';
import assert from 'node:assert/strict';
import path from 'node:path';

import { chromiumOrSkip, launchChromium, newChecks } from './e2e_support.mjs';

const [gputwin, scenario, out, ...runArgs] = process.argv.slice(2);
const artifacts = process.env.ARTIFACTS || path.join(path.dirname(gputwin), 'test-artifacts', 'live');
const chromiumPath = chromiumOrSkip();
mkdirSync(artifacts, { recursive: true });
rmSync(out, { recursive: true, force: true });

const server = spawn(gputwin, ['run', scenario, ...runArgs, '--serve', '--out', out, '--listen', '127.0.0.1:0', '--no-slurmrestd',
  '--speed', '600', '--refresh-ms', '500'], { stdio: ['ignore', 'pipe', 'inherit'] });
let output = '';
const exited = new Promise((resolve) => server.on('exit', (code, signal) => resolve({ code, signal })));
const { url, tokenFile } = await new Promise((resolve, reject) => {
  server.stdout.on('data', (chunk) => {
    output += chunk;
    const u = output.match(/on (http:\/\/[0-9.:]+)/);
    const t = output.match(/control token in (\S+)/);
    if (u && t) resolve({ url: u[1], tokenFile: t[1] });
  });
  server.on('exit', (code) => reject(new Error(`gputwin run --serve exited with ${code}: ${output}`)));
  setTimeout(() => reject(new Error(`gputwin run --serve did not start: ${output}`)), 30000);
});
const token = readFileSync(tokenFile, 'utf8').trim();
const get = async (p) => (await fetch(`${url}${p}`)).json();

const browser = await launchChromium(chromiumPath);
const checks = newChecks();
const { check } = checks;

try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${url}/`);
  const badge = page.locator('[data-testid="live-badge"]');

  await check('the live badge shows the running simulation and its clock moves on', async () => {
    await page.waitForFunction(() => document.querySelector('[data-testid="live-badge"]')?.dataset.state === 'running',
      null, { timeout: 15000 });
    assert.match(await badge.innerText(), /^LIVE 600x$/);
    const a = Number(await badge.getAttribute('data-now'));
    await page.waitForTimeout(2500);
    const b = Number(await badge.getAttribute('data-now'));
    // 2.5 s at 600x: about 1,500 simulated seconds (the status event comes once a second).
    assert.ok(b - a >= 600, `the clock moved from ${a} to ${b} only`);
  });

  await check('the Overview follows the simulation (rendered at later and later times)', async () => {
    const first = await page.evaluate(() => document.body.dataset.rendered);
    await page.waitForFunction((was) => document.body.dataset.rendered && document.body.dataset.rendered !== was &&
      document.body.dataset.rendered.startsWith('overview@'), first, { timeout: 10000 });
    const later = await page.evaluate(() => document.body.dataset.rendered);
    assert.ok(Number(later.split('@')[1]) > Number(first.split('@')[1]), `${first} then ${later}`);
    const running = Number((await page.locator('[data-testid="card-running-jobs"] .value').innerText()).trim());
    assert.ok(Number.isInteger(running), 'the Running Jobs card shows a number');
    await page.screenshot({ path: path.join(artifacts, 'live-overview.png'), fullPage: true });
  });

  await check('a drain clicked on the Nodes tab shows in the event feed and in /api/nodes', async () => {
    await page.fill('[data-testid="live-token"]', token);
    await page.click('#tabs button[data-tab="nodes"]');
    await page.locator('[data-testid="drain-gpu005"]').click({ timeout: 15000 });
    const action = page.locator('[data-testid="live-feed"] li[data-kind="action"]', { hasText: 'gpu005 drain' });
    await action.first().waitFor({ timeout: 10000 });
    assert.match(await action.first().innerText(), /action gpu005 drain \(drained from the dashboard\)/);
    // The feed (SSE) can show the action before the POST's answer sets the message: wait for both.
    await page.waitForFunction(() => /node\/drain: done/.test(document.querySelector('[data-testid="live-message"]').innerText),
      null, { timeout: 10000 });
    const nodes = await get('/api/nodes?gpu=false');
    const gpu005 = nodes.nodes.find((n) => n.name === 'gpu005');
    assert.equal(gpu005.group, 'DRAIN', `gpu005 is ${gpu005.state}`);
    const node = page.locator('#node-table tr[data-node="gpu005"]');
    await page.waitForFunction(() => /DRAIN/.test(document.querySelector('#node-table tr[data-node="gpu005"]')?.innerText ?? ''),
      null, { timeout: 10000 });
    assert.match(await node.innerText(), /DRAIN/);
    await page.screenshot({ path: path.join(artifacts, 'live-nodes-drained.png'), fullPage: true });
  });

  await check('an XID injected from the Nodes tab strikes the node and shows in the event feed', async () => {
    await page.fill('[data-testid="live-xid"]', '79');
    await page.locator('[data-testid="inject-gpu010"]').click({ timeout: 15000 });
    await page.waitForFunction(() => /node\/inject: XID 79 on gpu010 GPU 0 \(reboot_node/.test(
      document.querySelector('[data-testid="live-message"]').innerText), null, { timeout: 10000 });
    const action = page.locator('[data-testid="live-feed"] li[data-kind="action"]', { hasText: 'gpu010 inject XID 79' });
    await action.first().waitFor({ timeout: 10000 });
    assert.match(await action.first().innerText(), /action gpu010 inject XID 79 on GPU 0/);
    await page.screenshot({ path: path.join(artifacts, 'live-nodes-injected.png'), fullPage: true });
  });

  await check('scaling a cluster without a cloud pool says so on the page', async () => {
    await page.click('[data-testid="scale-up"]');
    await page.waitForFunction(() => /scale: this scenario has no cloud pool/.test(
      document.querySelector('[data-testid="live-message"]').innerText), null, { timeout: 10000 });
  });

  await check('a wrong token is refused on the page, and nothing happens', async () => {
    await page.fill('[data-testid="live-token"]', 'not-the-token');
    await page.locator('[data-testid="drain-gpu006"]').click();
    await page.waitForFunction(() => /wrong token/.test(document.querySelector('[data-testid="live-message"]').innerText),
      null, { timeout: 10000 });
    const nodes = await get('/api/nodes?gpu=false');
    assert.notEqual(nodes.nodes.find((n) => n.name === 'gpu006').group, 'DRAIN');
    await page.fill('[data-testid="live-token"]', token);
  });

  await check('Pause holds the clock', async () => {
    await page.click('[data-testid="live-pause"]');
    await page.waitForFunction(() => document.querySelector('[data-testid="live-badge"]').dataset.state === 'paused',
      null, { timeout: 10000 });
    await page.waitForTimeout(1200);
    const a = (await get('/api/live')).now;
    await page.waitForTimeout(1500);
    const b = (await get('/api/live')).now;
    assert.equal(b, a);
    assert.equal(await badge.innerText(), 'PAUSED');
    await page.screenshot({ path: path.join(artifacts, 'live-paused.png'), fullPage: true });
  });

  await check('the Costs tab of a live run (paused) draws the spend so far, up to its clock', async () => {
    const now = (await get('/api/live')).now;
    await page.click('#tabs button[data-tab="analysis"]');
    await page.locator('#cost-chart canvas').first().waitFor({ timeout: 15000 });
    const scopes = await page.locator('[data-testid="cost-scope"] option').allInnerTexts();
    assert.ok(scopes.includes('cluster') && scopes.includes('idle'), `scopes on the page: ${scopes.join(', ')}`);
    const costs = await get('/api/costs?scope=cluster');
    assert.equal(costs.series.time.at(-1), now, 'the series ends at the run\'s clock');
    assert.ok(costs.series.total_usd.at(-1) > 0, 'something was spent');
    assert.ok(costs.series.time.length >= 3, `${costs.series.time.length} points`);
    await page.screenshot({ path: path.join(artifacts, 'live-costs.png'), fullPage: true });
  });

  await check('a restart clicked on the Nodes tab (paused) shows in the event feed and in /api/nodes', async () => {
    // Paused, the node stays as the restart left it: REBOOTING if it was idle, else DRAINING until its jobs end.
    await page.click('#tabs button[data-tab="nodes"]');
    await page.locator('[data-testid="restart-gpu012"]').click({ timeout: 15000 });
    await page.waitForFunction(() => /node\/restart: gpu012 /.test(document.querySelector('[data-testid="live-message"]').innerText),
      null, { timeout: 10000 });
    const message = await page.locator('[data-testid="live-message"]').innerText();
    const action = page.locator('[data-testid="live-feed"] li[data-kind="action"]', { hasText: 'gpu012 restart' });
    await action.first().waitFor({ timeout: 10000 });
    assert.match(await action.first().innerText(), /action gpu012 restart \(Reboot ASAP\)/);
    const want = /reboots now/.test(message) ? 'REBOOTING' : 'DRAINING';
    assert.match(message, want === 'REBOOTING' ? /reboots now/ : /drains, then reboots once its jobs end/);
    const change = page.locator('[data-testid="live-feed"] li[data-kind="node"]', { hasText: `gpu012 ${want}` });
    await change.first().waitFor({ timeout: 10000 });
    const gpu012 = (await get('/api/nodes?gpu=false')).nodes.find((n) => n.name === 'gpu012');
    assert.equal(gpu012.state, want);
    await page.waitForFunction((w) => (document.querySelector('#node-table tr[data-node="gpu012"]')?.innerText ?? '').includes(w),
      want, { timeout: 10000 });
    await page.screenshot({ path: path.join(artifacts, 'live-nodes-restarted.png'), fullPage: true });
  });

  assert.deepEqual(errors, [], `page errors: ${errors.join('; ')}`);
} catch (error) {
  checks.failures++;
  console.log(`FAIL ${error.message}`);
} finally {
  await browser.close();
}

// Ctrl-C: the run stops where it is and writes its results.
server.kill('SIGINT');
const { code } = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve({ code: 'timeout' }), 60000))]);
await check('SIGINT stops the run and writes its results', async () => {
  assert.equal(code, 0, output);
  assert.match(output, /stopped at simulated second \d+; results in/);
  assert.ok(existsSync(path.join(out, 'summary.json')) && existsSync(path.join(out, 'results.sqlite')));
});
if (code === 'timeout') server.kill('SIGKILL');
console.log(checks.failures === 0 ? 'all passed' : `${checks.failures} failed`);
process.exit(checks.failures === 0 ? 0 : 1);
