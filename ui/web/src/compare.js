// The compare tab (`gputwin serve RUN1 RUN2 ...`; GET /api/compare, /api/compare/waits, /api/compare/series,
// ui/compare_api.hpp): the runs' summary rows side by side as `gputwin compare` prints them, the mean wait per account
// and partition, and overlays of their wait-time CDFs and of their queue and GPU allocation over time.
import uPlot from 'uplot';

const COLOURS = ['#2a7ab9', '#c0392b', '#27ae60', '#8e44ad', '#d35400', '#16a085', '#7f8c8d', '#2c3e50'];

/** A number as `gputwin compare` prints it: integers plain, small values with three decimals, others with one. */
export function compareNumber(v) {
  if (v === null || v === undefined) return '-';
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) < 10 ? v.toFixed(3) : v.toFixed(1);
}

/** The change from a to b as `gputwin compare` prints it: "+12.5%", "+3" when a is 0, '' when equal. */
export function compareChange(a, b) {
  if (a === null || b === null || a === b) return '';
  if (a === 0) return `${b - a >= 0 ? '+' : ''}${Number((b - a).toPrecision(4))}`;
  const p = ((b - a) / a) * 100;
  return `${p >= 0 ? '+' : ''}${p.toFixed(1)}%`;
}

function table(el, title, runs, rows, format) {
  const head = el('tr', {}, el('th', {}, title), ...runs.map((r) => el('th', {}, `${r.index + 1}. ${r.name}`)),
    ...runs.slice(1).map((r) => el('th', {}, `change 1→${r.index + 1}`)));
  const body = rows.map((row) => el('tr', { 'data-key': row.key },
    el('td', {}, row.label), ...row.values.map((v, i) => el('td', { 'data-run': i }, format(v))),
    ...row.values.slice(1).map((v) => el('td', {}, compareChange(row.values[0], v)))));
  return el('table', { 'data-testid': `compare-${title.split(' ')[0].toLowerCase()}` }, el('thead', {}, head), el('tbody', {}, ...body));
}

// uPlot.join wants strictly increasing x in each table: keep the last y of equal x values.
function increasing(xs, ys) {
  const x = [], y = [];
  for (let i = 0; i < xs.length; i++) {
    if (x.length && xs[i] <= x[x.length - 1]) { y[y.length - 1] = ys[i]; continue; }
    x.push(xs[i]); y.push(ys[i]);
  }
  return [x, y];
}

export async function renderCompare(ctx) {
  const { api, el, duration, chart, $ } = ctx;
  const c = await api('compare');
  const runs = c.runs;
  $('compare-runs').replaceChildren(...runs.map((r) => el('li', { 'data-run': r.index },
    el('i', { class: 'swatch', style: `background:${COLOURS[r.index % COLOURS.length]}` }),
    ` ${r.index + 1}. ${r.name}: ${r.kind} ${r.scenario} (${r.policy}, seed ${r.seed}), ${r.jobs} jobs, ${r.nodes} nodes`)));
  const seconds = (v) => (v === null ? '-' : String(Math.round(v)));
  $('compare-tables').replaceChildren(
    table(el, 'summary', runs, c.summary, compareNumber),
    el('h2', {}, 'Mean wait by account (s)'), table(el, 'account', runs, c.wait_by_account, seconds),
    el('h2', {}, 'Mean wait by partition (s)'), table(el, 'partition', runs, c.wait_by_partition, seconds));

  // Wait-time CDFs on a log axis from 1 s (a zero wait is drawn at 1 s), one line per run.
  const w = await api('compare/waits', { points: 400 });
  const ROUND = [1, 10, 60, 600, 3600, 21600, 86400, 604800, 2592000];
  const wait = (x) => duration(Math.round(10 ** x));
  const cdfs = w.runs.filter((r) => r.jobs > 0);
  if (!cdfs.length) {
    $('compare-waits').textContent = 'No job started in any run.';
  } else {
    const joined = uPlot.join(cdfs.map((r) => increasing(r.cdf.wait.map((v) => Math.log10(Math.max(v, 1))), r.cdf.fraction)));
    chart('compare-waits', $('compare-waits'), {
      series: [{ label: 'wait', value: (u, v) => (v === null ? '' : wait(v)) },
        ...cdfs.map((r) => ({ label: `${r.index + 1}. ${r.name} (p50 ${duration(r.p50)}, p95 ${duration(r.p95)})`,
          stroke: COLOURS[r.index % COLOURS.length], spanGaps: true,
          value: (u, v) => (v === null ? '' : `${(v * 100).toFixed(1)}%`) }))],
      scales: { x: { time: false }, y: { range: [0, 1] } },
      axes: [{ splits: (u, i, min, max) => ROUND.map(Math.log10).filter((v) => v >= min && v <= max), values: (u, ticks) => ticks.map(wait) }, {}],
    }, joined);
  }
  $('compare-wait-cards').replaceChildren(...w.runs.map((r) => el('div', { class: 'card', 'data-testid': `compare-wait-${r.index}` },
    el('div', { class: 'label' }, `${r.index + 1}. ${r.name}`), el('div', { class: 'value' }, duration(r.p50)),
    el('div', { class: 'sub' }, `median wait of ${r.jobs} jobs; p95 ${duration(r.p95)}`))));

  // Queue length and GPU allocation over time since each run's start, one line per run.
  const s = await api('compare/series', { points: 600 });
  const overlay = (name, target, field, label, range) => {
    const withData = s.runs.filter((r) => r.time.length > 0);
    if (!withData.length) { target.textContent = 'No cluster series stored.'; return; }
    chart(name, target, {
      series: [{ label: 'since start', value: (u, v) => (v === null ? '' : duration(Math.round(v))) },
        ...withData.map((r) => ({ label: `${r.index + 1}. ${r.name} ${label}`, stroke: COLOURS[r.index % COLOURS.length], spanGaps: true }))],
      scales: { x: { time: false }, ...(range ? { y: { range } } : {}) },
      axes: [{ space: 90, values: (u, ticks) => ticks.map((v) => duration(Math.round(v))) }, {}],
    }, uPlot.join(withData.map((r) => increasing(r.time.map((t) => t - r.from), r[field]))));
  };
  overlay('compare-util', $('compare-util'), 'gpu_util_pct', 'GPUs allocated %', [0, 100]);
  overlay('compare-queue', $('compare-queue'), 'pending', 'pending jobs');
}
