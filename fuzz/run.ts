// `pnpm fuzz <name> --seed N --runs N [--path P]`: runs fuzz/targets/<name>.ts.
// `pnpm fuzz all --runs N` runs every target. A failure prints its seed and
// the exact command that replays it.
import { parseArgs } from 'node:util';
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { runTarget, type FuzzTarget } from './lib/target.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const targets = readdirSync(path.join(here, 'targets')).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3)).sort();

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { seed: { type: 'string' }, runs: { type: 'string', default: '1000' }, path: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
});
const name = positionals[0];
if (values.help || name === undefined || (name !== 'all' && !targets.includes(name))) {
  console.log(`usage: pnpm fuzz <name|all> [--seed N] [--runs N] [--path P]\ntargets: ${targets.join(', ')}`);
  process.exit(values.help ? 0 : 2);
}
const runs = Number(values.runs);
const seed = values.seed === undefined ? (Date.now() ^ (process.pid << 8)) | 0 : Number(values.seed);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed)) {
  console.error('--runs must be a positive integer and --seed an integer');
  process.exit(2);
}

let unexpected = 0;
for (const t of name === 'all' ? targets : [name]) {
  const mod = (await import(pathToFileURL(path.join(here, 'targets', `${t}.ts`)).href)) as { target: FuzzTarget };
  const started = Date.now();
  const outcome = await runTarget(mod.target, values.path === undefined ? { seed, runs } : { seed, runs, path: values.path });
  const ms = Date.now() - started;
  const expectFail = mod.target.canary === true;
  const ok = outcome.failed === expectFail;
  if (!ok) unexpected++;
  const verdict = outcome.failed ? (expectFail ? 'FAILED as a canary must' : 'FAILED') : expectFail ? 'PASSED (canary should fail!)' : 'ok';
  console.log(`${t}: ${verdict} — ${outcome.runs} cases, seed ${outcome.seed}, ${ms} ms`);
  if (outcome.failed && !expectFail) {
    console.log(`  error: ${outcome.error}`);
    const p = outcome.counterexamplePath === null ? '' : ` --path ${outcome.counterexamplePath}`;
    console.log(`  replay: pnpm fuzz ${t} --seed ${outcome.seed} --runs ${runs}${p}`);
  }
}
process.exit(unexpected === 0 ? 0 : 1);
