// End-to-end test of the dashboard in Debian's headless Chromium, driven by playwright-core: `gputwin serve` on a
// fresh run of scenarios/quickstart.json; every tab loads, and the numbers on the pages (cards, tables, the
// Monitoring tab's all-nodes overlay, the Nodes tab's summary) equal what the results database says (asked with the
// sqlite3 command line, independently of the server's code). Screenshots go to $ARTIFACTS (default
// build/test-artifacts/dashboard).
//
//   node tests/ui/dashboard_e2e.mjs GPUTWIN RESULTS_DIR      (NODE_PATH must reach playwright-core)
import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import assert from 'node:assert/strict';
import path from 'node:path';

import { chromiumOrSkip, launchChromium, newChecks } from './e2e_support.mjs';

const [gputwin, results] = process.argv.slice(2);
const artifacts = process.env.ARTIFACTS || path.join(path.dirname(gputwin), 'test-artifacts', 'dashboard');
const chromiumPath = chromiumOrSkip();
mkdirSync(artifacts, { recursive: true });
const db = path.join(results, 'results.sqlite');
const sql = (query) => execFileSync('sqlite3', [db, query]).toString().trim();
const num = (query) => Number(sql(query));

// Start the server on a free port; its first line names the URL.
const server = spawn(gputwin, ['serve', results, '--listen', '127.0.0.1:0', '--no-slurmrestd'],
  { stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve, reject) => {
  let out = '';
  server.stdout.on('data', (chunk) => {
    out += chunk;
    const m = out.match(/on (http:\/\/[0-9.:]+)/);
    if (m) resolve(m[1]);
  });
  server.on('exit', (code) => reject(new Error(`gputwin serve exited with ${code}: ${out}`)));
  setTimeout(() => reject(new Error(`gputwin serve did not start: ${out}`)), 20000);
});

const browser = await launchChromium(chromiumPath);
const checks = newChecks();
const { check } = checks;

try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const end = num('SELECT CAST(value AS INTEGER) FROM metrics_info WHERE key = \'horizon_s\'');
  // A time in the middle of the busiest hour: jobs pending, running and finished at once.
  const t = num('SELECT time FROM cluster_metrics ORDER BY jobs_pending DESC, jobs_running DESC, time LIMIT 1');
  const open = async (tab) => {
    await page.goto(`${url}/?tab=${tab}&t=${t}`);
    await page.waitForFunction((want) => document.body.dataset.rendered === want || document.body.dataset.error, `${tab}@${t}`,
      { timeout: 15000 });
    const error = await page.evaluate(() => document.body.dataset.error);
    assert.equal(error, undefined, `the ${tab} tab failed: ${error}`);
    await page.screenshot({ path: path.join(artifacts, `${tab}.png`), fullPage: true });
  };
  const text = (testid) => page.locator(`[data-testid="${testid}"]`).innerText();
  const cardValue = async (id) => (await page.locator(`[data-testid="card-${id}"] .value`).innerText()).trim();

  const running = num(`SELECT count(*) FROM jobs WHERE start_time <= ${t} AND (end_time IS NULL OR end_time > ${t})`);
  const pending = num(`SELECT count(*) FROM jobs WHERE submit_time <= ${t} AND (start_time IS NULL OR start_time > ${t})
                         AND NOT (start_time IS NULL AND end_time IS NOT NULL AND end_time <= ${t})`);
  const submitted = num(`SELECT count(*) FROM jobs WHERE submit_time <= ${t}`);

  await check('overview: cards equal the database', async () => {
    await open('overview');
    assert.equal(await cardValue('total-gpus'), sql('SELECT sum(gpus) FROM nodes'));
    assert.equal(await cardValue('running-jobs'), String(running));
    assert.match(await text('card-running-jobs'), new RegExp(`${pending} pending`));
    const allocated = num(`SELECT IFNULL(sum(gpus), 0) FROM jobs WHERE start_time <= ${t} AND (end_time IS NULL OR end_time > ${t})`);
    assert.equal(await cardValue('allocated-gpus'), String(allocated));
    assert.equal(await page.locator('#node-grid .cell').count(), num('SELECT count(*) FROM nodes'));
    assert.equal(await page.locator('#partition-table tbody tr').count(), num('SELECT count(*) FROM partitions'));
    assert.ok(running > 0 && pending > 0, `the chosen time ${t} has ${running} running and ${pending} pending jobs`);
  });

  await check('jobs: counts, first page, sort and search equal the database', async () => {
    await open('jobs');
    assert.equal(await text('job-count-ALL'), String(submitted));
    assert.equal(await text('job-count-RUNNING'), String(running));
    assert.equal(await text('job-count-PENDING'), String(pending));
    const rows = page.locator('#job-table tbody tr');
    assert.equal(await rows.count(), Math.min(50, submitted));
    assert.equal(await rows.first().getAttribute('data-job'), sql(`SELECT min(job_id) FROM jobs WHERE submit_time <= ${t}`));
    // Sort by GPUs, descending (two clicks): the first row has the most GPUs.
    await page.click('th[data-sort="gpus"]');
    await page.waitForSelector('th.sorted-asc[data-sort="gpus"]');
    await page.click('th[data-sort="gpus"]');
    await page.waitForSelector('th.sorted-desc[data-sort="gpus"]');
    // The header is marked before the sorted page arrives: wait for the rows themselves (the old page's first row
    // was read here on a loaded machine), then say what is shown if they never come.
    const most = sql(`SELECT max(gpus) FROM jobs WHERE submit_time <= ${t}`);
    await page.waitForFunction((w) => document.querySelector('#job-table tbody tr td:nth-child(6)')?.innerText === w, most,
      { timeout: 15000 }).catch(() => {});
    const top = await page.locator('#job-table tbody tr').first().locator('td').nth(5).innerText();
    assert.equal(top, most);
    // Search one user: the ALL count is that user's submitted jobs.
    const user = sql(`SELECT user FROM jobs WHERE submit_time <= ${t} GROUP BY user ORDER BY count(*) DESC, user LIMIT 1`);
    await page.fill('[data-testid="job-search"]', user);
    const want = sql(`SELECT count(*) FROM jobs WHERE submit_time <= ${t} AND (user LIKE '%${user}%' OR name LIKE '%${user}%'
                      OR account LIKE '%${user}%' OR partition LIKE '%${user}%')`);
    await page.waitForFunction((w) => document.querySelector('[data-testid="job-count-ALL"]').innerText === w, want, { timeout: 15000 });
    // Pending tab.
    await page.fill('[data-testid="job-search"]', '');
    await page.click('[data-testid="job-filter-PENDING"]');
    // The tab is active and its page is shown (the search's page, with as many rows, may still be there at first).
    await page.waitForFunction((n) => document.querySelector('[data-testid="job-filter-PENDING"]').classList.contains('active') &&
      document.querySelectorAll('#job-table tbody tr').length === Math.min(50, n) &&
      [...document.querySelectorAll('#job-table tbody .state')].every((s) => s.innerText === 'PENDING'), pending, { timeout: 10000 })
      .catch(() => {});  // the assertion below says what is shown instead
    const states = await page.locator('#job-table tbody .state').allInnerTexts();
    assert.ok(states.every((s) => s === 'PENDING'), `pending tab shows ${[...new Set(states)]}`);
    await page.screenshot({ path: path.join(artifacts, 'jobs-pending.png'), fullPage: true });
  });

  await check('monitoring: the cluster and GPU charts draw', async () => {
    await open('monitoring');
    assert.equal(await page.locator('#cluster-chart canvas').count(), 1);
    assert.equal(await page.locator('#gpu-chart canvas').count(), 1);
    assert.equal(await page.locator('#node-select option').count(), num('SELECT count(*) FROM nodes'));
  });

  await check('monitoring: the all-nodes overlay draws the database\'s per-node GPU utilisation', async () => {
    // The page asks for the last hour before t (the 1h window); the answer is checked against the database: each
    // node's value at a time is the mean of its GPUs' util_pct then.
    const chart = page.locator('#overlay-chart');
    assert.equal(await chart.locator('canvas').count(), 1, 'the overlay is drawn');
    const info = await (await fetch(`${url}/api/info`)).json();
    const from = Math.max(info.begin, t - 3600);
    const step = num('SELECT CAST(value AS INTEGER) FROM metrics_info WHERE key = \'gpu_step_s\'');
    const o = await (await fetch(`${url}/api/series/nodes?from=${from}&to=${t}&points=400&lines=16`)).json();
    assert.equal(Number(await chart.getAttribute('data-points')), o.time.length);
    assert.equal(Number(await chart.getAttribute('data-lines')), o.lines.length);
    const last = Math.floor(t / step) * step;
    assert.equal(o.time.at(-1), last);
    const perNode = `SELECT node_index, avg(util_pct) AS u FROM gpu_metrics WHERE time = ${last} AND gpu >= 0 GROUP BY node_index`;
    const [mn, mean, mx, count] = sql(`SELECT min(u), avg(u), max(u), count(*) FROM (${perNode})`).split('|').map(Number);
    assert.ok(count > 0, `GPU samples at ${last}`);
    const near = (a, b, what) => assert.ok(Math.abs(a - b) <= 0.01, `${what}: page ${a}, database ${b}`);
    near(o.min.at(-1), mn, 'min');
    near(o.mean.at(-1), mean, 'mean');
    near(o.max.at(-1), mx, 'max');
    assert.equal(o.sampled.at(-1), count);
    // The 16 busiest nodes over the window (32 nodes: more than 16 lines), busiest first.
    const busiest = sql(`SELECT n.name FROM (SELECT node_index, avg(u) AS m FROM (SELECT node_index, time,
        avg(util_pct) AS u FROM gpu_metrics WHERE gpu >= 0 AND time >= ${from} AND time <= ${t} GROUP BY node_index, time)
        GROUP BY node_index ORDER BY m DESC, node_index LIMIT 16) b JOIN nodes n ON n.node_index = b.node_index`).split('\n');
    assert.equal(o.all_nodes, false);
    assert.deepEqual(o.lines.map((l) => l.node), busiest);
    await page.screenshot({ path: path.join(artifacts, 'monitoring-overlay.png'), fullPage: true });
  });

  await check('nodes: the summary cards equal the database', async () => {
    await open('nodes');
    const card = async (id) => (await page.locator(`[data-testid="node-card-${id}"] .value`).innerText()).trim();
    // Each node's state at t: its last node_events row at or before t (a row covers node_count nodes from node_index).
    const stateAt = `(SELECT e.state FROM node_events e WHERE e.node_index <= n.node_index AND
        n.node_index < e.node_index + e.node_count AND e.time <= ${t} ORDER BY e.time DESC, e.rowid DESC LIMIT 1)`;
    const drained = num(`SELECT count(*) FROM nodes n WHERE ${stateAt} IN ('DRAINING', 'DRAINED', 'DRAIN', 'FAILING', 'FAIL')`);
    const down = num(`SELECT count(*) FROM nodes n WHERE ${stateAt} IN ('DOWN', 'REBOOTING')`);
    const unknown = num(`SELECT count(*) FROM nodes n WHERE ${stateAt} IS NOT NULL AND ${stateAt} NOT IN ('IDLE', 'MIXED',
        'ALLOCATED', 'COMPLETING', 'POWERED_DOWN', 'POWERING_UP', 'POWERING_DOWN', 'DRAINING', 'DRAINED', 'DRAIN',
        'FAILING', 'FAIL', 'DOWN', 'REBOOTING')`);
    const step = num('SELECT CAST(value AS INTEGER) FROM metrics_info WHERE key = \'gpu_step_s\'');
    const sample = Math.floor(t / step) * step;
    const xidNodes = `SELECT DISTINCT node_index FROM gpu_metrics WHERE time = ${sample} AND gpu >= 0 AND xid != 0`;
    const failedOrXid = num(`SELECT count(*) FROM nodes n WHERE ${stateAt} IN ('DRAINING', 'DRAINED', 'DRAIN', 'FAILING',
        'FAIL', 'DOWN', 'REBOOTING') OR n.node_index IN (${xidNodes})`) + unknown;
    const total = num('SELECT count(*) FROM nodes');
    assert.equal(await card('total'), String(total));
    assert.equal(await card('failed'), String(drained + down + unknown));
    assert.match(await text('node-card-failed'), new RegExp(`${drained} drained, ${down} down`));
    assert.equal(await card('xid-errors'), String(num(`SELECT count(*) FROM (${xidNodes})`)));
    assert.equal(await card('healthy'), String(total - failedOrXid));
    assert.equal(await card('gpus'), sql('SELECT sum(gpus) FROM nodes'));
    await page.screenshot({ path: path.join(artifacts, 'nodes-cards.png'), fullPage: true });
  });

  await check('nodes: the table lists every node and a node opens its GPU charts', async () => {
    await open('nodes');
    assert.equal(await page.locator('#node-table tbody tr').count(), num('SELECT count(*) FROM nodes'));
    await page.locator('#node-table tbody tr').first().click();
    await page.waitForFunction(() => document.querySelectorAll('#node-detail canvas').length === 4, null, { timeout: 10000 });
    await page.screenshot({ path: path.join(artifacts, 'node-detail.png'), fullPage: true });
  });

  await check('events: the log shows the last lines up to the time, and downloads as text', async () => {
    await open('events');
    const log = await text('event-log');
    const lines = log.split('\n').filter(Boolean);
    assert.equal(lines.length, 200);
    const href = await page.locator('[data-testid="event-download"]').getAttribute('href');
    assert.match(href, /format=text/);
    const download = await (await fetch(url + href)).text();
    assert.equal(download.trim().split('\n').length, 200);
    // Oldest first, ending with the latest event at or before t (a submit, start, end or node change).
    const times = download.trim().split('\n').map((l) => Number(l.split('\t')[0]));
    assert.deepEqual(times, [...times].sort((a, b) => a - b));
    const latest = num(`SELECT max(x) FROM (SELECT max(submit_time) AS x FROM jobs WHERE submit_time <= ${t}
        UNION SELECT max(start_time) FROM jobs WHERE start_time <= ${t} UNION SELECT max(end_time) FROM jobs
        WHERE end_time <= ${t} UNION SELECT max(time) FROM node_events WHERE time <= ${t})`);
    assert.equal(times.at(-1), latest);
    const lastSubmit = sql(`SELECT job_id FROM jobs WHERE submit_time <= ${t} ORDER BY submit_time DESC, job_id DESC LIMIT 1`);
    assert.ok(download.includes(`\tjob\t${lastSubmit}\tsubmitted`), `job ${lastSubmit}'s submit is in the log`);
  });

  await check('gantt: every job run on its node, drawn at full detail, then as a density grid', async () => {
    await open('gantt');
    const canvas = page.locator('[data-testid="gantt-canvas"]');
    assert.equal(await canvas.getAttribute('data-exact'), 'true');  // 32 nodes and 680 jobs fit the canvas
    const runs = num('SELECT sum(nodes) FROM jobs WHERE start_time IS NOT NULL');
    assert.match(await text('gantt-info'), new RegExp(`^${runs.toLocaleString('en-US')} job runs in view`));
    const inked = await page.evaluate(() => {
      const c = document.getElementById('gantt');
      const d = c.getContext('2d').getImageData(70, 0, c.width - 70, c.height - 18).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
      return n / (d.length / 4);
    });
    assert.ok(inked > 0.2, `only ${(inked * 100).toFixed(1)}% of the chart is drawn`);
    await page.screenshot({ path: path.join(artifacts, 'gantt.png'), fullPage: true });
    // Fewer pixel rows than nodes: a grid whose cells hold busy fractions.
    const grid = await (await fetch(`${url}/api/gantt?width=100&height=8`)).json();
    assert.equal(grid.exact, false);
    assert.equal(grid.rows * grid.nodes_per_row >= 32, true);
    assert.equal(Buffer.from(grid.busy, 'base64').length, grid.rows * grid.cols);
    assert.equal(grid.jobs_in_view, runs);
  });

  await check('waits and cost: the wait CDF summary equals the database; no cost without cloud pricing', async () => {
    await open('analysis');
    const started = num(`SELECT count(*) FROM jobs WHERE start_time IS NOT NULL AND start_time <= ${t}`);
    const median = num(`SELECT start_time - submit_time AS w FROM jobs WHERE start_time IS NOT NULL AND start_time <= ${t}
        ORDER BY w LIMIT 1 OFFSET ${Math.ceil(started / 2) - 1}`);
    const card = async (label) => (await page.locator(`[data-testid="wait-${label}"] .value`).innerText()).trim();
    assert.equal(await card('Jobs started'), started.toLocaleString('en-US'));
    const [h, m, s] = (await card('Median')).split('-').at(-1).split(':').map(Number);
    const days = (await card('Median')).includes('-') ? Number((await card('Median')).split('-')[0]) : 0;
    assert.equal(days * 86400 + h * 3600 + m * 60 + s, median);
    assert.equal(await page.locator('#wait-chart canvas').count() > 0, true, 'the CDF is drawn');
    assert.match(await text('cost-chart'), /No costs recorded/);
    await page.screenshot({ path: path.join(artifacts, 'waits-cost.png'), fullPage: true });
  });

  await check('time slider: moving to the end shows the final states', async () => {
    await page.goto(`${url}/?tab=jobs&t=${end}`);
    await page.waitForFunction((want) => document.body.dataset.rendered === want, `jobs@${end}`);
    assert.equal(await text('job-count-COMPLETED'), sql('SELECT count(*) FROM jobs WHERE state = \'COMPLETED\''));
  });

  await check('no script errors on any page', async () => {
    assert.deepEqual(errors, []);
  });
} finally {
  await browser.close();
  server.kill('SIGTERM');
}
console.log(checks.failures ? `${checks.failures} check(s) failed` : 'all dashboard checks passed');
process.exit(checks.failures ? 1 : 0);
