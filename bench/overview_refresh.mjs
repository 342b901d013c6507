// How often the Overview of a live run refreshes, seen from the page (issue 15: "the Overview of a 4,096-node live
// run refreshes every second"). Starts `gputwin run SCENARIO --serve [run options]`, opens the dashboard's Overview
// in Debian's headless Chromium (playwright-core) and records each time the page finishes drawing the Overview (the
// node grid is drawn last) with the simulated second its data was read at (the answer's `snapshot_s`, shown on the
// page as data-snapshot) and the cards' text. An update is a draw whose snapshot (or, from a binary without
// snapshot_s, cards) differs from the previous draw's; the intervals between updates are printed with their
// min/median/p90/max, for the whole run or the first --seconds S.
//
//   node bench/overview_refresh.mjs [--seconds S] [--binary B] SCENARIO [run options...]
//   node bench/overview_refresh.mjs scenarios/bench-1m.json --set /workload/synthetic/jobs=100000 --speed max
//
// The npm packages come from a built tree (build/ui/web/node_modules), Chromium from $CHROMIUM or /usr/bin/chromium.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(new URL('../build/ui/web/node_modules/x.js', import.meta.url).pathname);
const { chromium } = require('playwright-core');

const args = process.argv.slice(2);
let seconds = 120;
let binary = new URL('../build/gputwin', import.meta.url).pathname;
while (args[0]?.startsWith('--') && ['--seconds', '--binary'].includes(args[0])) {
  const [flag, value] = args.splice(0, 2);
  if (flag === '--seconds') seconds = Number(value);
  else binary = value;
}
const [scenario, ...runOptions] = args;
if (!scenario) {
  console.error('usage: node bench/overview_refresh.mjs [--seconds S] [--binary B] SCENARIO [run options...]');
  process.exit(2);
}

const work = mkdtempSync(path.join(os.tmpdir(), 'gputwin-overview-refresh-'));
const server = spawn(binary, ['run', scenario, '--serve', '--listen', '127.0.0.1:0', '--no-slurmrestd', '--out',
  path.join(work, 'out'), ...runOptions], { stdio: ['ignore', 'pipe', 'pipe'] });
let output = '';
let ended = null;
const onOutput = (chunk) => {
  output += chunk;
  if (!ended) ended = output.match(/simulation ended.*/)?.[0] ?? null;
};
server.stdout.on('data', onOutput);
server.stderr.on('data', onOutput);
const url = await new Promise((resolve, reject) => {
  const timer = setInterval(() => {
    const u = output.match(/on (http:\/\/[0-9.:]+)/);
    if (u) { clearInterval(timer); resolve(u[1]); }
  }, 50);
  server.on('exit', (code) => reject(new Error(`gputwin exited with ${code}: ${output}`)));
});

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
// Each draw of the node grid (the Overview's last step), with what the cards show then; times in ms since load.
await page.addInitScript(() => {
  window.overviewDraws = [];
  const watch = () => {
    const grid = document.getElementById('node-grid');
    if (!grid) return setTimeout(watch, 10);
    new MutationObserver(() => {
      const cards = document.getElementById('overview-cards');
      window.overviewDraws.push({ at: performance.now(), snapshot: cards.dataset.snapshot ?? null,
        cards: cards.innerText.replace(/\s+/g, ' ') });
    }).observe(grid, { childList: true });
  };
  document.addEventListener('DOMContentLoaded', watch);
});
// The server's CPU seconds (all its threads: the simulation's, the snapshot thread's, the HTTP workers'), from
// /proc, since the page was opened: on a shared machine the wall times depend on the others' load, this less.
const cpuSeconds = () => {
  try {
    const fields = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;  // utime, stime in clock ticks (USER_HZ 100)
  } catch { return NaN; }
};
const cpu0 = cpuSeconds();
const started = Date.now();
await page.goto(`${url}/`);
while (!ended && Date.now() - started < seconds * 1000 && server.exitCode === null) {
  await new Promise((resolve) => setTimeout(resolve, 200));
}
const draws = await page.evaluate(() => window.overviewDraws);
const cpu = cpuSeconds() - cpu0;
const live = ended ? null : await (await fetch(`${url}/api/live`)).json().catch(() => null);
await browser.close();
server.kill('SIGINT');
await new Promise((resolve) => { if (server.exitCode !== null) resolve(); else server.on('exit', resolve); });
rmSync(work, { recursive: true, force: true });

const updates = [];
for (const d of draws) {
  const last = updates[updates.length - 1];
  const key = d.snapshot ?? d.cards;
  if (!last || (last.snapshot ?? last.cards) !== key) updates.push(d);
}
const intervals = updates.slice(1).map((u, i) => (u.at - updates[i].at) / 1000);
const sorted = [...intervals].sort((a, b) => a - b);
const q = (p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))].toFixed(2) : '-');
console.log(`run: ${binary} run ${scenario} --serve ${runOptions.join(' ')}`);
console.log(ended ? ended : `(stopped after ${seconds} s at simulated second ${live?.now}; ${live?.copies ?? '?'} copies ` +
  `of the state in ${live?.snapshot_copy_wall_s?.toFixed(3)} s, ${live?.snapshots} of them written as snapshots in ` +
  `${live?.snapshot_wall_s?.toFixed(1)} s)`);
console.log(`server CPU ${cpu.toFixed(1)} s over ${((Date.now() - started) / 1000).toFixed(0)} s wall; load average ` +
  os.loadavg().map((l) => l.toFixed(1)).join(' '));
console.log(`${draws.length} Overview draws, ${updates.length} updates (new data); snapshots shown: ` +
  updates.map((u) => u.snapshot ?? '?').join(' '));
console.log(`interval between updates (s): n=${intervals.length} min ${q(0)} median ${q(0.5)} p90 ${q(0.9)} max ` +
  `${sorted.length ? sorted[sorted.length - 1].toFixed(2) : '-'}`);
console.log(`intervals: ${intervals.map((s) => s.toFixed(2)).join(' ')}`);
