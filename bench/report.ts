// `pnpm bench:report [--quick | --full] [--runs N] [--out DIR] [--only s1,s2]`:
// runs the fixed suite (disk limits first, then appends, durable appends,
// reads, fetch, end to end through the broker, the hot path vs plain files) and writes DIR/report.md,
// DIR/report.json (every raw sample) and DIR/*.svg; prints the markdown.
// DIR defaults to bench/results. See bench/README.md for how to read it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { environmentLine, type BenchOptions } from './lib/harness.js';
import { Report, markdownTable, stat } from './report/model.js';
import { diskSection } from './report/disk.js';
import { appendSection } from './report/appends.js';
import { durableSection } from './report/durable.js';
import { readSection } from './report/reads.js';
import { fetchSection } from './report/fetch.js';
import { endToEndSection } from './report/end-to-end.js';
import { hotpathSection } from './report/hotpath.js';
import { headline } from './report/headline.js';

const here = path.dirname(fileURLToPath(import.meta.url));
type SectionFn = (report: Report, root: string, options: BenchOptions, full: boolean) => Promise<void>;
const SECTIONS: ReadonlyArray<[string, SectionFn]> = [
  ['disk', diskSection], ['appends', appendSection], ['durable', durableSection], ['reads', readSection], ['fetch', fetchSection], ['e2e', endToEndSection],
  ['hotpath', hotpathSection],
];

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false }, full: { type: 'boolean', default: false }, runs: { type: 'string' },
    out: { type: 'string' }, only: { type: 'string' }, help: { type: 'boolean', short: 'h' },
  },
});
if (values.help === true) {
  console.log(`usage: pnpm bench:report [--quick | --full] [--runs N] [--out DIR] [--only ${SECTIONS.map(([n]) => n).join(',')}]`);
  process.exit(0);
}
const quick = values.quick ?? false;
const full = !quick && (values.full ?? false);
const runs = values.runs === undefined ? (quick ? 1 : full ? 7 : 5) : Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) {
  console.error('--runs must be a positive integer');
  process.exit(2);
}
const only = values.only?.split(',').map((x) => x.trim()) ?? null;
const unknown = only?.filter((o) => !SECTIONS.some(([n]) => n === o)) ?? [];
if (unknown.length > 0) {
  console.error(`unknown section(s): ${unknown.join(', ')}`);
  process.exit(2);
}
const outDir = path.resolve(values.out ?? path.join(here, 'results'));
const options: BenchOptions = { quick, runs };
const profile = quick ? 'quick' : full ? 'full' : 'default';

const report = new Report();
const base = process.env['SEGLOG_BENCH_DIR'] ?? os.tmpdir();
mkdirSync(base, { recursive: true });
const root = mkdtempSync(path.join(base, 'seglog-bench-report-'));
const started = Date.now();
const failures: string[] = [];
const timings: Record<string, number> = {};
try {
  for (const [name, fn] of SECTIONS) {
    if (only !== null && !only.includes(name)) continue;
    const t0 = Date.now();
    process.stderr.write(`[bench:report] ${name} ...\n`);
    const dir = path.join(root, name);
    mkdirSync(dir, { recursive: true });
    try {
      await fn(report, dir, options, full);
    } catch (error) {
      failures.push(`${name}: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
      process.stderr.write(`[bench:report] ${name} FAILED: ${String(error)}\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    timings[name] = (Date.now() - t0) / 1000;
    process.stderr.write(`[bench:report] ${name} done in ${timings[name]!.toFixed(1)} s\n`);
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}

const command = `npx pnpm@12.4.2 bench:report${quick ? ' --quick' : full ? ' --full' : ''}${values.runs === undefined ? '' : ` --runs ${runs}`}${only === null ? '' : ` --only ${only.join(',')}`}`;
const md: string[] = [];
md.push('# seglog benchmark report', '');
md.push(`${new Date(started).toISOString()} — \`${command}\` — ${profile} parameters, ${runs} run(s) per figure, ${((Date.now() - started) / 1000).toFixed(0)} s`);
md.push('', `${environmentLine()}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM; bench dir ${base}`, '');
md.push('Every figure is the median over the runs, with (min–max); cases of a group run in alternating order (ABC, CBA, ...), ' +
  'and ratios compare medians measured in the same run. Raw samples: report.json.', '');
if (failures.length > 0) md.push('**Failed sections** (their figures are missing):', '', ...failures.map((f) => `- ${f.split('\n')[0]}`), '');
const head = headline(report);
md.push('## Headline', '', markdownTable(head.table), '', ...head.interpretation.map((l) => `- ${l}`), '');
for (const s of report.sections) {
  md.push(`## ${s.title}`, '', s.method, '');
  for (const t of s.tables) md.push(markdownTable(t), '');
  for (const c of s.charts) md.push(`![${c}](${c})`, '');
  for (const note of s.notes) md.push(`> ${note}`, '');
}
const markdown = md.join('\n');
mkdirSync(outDir, { recursive: true });
writeFileSync(path.join(outDir, 'report.md'), markdown);
for (const [name, svg] of report.charts) writeFileSync(path.join(outDir, name), svg);
writeFileSync(path.join(outDir, 'report.json'), JSON.stringify({
  command, profile, runs, started: new Date(started).toISOString(), environment: environmentLine(), timings, failures,
  figures: Object.fromEntries([...report.figures].map(([k, f]) => [k, { unit: f.unit, ...stat(f.samples), samples: f.samples }])),
  raw: report.raw,
}, null, 2));
console.log(markdown);
console.log(`\nwrote ${path.relative(process.cwd(), path.join(outDir, 'report.md'))}, report.json and ${report.charts.size} SVG chart(s) in ${path.relative(process.cwd(), outDir) || '.'}`);
if (failures.length > 0) process.exitCode = 1;
