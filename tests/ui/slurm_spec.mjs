// Slurm's OpenAPI spec (../shared/slurmrestd/recorded/25.11/openapi-v3.json) loaded into ajv, normalised as
// ui/slurmrestd_compat_notes.md says: `required` entries containing '/' are dropped, then empty `required` arrays.
// Shared by slurm_api_check.mjs (reads) and slurm_api_write_check.mjs (writes).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

// Returns validator(method, specPath, status): ajv's validator of that response's JSON schema ('default' when the
// status has none); throws when the spec has no such path and method. `nodeModules` holds ajv.
export function loadSlurmSpec(specFile, nodeModules) {
  const require = createRequire(path.resolve(nodeModules, 'x.js'));
  const Ajv = require('ajv').default;
  const spec = JSON.parse(readFileSync(specFile, 'utf8'));
  (function normalise(node) {
    if (Array.isArray(node)) { node.forEach(normalise); return; }
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node.required)) {
      node.required = node.required.filter((r) => !r.includes('/'));
      if (node.required.length === 0) delete node.required;
    }
    Object.values(node).forEach(normalise);
  })(spec);
  const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema(spec, 'spec');
  const pointer = (s) => s.replace(/~/g, '~0').replace(/\//g, '~1');
  return function validator(method, specPath, status) {
    const responses = spec.paths[specPath]?.[method]?.responses;
    if (!responses) throw new Error(`the spec has no ${method.toUpperCase()} ${specPath}`);
    const key = responses[status] ? status : 'default';
    return ajv.getSchema(`spec#/paths/${pointer(specPath)}/${method}/responses/${key}/content/application~1json/schema`);
  };
}
