// `pnpm test:reliability [--scale N] [--seed N]`: the reliability suite at a
// larger budget than `pnpm test`, then a summary table. Scale 1 ≈ the smoke
// budget; the default 4 explores every crash point of every workload with 2
// chaotic seeds per PSOW setting and 4 crashes inside recovery, every n of
// every fault schedule (and of the per-file-kind ones, with their table),
// 100 model runs, 4× the mutant budgets and 2000 cases per fuzz target. Exit status 1 when any violation is found, a mutant
// survives or the canaries pass. Violations print with replay commands.
import { parseArgs } from 'node:util';
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { runTarget, type FuzzTarget } from '../fuzz/lib/target.js';
import { enumerateCrashes, WORKLOADS } from './lib/reliability-crash.js';
import { lyingSyncCaught, runSchedule, SCHEDULES } from './lib/reliability-faults.js';
import { kindSchedules, kindTable, runKindSchedule, scheduleName } from './lib/reliability-file-kinds.js';
import type { KindStats } from './lib/reliability-file-kinds.js';
import { runModel } from './lib/reliability-model.js';
import { MUTANTS, mutantsAvailable, runMutant } from './lib/mutants.js';

const { values } = parseArgs({ options: { scale: { type: 'string', default: '4' }, seed: { type: 'string', default: '42' }, only: { type: 'string' } } });
const scale = Number(values.scale);
const seed = Number(values.seed);
const only = values.only === undefined ? null : new Set(values.only.split(','));
const want = (part: string): boolean => only === null || only.has(part);
const rows: string[][] = [];
const violations: string[] = [];
let failedParts = 0;
const started = Date.now();

function row(...cells: (string | number)[]): void {
  rows.push(cells.map(String));
  console.log(`  ${cells.join(' | ')}`);
}

if (want('crash')) {
  for (const spec of WORKLOADS) {
    const t = Date.now();
    const stats = await enumerateCrashes(spec, { seeds: Math.max(1, Math.floor(scale / 2)), recoveryCrashes: scale, stride: Math.max(1, Math.round(4 / scale)) },
      'SEGLOG_RELIABILITY_ONLY=<case> npx vitest run test/reliability-crash');
    row('crash', spec.name, `${stats.explored}/${stats.crashPoints} crash points`, `${[...stats.modes].join(', ')}`, `${stats.seeds} chaotic seeds/PSOW`,
      `${stats.cases} cases, ${stats.recoveryCrashes} recovery crashes, ${stats.detected} detected`, stats.violations.length, `${((Date.now() - t) / 1000).toFixed(1)} s`);
    violations.push(...stats.violations);
  }
}
if (want('faults')) {
  for (const schedule of SCHEDULES) {
    const t = Date.now();
    const stats = await runSchedule(schedule, { stride: scale >= 2 ? 1 : 2, maxRuns: 1000 }, "SEGLOG_FAULT_ONLY='<case>' npx vitest run test/faults");
    row('faults', schedule.name, `${stats.runs} runs (${stats.faultedRuns} faulted)`, `completed at n=${stats.completedAt}`, '-', `${stats.injected} faults injected`, stats.violations.length, `${((Date.now() - t) / 1000).toFixed(1)} s`);
    violations.push(...stats.violations);
  }
  const canary = await lyingSyncCaught();
  row('faults', 'lying fsync (canary)', '1 run', canary.caught ? `caught [${canary.rule}]` : 'NOT CAUGHT', '-', '-', canary.caught ? 0 : 1, '-');
  if (!canary.caught) violations.push('lying fsync canary not caught: the checker cannot see data loss');
}
let fileKindTable = '';
if (want('file-kinds')) {
  const all: KindStats[] = [];
  for (const schedule of kindSchedules()) {
    const t = Date.now();
    const stats = await runKindSchedule(schedule, { stride: 1, maxRuns: 200 * scale });
    all.push(stats);
    row('file-kinds', scheduleName(schedule), `${stats.runs} runs (${stats.faultedRuns} faulted)`, `completed at n=${stats.completedAt}`, '-', '-', stats.violations.length, `${((Date.now() - t) / 1000).toFixed(1)} s`);
    violations.push(...stats.violations);
  }
  fileKindTable = kindTable(all);
}
if (want('model')) {
  const t = Date.now();
  const stats = await runModel({ seed, runs: 25 * scale });
  row('model', 'Log API + crash + fault', `${stats.runs} runs ≤ 40 commands`, `seed ${seed}`, '-', `${stats.crashes} crashes, ${stats.faults} faults injected`, stats.failure === null ? 0 : 1, `${((Date.now() - t) / 1000).toFixed(1)} s`);
  if (stats.failure !== null) violations.push(stats.failure);
}
if (want('mutants')) {
  if (!mutantsAvailable()) {
    row('mutants', MUTANTS.join(', '), '-', 'SKIPPED: packages/log/src/internal/test-seams.ts not there yet', '-', '-', '-', '-');
  } else {
    for (const mutant of MUTANTS) {
      const t = Date.now();
      const outcome = await runMutant(mutant, scale);
      row('mutants', mutant, outcome.killed ? 'killed' : 'SURVIVED', outcome.evidence.slice(0, 90), '-', '-', outcome.killed ? 0 : 1, `${((Date.now() - t) / 1000).toFixed(1)} s`);
      if (!outcome.killed) failedParts++;
    }
  }
}
if (want('fuzz')) {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dir = path.join(here, '..', 'fuzz', 'targets');
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3)).sort()) {
    const { target } = (await import(pathToFileURL(path.join(dir, `${name}.ts`)).href)) as { target: FuzzTarget };
    const t = Date.now();
    const runs = target.canary === true ? 2000 : 500 * scale;
    const outcome = await runTarget(target, { seed, runs });
    const ok = outcome.failed === (target.canary === true);
    row('fuzz', name, `${outcome.runs} cases`, `seed ${outcome.seed}`, '-', target.canary === true ? (outcome.failed ? 'canary failed (as it must)' : 'CANARY PASSED') : '-', ok ? 0 : 1, `${((Date.now() - t) / 1000).toFixed(1)} s`);
    if (!ok) violations.push(`fuzz ${name}: ${outcome.error ?? 'canary passed'}\n  replay: pnpm fuzz ${name} --seed ${outcome.seed} --runs ${runs}${outcome.counterexamplePath === null ? '' : ` --path ${outcome.counterexamplePath}`}`);
  }
}

const header = ['part', 'what', 'budget', 'detail', 'seeds', 'injected / cases', 'violations', 'time'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
console.log(`\nreliability summary (scale ${scale}, seed ${seed}, ${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
console.log(line(header));
console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
for (const r of rows) console.log(line(r));
if (fileKindTable !== '') console.log(`\noffline before the next acknowledgement, per file kind:\n\n${fileKindTable}`);
if (violations.length > 0) {
  const kinds = new Map<string, { count: number; first: string }>();
  for (const v of violations) {
    const kind = (/\]: (\[[a-z-]+\][^\n]*)/.exec(v)?.[1] ?? v.split('\n')[0]!).replace(/\d+/g, 'N').slice(0, 140);
    const entry = kinds.get(kind) ?? { count: 0, first: v };
    entry.count++;
    kinds.set(kind, entry);
  }
  console.log(`\n${violations.length} violations in ${kinds.size} kinds:`);
  for (const [kind, { count, first }] of kinds) console.log(`  ${count} × ${kind}\n    first: ${first.replace(/\n/g, '\n    ').slice(0, 900)}`);
}
process.exit(violations.length === 0 && failedParts === 0 ? 0 : 1);
