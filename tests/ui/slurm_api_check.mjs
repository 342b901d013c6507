// The slurmrestd-compatible API of `gputwin serve` against real Slurm: every endpoint of v0.0.41-v0.0.44 is fetched
// from a served run and (1) validated with ajv against the OpenAPI spec of Slurm 25.11's slurmrestd
// (../shared/slurmrestd/recorded/25.11/openapi-v3.json), normalised as ui/slurmrestd_compat_notes.md says: `required`
// entries containing '/' are dropped, then empty `required` arrays; (2) compared key for key with the replies real
// slurmrestd gave (../shared/slurmrestd/recorded/25.11/<version>/): every field path the real one prints must be in
// ours and ours may print none it does not, except under arrays that are empty in ours (a run has no reservations,
// no TRES limits) and except null where a real pending job also prints null.
//
//   node slurm_api_check.mjs --gputwin BIN --results DIR --at SECONDS --recorded DIR --node-modules DIR
//
// Prints one line per check and a summary; exit 0 when all pass, 1 otherwise, 77 (skipped) without the recorded
// replies.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { loadSlurmSpec } from './slurm_spec.mjs';

const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) => (a.startsWith('--') ? [...pairs, [a.slice(2), all[i + 1]]] : pairs), []));
for (const need of ['gputwin', 'results', 'at', 'recorded', 'node-modules']) {
  if (!args[need]) { console.error(`slurm_api_check: --${need} is required`); process.exit(2); }
}
const specFile = path.join(args.recorded, 'openapi-v3.json');
if (!existsSync(specFile)) { console.log(`skip: no ${specFile}`); process.exit(77); }
const responseValidator = loadSlurmSpec(specFile, args['node-modules']);
const validator = (specPath, status) => responseValidator('get', specPath, status);

// What validation finds wrong in the real replies of a kind (real slurmrestd itself breaks its spec in places:
// job_resources is null for a pending job, an unknown node's answer has no nodes): such findings are tolerated in
// ours, and no other.
const signature = (e) => `${e.schemaPath} ${e.keyword} ${JSON.stringify(e.params)}`;
function knownErrors(version, validate, pattern) {
  const dir = path.join(args.recorded, version.slice(1));
  const re = new RegExp(`^${pattern.replace(/\*/g, '.*')}$`);
  const known = new Set();
  for (const f of readdirSync(dir)) {
    if (!re.test(f)) continue;
    if (!validate(JSON.parse(readFileSync(path.join(dir, f), 'utf8')))) validate.errors.forEach((e) => known.add(signature(e)));
  }
  return known;
}

// Field paths of a JSON value: "/jobs[]/job_id"; `empty` collects arrays that are empty, `nulls` null values.
function paths(value, prefix, out, empty, nulls) {
  if (Array.isArray(value)) {
    if (value.length === 0) empty.add(prefix);
    for (const v of value) paths(v, `${prefix}[]`, out, empty, nulls);
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.add(`${prefix}/${k}`);
      paths(v, `${prefix}/${k}`, out, empty, nulls);
    }
  } else if (value === null) {
    nulls.add(prefix);
  }
  return out;
}
function recordedPaths(version, pattern) {
  const dir = path.join(args.recorded, version.slice(1));
  const re = new RegExp(`^${pattern.replace(/\*/g, '.*')}$`);
  const out = new Set();
  for (const f of readdirSync(dir)) {
    if (!re.test(f) || f.includes('unfound') || f.includes('archived')) continue;
    paths(JSON.parse(readFileSync(path.join(dir, f), 'utf8')), '', out, new Set(), new Set());
  }
  return out;
}
function compareKeys(ours, version, pattern) {
  const mine = new Set(), empty = new Set(), nulls = new Set();
  paths(ours, '', mine, empty, nulls);
  const real = recordedPaths(version, pattern);
  const underEmptyOrNull = (p) => [...empty, ...nulls].some((e) => p.startsWith(`${e}[]`) || p.startsWith(`${e}/`));
  const missing = [...real].filter((p) => !mine.has(p) && !underEmptyOrNull(p));
  const extra = [...mine].filter((p) => !real.has(p));
  return { missing, extra };
}

// Serve the run.
const server = spawn(args.gputwin, ['serve', args.results, '--listen', '127.0.0.1:0', '--slurmrestd-listen',
  '127.0.0.1:0', '--at', args.at, '--duration', '600'], { stdio: ['ignore', 'pipe', 'inherit'] });
const base = await new Promise((resolve, reject) => {
  let text = '';
  server.stdout.on('data', (d) => {
    text += d;
    const m = text.match(/slurmrestd-compatible API .* on (http:\/\/[0-9.:]+)/);
    if (m) resolve(m[1]);
  });
  server.on('exit', (code) => reject(new Error(`gputwin serve exited (${code}): ${text}`)));
  setTimeout(() => reject(new Error(`gputwin serve did not start: ${text}`)), 60000);
});

let failures = 0, checks = 0;
function fail(what) { failures++; console.log(`FAIL ${what}`); }

async function check(version, endpoint, specPath, pattern, expectStatus = 200, realLike = pattern) {
  const url = `${base}/${endpoint.replace('{v}', version)}`;
  const response = await fetch(url);
  const name = `${version} ${endpoint.replace('{v}/', '')}`;
  checks++;
  if (response.status !== expectStatus) return fail(`${name}: status ${response.status}, expected ${expectStatus}`);
  if (response.headers.get('content-type') !== 'application/json') {
    return fail(`${name}: Content-Type ${response.headers.get('content-type')}`);
  }
  const body = await response.json();
  const validate = validator(specPath.replace('{v}', version), String(expectStatus));
  if (!validate(body)) {
    const known = realLike ? knownErrors(version, validate, realLike) : new Set();
    validate(body);
    const unknown = validate.errors.filter((e) => !known.has(signature(e)));
    if (unknown.length) return fail(`${name}: not valid against the spec: ${JSON.stringify(unknown.slice(0, 3))}`);
  }
  if (pattern) {
    const { missing, extra } = compareKeys(body, version, pattern);
    if (missing.length || extra.length) {
      return fail(`${name}: fields differ from the recorded ${pattern}: missing ${missing.slice(0, 8)} extra ${extra.slice(0, 8)}`);
    }
  }
  console.log(`ok   ${name} (${JSON.stringify(body).length} bytes)`);
  return body;
}

try {
  // Pick a running, a pending and an ended job, and a node, from the v0.0.44 answers.
  const jobs = await (await fetch(`${base}/slurm/v0.0.44/jobs`)).json();
  const byState = (s) => jobs.jobs.find((j) => j.job_state[0] === s)?.job_id;
  const running = byState('RUNNING'), pending = byState('PENDING');
  if (!running || !pending) fail(`the run at ${args.at} s needs running and pending jobs (running ${running}, pending ${pending})`);
  const node = (await (await fetch(`${base}/slurm/v0.0.44/nodes`)).json()).nodes[0].name;
  for (const v of ['v0.0.41', 'v0.0.42', 'v0.0.43', 'v0.0.44']) {
    await check(v, 'slurm/{v}/ping', '/slurm/{v}/ping/', 'slurm-ping.json');
    await check(v, 'slurm/{v}/diag', '/slurm/{v}/diag/', null);
    await check(v, 'slurm/{v}/jobs', '/slurm/{v}/jobs/', 'slurm-job*.json');
    await check(v, `slurm/{v}/job/${running}`, '/slurm/{v}/job/{job_id}', 'slurm-job-*.json');
    await check(v, `slurm/{v}/job/${pending}`, '/slurm/{v}/job/{job_id}', 'slurm-job-*.json');
    await check(v, 'slurm/{v}/job/999999999', '/slurm/{v}/job/{job_id}', null, 404, 'slurm-job-unfound.json');
    await check(v, 'slurm/{v}/nodes', '/slurm/{v}/nodes/', 'slurm-node*.json');
    await check(v, `slurm/{v}/node/${node}`, '/slurm/{v}/node/{node_name}', 'slurm-node-*.json');
    await check(v, 'slurm/{v}/node/no-such-node', '/slurm/{v}/node/{node_name}', null, 200, 'slurm-node-unfound.json');
    await check(v, 'slurm/{v}/partitions', '/slurm/{v}/partitions/', 'slurm-partitions.json');
    await check(v, 'slurm/{v}/reservations', '/slurm/{v}/reservations/', 'slurm-reservations.json');
    await check(v, 'slurmdb/{v}/jobs?start_time=0', '/slurmdb/{v}/jobs/', 'slurmdb-job-*.json');
    await check(v, `slurmdb/{v}/job/${running}`, '/slurmdb/{v}/job/{job_id}', 'slurmdb-job-*.json');
    await check(v, 'slurmdb/{v}/job/999999999', '/slurmdb/{v}/job/{job_id}', null, 200, 'slurmdb-job-unfound.json');
    await check(v, 'slurmdb/{v}/qos', '/slurmdb/{v}/qos/', 'slurm-qos.json');
    await check(v, 'slurmdb/{v}/accounts', '/slurmdb/{v}/accounts/', 'slurm-accounts.json');
    await check(v, 'slurmdb/{v}/associations', '/slurmdb/{v}/associations/', 'slurmdb-associations.json');
  }
  // An unknown version answers 404 text/plain, so that version probing goes on.
  const old = await fetch(`${base}/slurm/v0.0.40/ping`);
  checks++;
  if (old.status !== 404 || !old.headers.get('content-type').startsWith('text/plain')) fail('v0.0.40 ping is not a 404');
} catch (e) {
  fail(`error: ${e.stack}`);
} finally {
  server.kill('SIGTERM');
}
console.log(`${checks - failures} of ${checks} checks passed`);
process.exit(failures ? 1 : 0);
