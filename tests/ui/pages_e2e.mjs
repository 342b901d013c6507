// End-to-end test of the dashboard's compare and forecasts tabs in Debian's headless Chromium (playwright-core):
// - `gputwin serve RUN_A RUN_B`: the compare tab shows both runs' summary rows and mean waits as their databases have
//   them (asked with the sqlite3 command line), and draws the wait CDF and the utilisation and queue overlays;
// - `gputwin twin --serve` mirroring a live simulation (`gputwin run SCENARIO --serve`, whose slurmrestd-compatible
//   API stands in for the cluster): the page follows the twin's polls while it runs, and once it stops the forecasts
//   tab shows the twin's forecasts, scores and actions as its results.sqlite has them.
// Screenshots go to $ARTIFACTS.
//
//   node tests/ui/pages_e2e.mjs GPUTWIN TWIN_SCENARIO RUN_A RUN_B TWIN_OUT  (NODE_PATH must reach playwright-core)
//
// TWIN_SCENARIO should have jobs pending within its first simulated hour that start within three (600x, 15 s).
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import assert from 'node:assert/strict';
import path from 'node:path';

import { chromiumOrSkip, launchChromium, newChecks } from './e2e_support.mjs';

const [gputwin, scenario, runA, runB, twinOut] = process.argv.slice(2);
const artifacts = process.env.ARTIFACTS || path.join(path.dirname(gputwin), 'test-artifacts', 'pages');
const chromiumPath = chromiumOrSkip();
mkdirSync(artifacts, { recursive: true });
rmSync(twinOut, { recursive: true, force: true });
const sqlOf = (dir) => (query) => execFileSync('sqlite3', [path.join(dir, 'results.sqlite'), query]).toString().trim();

const children = [];
/** Starts gputwin with `args`; resolves with its output once `pattern` matches it (the match's groups). */
function start(args, pattern, env = {}) {
  const child = spawn(gputwin, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  children.push(child);
  child.output = '';
  child.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const matched = new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      child.output += chunk;
      const m = child.output.match(pattern);
      if (m) resolve(m);
    });
    child.on('exit', (code) => reject(new Error(`gputwin ${args[0]} exited with ${code}: ${child.output}`)));
    setTimeout(() => reject(new Error(`gputwin ${args[0]}: no ${pattern} in: ${child.output}`)), 60000);
  });
  return { child, matched };
}
const waitFor = (child, pattern, ms) => new Promise((resolve, reject) => {
  const timer = setInterval(() => { if (pattern.test(child.output)) { clearInterval(timer); resolve(); } }, 100);
  setTimeout(() => { clearInterval(timer); reject(new Error(`no ${pattern} in: ${child.output}`)); }, ms);
});

const browser = await launchChromium(chromiumPath);
const checks = newChecks();
const { check } = checks;
const errors = [];
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
page.on('pageerror', (e) => errors.push(String(e)));
const open = async (url, tab) => {
  await page.goto(`${url}/?tab=${tab}`);
  await page.waitForFunction((want) => (document.body.dataset.rendered || '').startsWith(want) || document.body.dataset.error,
    `${tab}@`, { timeout: 20000 });
  const error = await page.evaluate(() => document.body.dataset.error);
  assert.equal(error, undefined, `the ${tab} tab failed: ${error}`);
};
const cells = (selector) => page.locator(selector).allInnerTexts();

// As `gputwin compare` prints a number and a change (results/run_comparison.cpp, cli/compare.cpp).
const number = (v) => (Number.isInteger(v) ? String(v) : Math.abs(v) < 10 ? v.toFixed(3) : v.toFixed(1));

try {
  const serve = start(['serve', runA, runB, '--listen', '127.0.0.1:0', '--no-slurmrestd'], /on (http:\/\/[0-9.:]+)/);
  const compareUrl = (await serve.matched)[1];

  await check('compare: both runs summary rows and mean waits equal their databases', async () => {
    await open(compareUrl, 'compare');
    assert.equal(await page.locator('#tabs button[data-tab="compare"]').isVisible(), true);
    assert.equal(await page.locator('#tabs button[data-tab="forecasts"]').isVisible(), false);  // runs, not twins
    assert.equal(await page.locator('#compare-runs li').count(), 2);
    for (const [i, dir] of [runA, runB].entries()) {
      const sql = sqlOf(dir);
      for (const key of ['jobs', 'wait_mean_s', 'wait_p95_s', 'gpu_utilization', 'makespan_s']) {
        const want = number(Number(sql(`SELECT value FROM summary WHERE key = '${key}'`)));
        const got = await page.locator(`[data-testid="compare-summary"] tr[data-key="${key}"] td[data-run="${i}"]`).innerText();
        assert.equal(got, want, `run ${i + 1} ${key}`);
      }
      const accounts = sql('SELECT account || \'=\' || CAST(ROUND(AVG(wait_time)) AS INTEGER) FROM jobs WHERE wait_time IS NOT NULL GROUP BY account ORDER BY account').split('\n');
      for (const row of accounts) {
        const [account, mean] = row.split('=');
        const got = await page.locator(`[data-testid="compare-account"] tr[data-key="${account}"] td[data-run="${i}"]`).innerText();
        assert.equal(got, mean, `run ${i + 1} account ${account}`);
      }
    }
    // The change column of the mean wait, as gputwin compare prints it.
    const a = Number(sqlOf(runA)('SELECT value FROM summary WHERE key = \'wait_mean_s\''));
    const b = Number(sqlOf(runB)('SELECT value FROM summary WHERE key = \'wait_mean_s\''));
    const change = (await cells('[data-testid="compare-summary"] tr[data-key="wait_mean_s"] td')).at(-1);
    assert.equal(change, a === b ? '' : `${b >= a ? '+' : ''}${(((b - a) / a) * 100).toFixed(1)}%`);
  });

  await check('compare: the wait CDFs and the utilisation and queue overlays draw one line per run', async () => {
    for (const id of ['compare-waits', 'compare-util', 'compare-queue']) {
      assert.equal(await page.locator(`#${id} canvas`).count() > 0, true, `${id} drawn`);
      const labels = await cells(`#${id} .u-legend .u-series .u-label`);
      assert.equal(labels.length, 3, `${id}: x and two runs (${labels})`);
    }
    const median = await page.locator('[data-testid="compare-wait-1"] .value').innerText();
    const started = Number(sqlOf(runB)('SELECT count(*) FROM jobs WHERE start_time IS NOT NULL'));
    const p50 = Number(sqlOf(runB)(`SELECT start_time - submit_time AS w FROM jobs WHERE start_time IS NOT NULL ORDER BY w
        LIMIT 1 OFFSET ${Math.ceil(started / 2) - 1}`));
    const [h, m, s] = median.split('-').at(-1).split(':').map(Number);
    const days = median.includes('-') ? Number(median.split('-')[0]) : 0;
    assert.equal(days * 86400 + h * 3600 + m * 60 + s, p50);
    await page.screenshot({ path: path.join(artifacts, 'compare.png'), fullPage: true });
  });
  serve.child.kill('SIGTERM');

  // A live simulation whose slurmrestd-compatible API the twin polls.
  const sim = start(['run', scenario, '--serve', '--listen', '127.0.0.1:0', '--slurmrestd-listen', '127.0.0.1:0',
    '--speed', '600', '--refresh-ms', '200'], /slurmrestd-compatible API.* on (http:\/\/[0-9.:]+)/);
  const slurmrestd = (await sim.matched)[1];
  const twin = start(['twin', '--slurmrestd', slurmrestd, '--user', 'root', '--out', twinOut, '--interval', '0.5',
    '--polls', '30', '--history-days', '0', '--serve', '--listen', '127.0.0.1:0', '--no-slurmrestd'],
  /dashboard .* on (http:\/\/[0-9.:]+)/, { SLURM_JWT: 'unchecked' });
  const twinUrl = (await twin.matched)[1];

  await check('twin --serve: the page follows the twin\'s polls, without controls', async () => {
    await page.goto(`${twinUrl}/`);
    await page.waitForFunction(() => document.querySelector('[data-testid="live-badge"]')?.dataset.state === 'running',
      null, { timeout: 20000 });
    assert.equal(await page.locator('#tabs button[data-tab="forecasts"]').isVisible(), true);
    assert.equal(await page.locator('#live-pause').isVisible(), false);
    assert.equal(await page.locator('#live-drain').isVisible(), false);
    const a = Number(await page.locator('[data-testid="live-badge"]').getAttribute('data-now'));
    await page.waitForFunction((was) => Number(document.querySelector('[data-testid="live-badge"]').dataset.now) > was, a,
      { timeout: 15000 });
    const control = await fetch(`${twinUrl}/api/control/pause`, { method: 'POST', headers: { Authorization: 'Bearer x' } });
    assert.equal(control.status, 403);
    await page.screenshot({ path: path.join(artifacts, 'twin-live.png'), fullPage: true });
  });

  // Thirty polls whatever their pace (a count, not a --duration: a loaded machine fits fewer polls into a time).
  await waitFor(twin.child, /still serving/, 120000);
  const sql = sqlOf(twinOut);

  await check('twin forecasts: scores, per-job rows and actions equal the twin\'s database', async () => {
    await open(twinUrl, 'forecasts');
    const scored = Number(sql('SELECT count(*) FROM forecasts WHERE actual_start IS NOT NULL'));
    assert.ok(scored > 0, 'some forecast job started while the twin ran');
    const card = async (id) => (await page.locator(`[data-testid="forecast-card-${id}"] .value`).innerText()).trim();
    assert.equal(await card('forecasts-scored'), String(scored));
    const jobs = Number(sql('SELECT count(DISTINCT job_id) FROM forecasts'));
    const started = Number(sql('SELECT count(DISTINCT job_id) FROM forecasts WHERE actual_start IS NOT NULL'));
    assert.equal(await card('jobs-started'), `${started} of ${jobs}`);
    assert.equal(await page.locator('[data-testid="forecast-count-all"]').innerText(), String(jobs));
    // twin-score's every-lead row of gputwin: n and the mean absolute error.
    const row = await cells('[data-testid="forecast-score"] tr[data-lead="all"][data-forecaster="gputwin"] td');
    assert.equal(row[2], sql('SELECT count(*) FROM forecasts WHERE actual_start IS NOT NULL AND predicted_start IS NOT NULL'));
    assert.equal(row[3], sql(`SELECT CAST(ROUND(AVG(ABS(predicted_start - actual_start))) AS INTEGER) FROM forecasts
        WHERE actual_start IS NOT NULL AND predicted_start IS NOT NULL`));
    // The first job (lowest id): its forecasts and its last forecast's error against the actual start.
    const first = sql('SELECT min(job_id) FROM forecasts');
    const tr = page.locator(`[data-testid="forecast-jobs"] tr[data-job="${first}"]`);
    assert.equal((await tr.locator('td').nth(4).innerText()), sql(`SELECT count(*) FROM forecasts WHERE job_id = ${first}`));
    const want = sql(`SELECT IFNULL(predicted_start - actual_start, '') FROM forecasts WHERE job_id = ${first}
        ORDER BY made_at DESC, rowid DESC LIMIT 1`);
    assert.equal(await tr.locator('td').nth(11).getAttribute('data-error'), want);
    assert.equal(await page.locator('#forecast-chart canvas').count(), 1);
    const actions = sql('SELECT count(*) FROM actions');
    assert.match(await page.locator('[data-testid="action-info"]').innerText(), new RegExp(`^${actions} actions \\(dry-run\\)`));
    assert.equal(await page.locator('#twin-actions tbody tr').count(), Math.min(Number(actions), 500));
    await page.screenshot({ path: path.join(artifacts, 'forecasts.png'), fullPage: true });
  });

  await check('twin forecasts: the started filter shows the jobs that started, with their start', async () => {
    await page.click('[data-testid="forecast-filter-started"]');
    const started = Number(sql('SELECT count(DISTINCT job_id) FROM forecasts WHERE actual_start IS NOT NULL'));
    await page.waitForFunction((n) => document.querySelectorAll('#forecast-jobs tbody tr').length === Math.min(50, n), started);
    const starts = await cells('#forecast-jobs tbody tr td:nth-child(11)');
    assert.ok(starts.every((s) => s !== ''), 'every row has an actual start');
  });

  await check('no script errors on any page', async () => {
    assert.deepEqual(errors, []);
  });
} finally {
  await browser.close();
  for (const child of children) child.kill('SIGTERM');
}
console.log(checks.failures ? `${checks.failures} check(s) failed` : 'all compare and forecasts checks passed');
process.exit(checks.failures ? 1 : 0);
