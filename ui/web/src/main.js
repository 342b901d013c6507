// gputwin's dashboard: tabs over the JSON API of `gputwin serve` (see ui/dashboard_api.hpp). Every view reads the
// state at the time slider's position.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './app.css';
import { renderCompare } from './compare.js';
import { renderForecasts } from './forecasts.js';
import { nodeTools } from './live_actions.js';

const $ = (id) => document.getElementById(id);
const state = { info: null, t: 0, tab: 'overview', jobs: { filter: 'all', sort: 'job_id', order: 'asc', offset: 0, limit: 50, search: '' },
  nodeFilter: 'all', window: 3600, node: null, charts: {} };
const GROUPS = ['IDLE', 'MIXED', 'ALLOCATED', 'DRAIN', 'DOWN', 'UNKNOWN'];

async function api(path, params = {}) {
  const query = new URLSearchParams(params).toString();
  const response = await fetch(`/api/${path}${query ? '?' + query : ''}`);
  const body = await response.json();
  if (!response.ok) throw Object.assign(new Error(body.error || response.statusText), { status: response.status });
  return body;
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(c ?? ''));
  return e;
}

export function duration(s) {
  if (s === null || s === undefined || s < 0) return '';
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  const hms = `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(sec).padStart(2, '0')}`;
  return d > 0 ? `${d}-${hms}` : hms;
}

function clockText(t) {
  const epoch = state.info?.epoch_unix || 0;
  const wall = epoch > 0 ? ` (${new Date((epoch + t) * 1000).toISOString().replace('T', ' ').slice(0, 19)} UTC)` : '';
  return `t = ${duration(t)}${wall}`;
}

const pct = (v) => (v === null || v === undefined ? 'n/a' : `${v.toFixed(1)}%`);

// ---- Overview ------------------------------------------------------------------------------------------------------

async function renderOverview() {
  const o = await api('overview', { t: state.t });
  const cards = [
    ['Total GPUs', o.total_gpus, `${o.total_nodes} nodes`],
    ['Allocated GPUs', o.allocated_gpus, o.total_gpus ? `${((100 * o.allocated_gpus) / o.total_gpus).toFixed(1)}%` : ''],
    ['GPU Util', pct(o.gpu_util_pct), 'mean over all GPUs'],
    ['GPU Memory', pct(o.gpu_mem_pct), 'framebuffer used'],
    ['Running Jobs', o.running_jobs, `${o.pending_jobs} pending`],
    ['Idle Nodes', o.idle_nodes, `of ${o.total_nodes}`],
  ];
  $('overview-cards').replaceChildren(...cards.map(([label, value, sub]) =>
    el('div', { class: 'card', 'data-testid': `card-${label.toLowerCase().replace(/ /g, '-')}` },
      el('div', { class: 'label' }, label), el('div', { class: 'value' }, String(value)), el('div', { class: 'sub' }, sub))));
  $('overview-cards').dataset.snapshot = String(o.snapshot_s);  // the simulated second the run was read at
  $('grid-legend').replaceChildren(...GROUPS.map((g) =>
    el('span', { 'data-testid': `group-${g}` }, el('i', { class: `cell g-${g}` }), ` ${g} ${o.node_groups[g]}`)));
  const nodes = await api('nodes', { t: state.t });
  $('node-grid').replaceChildren(...nodes.nodes.map((n) =>
    el('div', { class: `cell g-${n.group}`, title: `${n.name}: ${n.state}${n.gpu_util_pct !== null ? `, GPU ${n.gpu_util_pct.toFixed(0)}%` : ''}` })));
  $('partition-table').tBodies[0].replaceChildren(...o.partitions.map((p) => el('tr', {},
    el('td', {}, p.name + (p.default ? '*' : '')), el('td', {}, p.nodes), el('td', {}, p.gpu_type),
    el('td', {}, `${p.avail_nodes}/${p.total_nodes}`), el('td', {}, p.default_time === null ? 'NONE' : duration(p.default_time)),
    el('td', {}, p.max_time === null ? 'UNLIMITED' : duration(p.max_time)), el('td', {}, p.state))));
}

// ---- Jobs ----------------------------------------------------------------------------------------------------------

const JOB_COLUMNS = [
  ['job_id', 'Job ID'], ['name', 'Name'], ['user', 'User'], ['partition', 'Partition'], ['nodes', 'Nodes'],
  ['gpus', 'GPUs'], ['run_time', 'Run Time'], ['time_limit', 'Time Limit'], ['state', 'State'], ['priority', 'Priority'],
  [null, 'Reason'],
];

function renderJobHeader() {
  const row = $('job-table').tHead.rows[0];
  row.replaceChildren(...JOB_COLUMNS.map(([key, label]) => {
    const sorted = key === state.jobs.sort ? ` sorted-${state.jobs.order}` : '';
    return el('th', { class: key ? `sortable${sorted}` : '', 'data-sort': key || '', onclick: () => {
      if (!key) return;
      if (state.jobs.sort === key) state.jobs.order = state.jobs.order === 'asc' ? 'desc' : 'asc';
      else Object.assign(state.jobs, { sort: key, order: 'asc' });
      state.jobs.offset = 0;
      renderJobs();
    } }, label);
  }));
}

let jobsRequests = 0;  // renderJobs calls so far: an answer that comes after a newer call's is not shown

async function renderJobs() {
  renderJobHeader();
  const q = state.jobs;
  const request = ++jobsRequests;
  const page = await api('jobs', { t: state.t, filter: q.filter, sort: q.sort, order: q.order, offset: q.offset, limit: q.limit, search: q.search });
  if (request !== jobsRequests) return;  // a newer tab, search, sort, page or time was asked meanwhile
  $('job-filters').replaceChildren(...['ALL', 'RUNNING', 'PENDING', 'COMPLETED', 'FAILED', 'UNKNOWN'].map((name) =>
    el('button', { class: q.filter === name.toLowerCase() ? 'active' : '', 'data-testid': `job-filter-${name}`,
      onclick: () => { Object.assign(q, { filter: name.toLowerCase(), offset: 0 }); renderJobs(); } },
    `${name} `, el('b', { 'data-testid': `job-count-${name}` }, String(page.counts[name])))));
  $('job-table').tBodies[0].replaceChildren(...page.jobs.map((j) => el('tr', { 'data-job': j.job_id },
    el('td', {}, String(j.job_id)), el('td', {}, j.name), el('td', {}, j.user), el('td', {}, j.partition),
    el('td', {}, String(j.nodes)), el('td', {}, String(j.gpus)), el('td', {}, duration(j.run_time)),
    el('td', {}, duration(j.time_limit)), el('td', {}, el('span', { class: `state ${j.state}` }, j.state)),
    el('td', {}, String(j.priority)), el('td', {}, j.reason))));
  const pages = Math.max(1, Math.ceil(page.total / q.limit));
  const current = Math.floor(q.offset / q.limit) + 1;
  $('job-pager').replaceChildren(
    el('button', { 'data-testid': 'job-prev', onclick: () => { q.offset = Math.max(0, q.offset - q.limit); renderJobs(); } }, '‹'),
    el('span', { 'data-testid': 'job-page' }, `page ${current} of ${pages} (${page.total} jobs)`),
    el('button', { 'data-testid': 'job-next', onclick: () => { if (q.offset + q.limit < page.total) { q.offset += q.limit; renderJobs(); } } }, '›'));
}

// ---- Monitoring ----------------------------------------------------------------------------------------------------

const WINDOWS = [['5m', 300], ['15m', 900], ['1h', 3600], ['6h', 21600], ['1d', 86400], ['all', 0]];

function chart(name, target, opts, data) {
  if (state.charts[name]) state.charts[name].destroy();
  const width = Math.max(400, target.clientWidth - 12 || 900);
  state.charts[name] = new uPlot({ width, height: 260, ...opts }, data, target);
}

async function renderMonitoring() {
  $('windows').replaceChildren(...WINDOWS.map(([label, s]) => el('button', { class: state.window === s ? 'active' : '',
    'data-testid': `window-${label}`, onclick: () => { state.window = s; renderMonitoring(); } }, label)));
  const from = state.window > 0 ? Math.max(state.info.begin, state.t - state.window) : state.info.begin;
  const s = await api('series/cluster', { from, to: state.t, points: 800 });
  chart('cluster', $('cluster-chart'), {
    series: [{}, { label: 'Pending jobs', stroke: '#d4a017' }, { label: 'Running jobs', stroke: '#2a7ab9' },
      { label: 'GPUs allocated %', stroke: '#c0392b', scale: '%' }],
    axes: [{}, {}, { side: 1, scale: '%' }], scales: { x: { time: false }, '%': { range: [0, 100] } },
  }, [s.time, s.pending, s.running, s.gpu_util_pct]);
  await renderOverlay(from);
  const nodes = (await api('nodes', { t: state.t, gpu: false })).nodes;
  if (state.node === null && nodes.length) state.node = nodes[0].name;
  const select = $('node-select');
  if (select.options.length !== nodes.length) {
    select.replaceChildren(...nodes.map((n) => el('option', { value: n.name }, n.name)));
  }
  select.value = state.node;
  await renderGpuChart($('gpu-chart'), state.node, from, 'util', 'GPU util %');
}

// Every node's GPU utilisation (mean over its GPUs): the band from the least to the most busy node and the mean
// across nodes, with each node's own line when there are few, else the busiest (GET /api/series/nodes).
async function renderOverlay(from) {
  const o = await api('series/nodes', { from, to: state.t, points: 400, lines: 16 });
  const target = $('overlay-chart');
  target.dataset.points = String(o.time.length);
  target.dataset.lines = String(o.lines.length);
  $('overlay-info').textContent = o.nodes_sampled === 0 ? ''
    : `(${o.nodes_sampled} nodes: min-max band, mean, and ${o.all_nodes ? 'every node' : `the ${o.lines.length} busiest`})`;
  if (!o.time.length || o.nodes_sampled === 0) {
    if (state.charts.overlay) { state.charts.overlay.destroy(); delete state.charts.overlay; }
    target.textContent = 'No GPU metrics stored for this window.';
    return;
  }
  target.textContent = '';
  const palette = ['#2a7ab9', '#c0392b', '#27ae60', '#8e44ad', '#d35400', '#16a085', '#7f8c8d', '#2c3e50'];
  chart('overlay', target, {
    series: [{}, { label: 'min', stroke: 'rgba(42,122,185,0.35)' }, { label: 'max', stroke: 'rgba(42,122,185,0.35)' },
      { label: 'mean', stroke: '#1b2631', width: 2 },
      ...o.lines.map((l, i) => ({ label: l.node, stroke: palette[i % palette.length], width: 1, show: true }))],
    bands: [{ series: [2, 1], fill: 'rgba(42,122,185,0.12)' }],
    scales: { x: { time: false }, y: { range: [0, 100] } },
  }, [o.time, o.min, o.max, o.mean, ...o.lines.map((l) => l.util)]);
}

async function renderGpuChart(target, node, from, field, label) {
  $('gpu-chart-node').textContent = node;
  const g = await api(`nodes/${encodeURIComponent(node)}/gpus`, { from, to: state.t, points: 400 });
  const gpus = Object.keys(g.gpus);
  if (!gpus.length) { target.textContent = 'No GPU metrics stored for this run.'; return; }
  const colors = ['#2a7ab9', '#c0392b', '#27ae60', '#8e44ad', '#d35400', '#16a085', '#7f8c8d', '#2c3e50'];
  chart(`gpu-${target.id}`, target, {
    series: [{}, ...gpus.map((k, i) => ({ label: `GPU ${k} ${label}`, stroke: colors[i % colors.length] }))],
    scales: { x: { time: false } },
  }, [g.gpus[gpus[0]].time, ...gpus.map((k) => g.gpus[k][field])]);
}

// ---- Nodes ---------------------------------------------------------------------------------------------------------

async function renderNodes() {
  const r = await api('nodes', { t: state.t, filter: state.nodeFilter });
  const m = r.summary;
  const cards = [
    ['Total', m.nodes, 'nodes'],
    ['Healthy', m.healthy, 'in service, no XID'],
    ['Failed', m.failed, `${m.drain} drained, ${m.down} down`],
    ['XID Errors', m.xid, 'nodes with an XID in the sample'],
    ['GPUs', m.gpus, `${m.healthy_gpus} on healthy nodes`],
  ];
  $('node-cards').replaceChildren(...cards.map(([label, value, sub]) =>
    el('div', { class: 'card', 'data-testid': `node-card-${label.toLowerCase().replace(/ /g, '-')}` },
      el('div', { class: 'label' }, label), el('div', { class: 'value' }, String(value)), el('div', { class: 'sub' }, sub))));
  $('node-filters').replaceChildren(...[['all', 'All'], ['failed', 'Failed'], ['xid', 'XID Errors'], ['healthy', 'Healthy']].map(([key, label]) =>
    el('button', { class: state.nodeFilter === key ? 'active' : '', 'data-testid': `node-filter-${key}`,
      onclick: () => { state.nodeFilter = key; renderNodes(); } }, `${label} `, el('b', {}, String(r.counts[key])))));
  $('node-table').tBodies[0].replaceChildren(...r.nodes.map((n) => el('tr', { class: 'clickable', 'data-node': n.name,
    onclick: () => renderNodeDetail(n.name) },
    el('td', {}, n.name), el('td', {}, el('span', { class: `cell-inline g-${n.group}` }), ` ${n.state}`), el('td', {}, String(n.gpus)),
    el('td', {}, n.gpu_type), el('td', {}, pct(n.gpu_util_pct)), el('td', {}, pct(n.gpu_mem_pct)), el('td', {}, n.xid ? String(n.xid) : ''),
    ...(liveControls() ? [el('td', {},
      el('button', { 'data-testid': `drain-${n.name}`, onclick: (e) => { e.stopPropagation(); nodeAction('drain', n.name); } }, 'Drain'),
      el('button', { 'data-testid': `resume-${n.name}`, onclick: (e) => { e.stopPropagation(); nodeAction('resume', n.name); } }, 'Resume'),
      el('button', { 'data-testid': `restart-${n.name}`, title: 'Reboot when idle (scontrol reboot ASAP nextstate=RESUME)',
        onclick: (e) => { e.stopPropagation(); nodeAction('restart', n.name); } }, 'Restart'),
      ...liveTools.rowButtons(n.name))] : []))));
  $('node-actions-head').hidden = !liveControls();
  liveTools.toolbar($('node-table'), liveControls());
}

async function renderNodeDetail(name) {
  const target = $('node-detail');
  target.replaceChildren(el('h2', {}, `${name}: per GPU (DCGM_FI_DEV_GPU_UTIL, FB_USED, POWER_USAGE, GPU_TEMP)`));
  const from = Math.max(state.info.begin, state.t - 3600);
  for (const [field, label] of [['util', 'util %'], ['fb_used_mib', 'FB used MiB'], ['power_w', 'power W'], ['temp_c', 'temp °C']]) {
    const box = el('div', { class: 'chart', id: `detail-${field}` });
    target.append(box);
    await renderGpuChart(box, name, from, field, label);
  }
}

// ---- Events --------------------------------------------------------------------------------------------------------

async function renderEvents() {
  const params = { t: state.t, limit: $('event-limit').value, kind: $('event-kind').value };
  const r = await api('events', params);
  $('event-log').textContent = r.events.map((e) => `${duration(e.time).padStart(11)}  ${e.kind.padEnd(10)} ${e.subject.padEnd(10)} ${e.text}`).join('\n');
  $('event-download').href = `/api/events?${new URLSearchParams({ ...params, format: 'text' })}`;
}

// ---- Waits and cost ------------------------------------------------------------------------------------------------

async function renderAnalysis() {
  const w = await api('waits', { t: state.t, points: 400 });
  const cards = [['Jobs started', w.jobs.toLocaleString()], ['Mean wait', duration(Math.round(w.mean))],
    ['Median', duration(w.p50)], ['P90', duration(w.p90)], ['P95', duration(w.p95)], ['Max', duration(w.max)]];
  $('wait-cards').replaceChildren(...cards.map(([label, value]) => el('div', { class: 'card', 'data-testid': `wait-${label}` },
    el('div', { class: 'label' }, label), el('div', { class: 'value' }, value))));
  if (w.jobs === 0) {
    $('wait-chart').textContent = 'No job had started by this time.';
  } else {
    // Waits on a log axis from 1 s (a zero wait is drawn at 1 s): x is log10 of the wait, ticks at round durations.
    const ROUND = [1, 10, 60, 600, 3600, 21600, 86400, 604800, 2592000];
    const wait = (x) => duration(Math.round(10 ** x));
    chart('waits', $('wait-chart'), {
      series: [{ label: 'wait', value: (u, v) => (v === null ? '' : wait(v)) },
        { label: 'fraction of jobs', stroke: '#2a7ab9', value: (u, v) => (v === null ? '' : `${(v * 100).toFixed(1)}%`) }],
      scales: { x: { time: false }, y: { range: [0, 1] } },
      axes: [{ splits: (u, i, min, max) => ROUND.map(Math.log10).filter((v) => v >= min && v <= max),
        values: (u, ticks) => ticks.map(wait) }, {}],
    }, [w.cdf.wait.map((v) => Math.log10(Math.max(v, 1))), w.cdf.fraction]);
  }
  const scopes = (await api('costs', { to: state.t, points: 2 })).scopes;
  const select = $('cost-scope');
  if (!scopes.length) {
    select.replaceChildren();
    $('cost-chart').textContent = 'No costs recorded: this run has no cloud pricing (see the README, cloud operation).';
    return;
  }
  if (select.options.length !== scopes.length) {
    select.replaceChildren(...scopes.map((s) => el('option', { value: s }, s)));
    select.value = scopes.includes('cluster') ? 'cluster' : scopes[0];
  }
  const c = await api('costs', { to: state.t, points: 800, scope: select.value });
  chart('cost', $('cost-chart'), {
    series: [{}, { label: 'Burn rate USD/h', stroke: '#c0392b', scale: 'rate' },
      { label: 'Spent USD', stroke: '#2a7ab9', scale: 'usd' }],
    axes: [{ space: 90, values: (u, ticks) => ticks.map((v) => duration(Math.round(v))) }, { scale: 'rate' },
      { side: 1, scale: 'usd', size: 70 }], scales: { x: { time: false } },
  }, [c.series.time, c.series.burn_usd_per_h, c.series.total_usd]);
}

// ---- Gantt ---------------------------------------------------------------------------------------------------------
// Jobs on nodes over a window. The server answers at a level of detail that fits the canvas: the jobs themselves
// (a bar per job per node, coloured by job id) when few enough are in view, else a grid of busy fractions.

const gantt = { from: null, to: null, nodeFrom: 0, nodeTo: null, data: null, drag: null };
const LABEL_W = 70, AXIS_H = 18;

function jobColour(id) {
  const h = (id * 2654435761) % 360;
  return `hsl(${h}, 55%, 55%)`;
}

async function renderGantt() {
  const canvas = $('gantt');
  const info = state.info;
  if (gantt.from === null) Object.assign(gantt, { from: info.begin, to: info.end, nodeTo: info.nodes });
  const width = canvas.width - LABEL_W, height = canvas.height - AXIS_H;
  const started = performance.now();
  if (!state.nodeNames) state.nodeNames = (await api('nodes', { t: info.begin, gpu: false })).nodes.map((n) => n.name);
  const d = await api('gantt', { from: gantt.from, to: gantt.to, node_from: gantt.nodeFrom, node_to: gantt.nodeTo,
    width, height });
  gantt.data = d;
  const ctx = canvas.getContext('2d');
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  const nodes = d.node_to - d.node_from, span = d.to - d.from;
  const x = (t) => LABEL_W + ((t - d.from) / span) * width;
  if (d.exact) {
    const rowH = height / Math.max(nodes, 1);
    const s = d.segments;
    for (let i = 0; i < s.length; i += 4) {
      ctx.fillStyle = jobColour(s[i + 3]);
      const x0 = x(s[i + 1]), x1 = Math.max(x(s[i + 2]), x0 + 1);
      ctx.fillRect(x0, s[i] * rowH + 0.5, x1 - x0, Math.max(rowH - 1, 1));
    }
  } else {
    const bytes = Uint8Array.from(atob(d.busy), (c) => c.charCodeAt(0));
    const image = ctx.createImageData(d.cols, d.rows);
    for (let i = 0; i < bytes.length; i++) {
      const v = bytes[i] / 255;  // white (idle) to dark blue (busy)
      image.data[i * 4] = 255 - 225 * v; image.data[i * 4 + 1] = 255 - 175 * v; image.data[i * 4 + 2] = 255 - 75 * v;
      image.data[i * 4 + 3] = 255;
    }
    const bitmap = await createImageBitmap(image);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(bitmap, LABEL_W, 0, width, height);
  }
  // Node labels and the time axis.
  ctx.fillStyle = '#5b6475';
  ctx.font = '11px system-ui';
  const labelStep = Math.max(1, Math.ceil(nodes / (height / 14)));
  const names = state.nodeNames || [];
  for (let n = 0; n < nodes; n += labelStep) {
    ctx.fillText(names[d.node_from + n] ?? `#${d.node_from + n}`, 2, (n + 0.5) * (height / nodes) + 4);
  }
  for (let i = 0; i <= 6; i++) {
    const t = d.from + (span * i) / 6;
    ctx.fillText(duration(Math.round(t)), Math.min(x(t), canvas.width - 60), canvas.height - 4);
  }
  if (state.t >= d.from && state.t <= d.to) {
    ctx.strokeStyle = '#d64545';
    ctx.beginPath(); ctx.moveTo(x(state.t), 0); ctx.lineTo(x(state.t), height); ctx.stroke();
  }
  const ms = performance.now() - started;
  $('gantt-info').textContent = `${d.jobs_in_view.toLocaleString()} job runs in view, ${d.exact ? 'each drawn' :
    `density of ${d.nodes_per_row} node(s) per row`}, nodes ${d.node_from}-${d.node_to - 1}, drawn in ${ms.toFixed(0)} ms`;
  canvas.dataset.drawMs = ms.toFixed(0);
  canvas.dataset.exact = d.exact;
}

function ganttTime(canvas, event) {
  const rect = canvas.getBoundingClientRect();
  const px = ((event.clientX - rect.left) / rect.width) * canvas.width;
  const f = Math.min(Math.max((px - LABEL_W) / (canvas.width - LABEL_W), 0), 1);
  return { t: gantt.from + f * (gantt.to - gantt.from), f,
    row: ((event.clientY - rect.top) / rect.height) * canvas.height };
}

function setupGantt() {
  const canvas = $('gantt');
  $('gantt-reset').addEventListener('click', () => {
    Object.assign(gantt, { from: state.info.begin, to: state.info.end, nodeFrom: 0, nodeTo: state.info.nodes });
    renderGantt();
  });
  canvas.addEventListener('mousedown', (e) => { gantt.drag = ganttTime(canvas, e).t; });
  canvas.addEventListener('mouseup', (e) => {
    const t = ganttTime(canvas, e).t;
    if (gantt.drag !== null && Math.abs(t - gantt.drag) > (gantt.to - gantt.from) / 200) {
      Object.assign(gantt, { from: Math.floor(Math.min(t, gantt.drag)), to: Math.ceil(Math.max(t, gantt.drag)) });
      renderGantt();
    }
    gantt.drag = null;
  });
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    const nodes = gantt.nodeTo - gantt.nodeFrom, total = state.info.nodes;
    if (e.shiftKey) {  // scroll nodes
      const step = Math.max(1, Math.round(nodes / 4)) * Math.sign(e.deltaY || e.deltaX);
      const from = Math.min(Math.max(gantt.nodeFrom + step, 0), Math.max(total - nodes, 0));
      Object.assign(gantt, { nodeFrom: from, nodeTo: from + nodes });
    } else {  // zoom time around the pointer, and nodes with ctrl
      const { t, f } = ganttTime(canvas, e);
      const k = e.deltaY > 0 ? 1.5 : 1 / 1.5;
      if (e.ctrlKey) {
        const keep = Math.min(Math.max(Math.round(nodes * k), 1), total);
        const from = Math.min(Math.max(gantt.nodeFrom + Math.round((nodes - keep) / 2), 0), total - keep);
        Object.assign(gantt, { nodeFrom: from, nodeTo: from + keep });
      } else {
        const span = Math.max((gantt.to - gantt.from) * k, 60);
        Object.assign(gantt, { from: Math.floor(t - f * span), to: Math.ceil(t + (1 - f) * span) });
      }
    }
    clearTimeout(gantt.timer);
    gantt.timer = setTimeout(renderGantt, 80);
  }, { passive: false });
  canvas.addEventListener('mousemove', (e) => {
    const d = gantt.data;
    if (!d || !d.exact) { $('gantt-hover').textContent = ''; return; }
    const { t, row } = ganttTime(canvas, e);
    const r = Math.floor(row / ((canvas.height - AXIS_H) / Math.max(d.node_to - d.node_from, 1)));
    const s = d.segments;
    for (let i = 0; i < s.length; i += 4) {
      if (s[i] === r && s[i + 1] <= t && t < s[i + 2]) {
        $('gantt-hover').textContent = `job ${s[i + 3]} on ${state.nodeNames?.[d.node_from + r] ?? r}: ${duration(s[i + 1])} to ${duration(s[i + 2])}`;
        return;
      }
    }
    $('gantt-hover').textContent = '';
  });
}

// ---- Live run (gputwin run SCENARIO --serve) ----------------------------------------------------------------------

const liveControls = () => Boolean(state.info?.controls && state.live && (state.live.state === 'running' || state.live.state === 'paused'));

async function control(action, body = {}) {
  const token = $('live-token').value.trim();
  const message = $('live-message');
  const response = await fetch(`/api/control/${action}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  const r = await response.json();
  message.classList.toggle('error', !response.ok);
  message.textContent = response.ok ? `${action}: done` : `${action}: ${r.error}`;
  if (response.ok) sessionStorage.setItem('gputwin-token', token);
  if (response.ok && r.state) updateLive(r);
  return response.ok ? r : null;
}

async function nodeAction(action, node) {
  if (!node) { $('live-message').textContent = 'name a node first'; return; }
  const r = await control(`node/${action}`, action === 'drain' ? { node, reason: $('live-reason').value || 'drained from the dashboard' } : { node });
  if (r && action === 'restart') {
    $('live-message').textContent = `node/restart: ${node} ${r.rebooting ? 'reboots now' : 'drains, then reboots once its jobs end'}`;
  }
  if (r) {
    // Show the cluster as of the action (the clock may have moved on since the last status event).
    if (state.follow && r.time > state.t) state.t = r.time;
    render();
  }
}

// Inject a fault, scale the pool (live_actions.js): then show the cluster as of the action, as nodeAction does.
const liveTools = nodeTools({ el, control, done: (r) => { if (state.follow && r.time > state.t) state.t = r.time; render(); } });

function addFeed(e) {
  const feed = $('live-feed');
  feed.prepend(el('li', { class: e.kind, 'data-kind': e.kind }, `${duration(e.time)}  ${e.kind.padEnd(6)} ${e.subject} ${e.text}`));
  while (feed.children.length > 200) feed.lastChild.remove();
}

let liveRendering = false;
function updateLive(s) {
  state.live = s;
  const badge = $('live-badge');
  badge.className = `live-badge ${s.state}`;
  badge.textContent = s.state === 'running' ? `LIVE ${s.speed === 'max' ? 'max' : `${s.speed}x`}` : s.state.toUpperCase();
  badge.dataset.state = s.state;
  badge.dataset.now = s.now;
  $('live-pause').textContent = s.state === 'paused' ? 'Resume' : 'Pause';
  const speed = String(s.speed);
  if ([...$('live-speed').options].some((o) => o.value === speed)) $('live-speed').value = speed;
  for (const id of ['live-pause', 'live-speed', 'live-drain', 'live-resume-node', 'live-restart-node']) $(id).disabled = !liveControls();
  const slider = $('time-slider');
  const following = state.follow;
  slider.max = Math.max(s.now, Number(slider.min));
  if (following) {
    state.t = s.now;
    slider.value = s.now;
    $('time-label').textContent = clockText(state.t);
    if (!liveRendering) {
      liveRendering = true;
      render().finally(() => { liveRendering = false; });
    }
  }
}

function startLive() {
  $('live-bar').hidden = false;
  $('live-token').value = new URLSearchParams(location.hash.slice(1)).get('token') || sessionStorage.getItem('gputwin-token') || '';
  $('live-pause').addEventListener('click', () => control(state.live?.state === 'paused' ? 'resume' : 'pause'));
  $('live-speed').addEventListener('change', (e) => control('speed', { factor: e.target.value === 'max' ? 'max' : Number(e.target.value) }));
  $('live-drain').addEventListener('click', () => nodeAction('drain', $('live-node').value.trim()));
  $('live-resume-node').addEventListener('click', () => nodeAction('resume', $('live-node').value.trim()));
  $('live-restart-node').addEventListener('click', () => nodeAction('restart', $('live-node').value.trim()));
  const stream = new EventSource('/api/stream');
  stream.addEventListener('status', (e) => updateLive(JSON.parse(e.data)));
  stream.onmessage = (e) => addFeed(JSON.parse(e.data));
  stream.onopen = () => { document.body.dataset.stream = 'open'; };
}

// ---- Shell ---------------------------------------------------------------------------------------------------------

// What the tabs in their own modules (forecasts.js, compare.js) use of this one.
const ctx = { api, el, duration, chart, $, state };
const RENDER = { overview: renderOverview, jobs: renderJobs, monitoring: renderMonitoring, nodes: renderNodes, events: renderEvents,
  gantt: renderGantt, analysis: renderAnalysis, forecasts: () => renderForecasts(ctx), compare: () => renderCompare(ctx) };

async function render() {
  $('time-label').textContent = clockText(state.t);
  try {
    await RENDER[state.tab]();
    document.body.dataset.rendered = `${state.tab}@${state.t}`;
  } catch (error) {
    console.error(error);
    document.body.dataset.error = String(error.message || error);
  }
}

async function start() {
  // A twin being served answers 503 until its first poll is written.
  for (;;) {
    try {
      state.info = await api('info');
      break;
    } catch (error) {
      if (error.status !== 503) throw error;
      $('run-name').textContent = error.message;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
  document.querySelector('#tabs button[data-tab="forecasts"]').hidden = state.info.kind !== 'twin';
  document.querySelector('#tabs button[data-tab="compare"]').hidden = !(state.info.compare >= 2);
  document.body.dataset.controls = state.info.controls ? 'on' : 'off';
  $('run-name').textContent = `${state.info.kind === 'twin' ? 'twin' : 'run'} ${state.info.scenario} (${state.info.policy}, seed ${state.info.seed}): ${state.info.jobs} jobs, ${state.info.nodes} nodes`;
  const params = new URLSearchParams(location.search);
  state.t = Number(params.get('t') ?? state.info.end);
  const slider = $('time-slider');
  Object.assign(slider, { min: state.info.begin, max: state.info.end, value: state.t });
  // A live run follows the simulation's clock until the slider is moved back (and again once it is at the end).
  state.follow = state.info.live && !params.has('t');
  if (state.info.live) {
    state.live = await api('live');
    startLive();
  }
  let pending = null;
  slider.addEventListener('input', () => {
    state.follow = state.info.live && Number(slider.value) >= Number(slider.max);
    state.t = Number(slider.value);
    $('time-label').textContent = clockText(state.t);
    clearTimeout(pending);
    pending = setTimeout(render, 120);
  });
  for (const button of document.querySelectorAll('#tabs button')) {
    button.addEventListener('click', () => {
      document.querySelectorAll('#tabs button').forEach((b) => b.classList.toggle('active', b === button));
      document.querySelectorAll('.tab').forEach((s) => s.classList.toggle('active', s.id === `tab-${button.dataset.tab}`));
      state.tab = button.dataset.tab;
      render();
    });
  }
  let searchTimer = null;
  $('job-search').addEventListener('input', (e) => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => { Object.assign(state.jobs, { search: e.target.value, offset: 0 }); renderJobs(); }, 200);
  });
  $('node-select').addEventListener('change', (e) => { state.node = e.target.value; renderMonitoring(); });
  $('event-kind').addEventListener('change', renderEvents);
  $('event-limit').addEventListener('change', renderEvents);
  setInterval(() => { if (state.tab === 'events' && $('event-auto').checked) renderEvents(); }, 2000);
  setupGantt();
  $('cost-scope').addEventListener('change', renderAnalysis);
  const tab = params.get('tab');
  if (tab && RENDER[tab]) document.querySelector(`#tabs button[data-tab="${tab}"]`).click();
  else render();
}

start();
