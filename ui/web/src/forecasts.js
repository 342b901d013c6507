// The forecasts tab of a twin's folder (GET /api/forecasts and /api/actions, ui/twin_api.hpp): each pending job's
// forecast starts beside its actual start, the error distribution by lead time, `gputwin twin-score`'s accuracy
// table, and the twin's actions. Times are seconds after the twin's epoch; an error is predicted - actual start.

const BUCKET_LABELS = { '<10min': 'under 10 min', '10min-1h': '10 min - 1 h', '1h-6h': '1 - 6 h', '>6h': 'over 6 h', all: 'all' };

/** A signed duration: "+00:05:00", "-1-02:00:00"; '' for null. */
export function signedDuration(duration, s) {
  if (s === null || s === undefined) return '';
  return `${s < 0 ? '-' : '+'}${duration(Math.abs(Math.round(s)))}`;
}

const share = (v) => (v === null || v === undefined ? '-' : `${Math.round(v * 100)}%`);

export async function renderForecasts(ctx) {
  const { api, el, duration, chart, $, state } = ctx;
  const q = (state.forecasts ??= { filter: 'all', offset: 0, limit: 50 });
  const f = await api('forecasts', { filter: q.filter, offset: q.offset, limit: q.limit, points: 3000 });
  const tw = f.twin;
  $('forecast-info').textContent = `${tw.mode || '?'} twin of ${tw.slurmrestd || '?'} (${tw.api_version || '?'}), predictor ` +
    `${tw.predictor || '?'}, controllers ${tw.controllers || 'none'}: ${tw.poll_rows} polls (${tw.failed_polls} failed), ` +
    `${f.score.forecasts} forecasts of ${f.counts.all} jobs, ${f.score.scored} of jobs that have started (${f.score.jobs} jobs)`;

  // Accuracy over every lead: gputwin beside slurmctld's own estimate.
  const all = f.score.cells;
  const cards = [
    ['gputwin median error', all.gputwin.all.median === null ? '-' : duration(Math.round(all.gputwin.all.median))],
    ['slurmctld median error', all.slurmctld.all.median === null ? '-' : duration(Math.round(all.slurmctld.all.median))],
    ['gputwin within 10 min', share(all.gputwin.all.within_10min)],
    ['slurmctld within 10 min', share(all.slurmctld.all.within_10min)],
    ['Forecasts scored', String(f.score.scored)],
    ['Jobs started', `${f.counts.started} of ${f.counts.all}`],
  ];
  $('forecast-cards').replaceChildren(...cards.map(([label, value]) => el('div', { class: 'card', 'data-testid': `forecast-card-${label.toLowerCase().replace(/ /g, '-')}` },
    el('div', { class: 'label' }, label), el('div', { class: 'value' }, value))));

  // twin-score's table: absolute error by lead time (actual start - forecast time) and forecaster.
  const fmt = (v) => (v === null ? '-' : String(Math.round(v)));
  $('forecast-score').tBodies[0].replaceChildren(...f.score.buckets.flatMap((b) => f.score.forecasters.map((name) => {
    const c = f.score.cells[name][b];
    return el('tr', { 'data-lead': b, 'data-forecaster': name },
      el('td', {}, BUCKET_LABELS[b] || b), el('td', {}, name), el('td', {}, String(c.n)), el('td', {}, fmt(c.mean)),
      el('td', {}, fmt(c.median)), el('td', {}, fmt(c.p90)), el('td', {}, share(c.within_1min)), el('td', {}, share(c.within_10min)));
  })));

  // Signed error quantiles per lead bucket: is the twin early or late, and by how much.
  $('forecast-by-lead').tBodies[0].replaceChildren(...f.score.buckets.flatMap((b, i) => ['gputwin', 'slurmctld'].map((name) => {
    const s = f.by_lead[name][i];
    const d = (v) => signedDuration(duration, v);
    return el('tr', { 'data-lead': b, 'data-forecaster': name }, el('td', {}, BUCKET_LABELS[b] || b), el('td', {}, name),
      el('td', {}, String(s.n)), el('td', {}, d(s.p10)), el('td', {}, d(s.p25)), el('td', {}, d(s.p50)), el('td', {}, d(s.p75)),
      el('td', {}, d(s.p90)));
  })));
  if (f.points.lead.length === 0) {
    $('forecast-chart').textContent = 'No forecast of a job that has started yet.';
  } else {
    // Each scored forecast: lead time (h) across, error (h) up; 0 is a perfect forecast.
    chart('forecasts', $('forecast-chart'), {
      series: [{ label: 'lead', value: (u, v) => (v === null ? '' : duration(Math.round(v * 3600))) },
        { label: 'gputwin error (predicted - actual)', stroke: '#2a7ab9', paths: () => null, points: { show: true, size: 4, fill: '#2a7ab9' },
          value: (u, v) => (v === null ? '' : signedDuration(duration, v * 3600)) }],
      scales: { x: { time: false } },
      axes: [{ label: 'lead time, hours (actual start - forecast time)' }, { label: 'error, hours' }],
    }, [f.points.lead.map((v) => v / 3600), f.points.error.map((v) => v / 3600)]);
  }

  // Each job: its first and last forecast against its start.
  $('forecast-filters').replaceChildren(...['all', 'started', 'waiting'].map((name) =>
    el('button', { class: q.filter === name ? 'active' : '', 'data-testid': `forecast-filter-${name}`,
      onclick: () => { Object.assign(q, { filter: name, offset: 0 }); renderForecasts(ctx); } },
    `${name.toUpperCase()} `, el('b', { 'data-testid': `forecast-count-${name}` }, String(f.counts[name])))));
  const t = (v) => (v === null ? '' : duration(v));
  $('forecast-jobs').tBodies[0].replaceChildren(...f.jobs.map((j) => el('tr', { 'data-job': j.job_id },
    el('td', {}, String(j.job_id)), el('td', {}, j.name), el('td', {}, j.user), el('td', {}, j.state), el('td', {}, String(j.forecasts)),
    el('td', {}, t(j.first_made_at)), el('td', {}, t(j.first_predicted)), el('td', {}, t(j.last_made_at)), el('td', {}, t(j.last_predicted)),
    el('td', {}, t(j.slurm_estimate)), el('td', {}, t(j.actual_start)),
    el('td', { 'data-error': j.last_error ?? '' }, signedDuration(duration, j.last_error)),
    el('td', { 'data-error': j.slurm_error ?? '' }, signedDuration(duration, j.slurm_error)))));
  const pages = Math.max(1, Math.ceil(f.total / q.limit));
  $('forecast-pager').replaceChildren(
    el('button', { onclick: () => { q.offset = Math.max(0, q.offset - q.limit); renderForecasts(ctx); } }, '‹'),
    el('span', { 'data-testid': 'forecast-page' }, `page ${Math.floor(q.offset / q.limit) + 1} of ${pages} (${f.total} jobs)`),
    el('button', { onclick: () => { if (q.offset + q.limit < f.total) { q.offset += q.limit; renderForecasts(ctx); } } }, '›'));

  // The twin's actions, newest last.
  const a = await api('actions', { limit: 500 });
  $('action-info').textContent = `${a.total} actions (${a.mode}): ` +
    (Object.entries(a.outcomes).map(([k, n]) => `${n} ${k}`).join(', ') || 'none');
  $('twin-actions').tBodies[0].replaceChildren(...a.actions.map((r) => el('tr', {},
    el('td', {}, duration(r.time)), el('td', {}, r.controller), el('td', {}, r.action), el('td', {}, r.target),
    el('td', {}, r.reason), el('td', {}, r.outcome), el('td', {}, el('code', {}, r.call)))));
}
