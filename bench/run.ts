// `pnpm bench <name> [--quick] [--runs N]`: runs bench/<name>.bench.ts.
import { parseArgs } from 'node:util';
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { environmentLine, type BenchOptions } from './lib/harness.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here).filter((f) => f.endsWith('.bench.ts')).map((f) => f.replace(/\.bench\.ts$/, '')).sort();

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { quick: { type: 'boolean', default: false }, runs: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
});
const name = positionals[0];
if (values.help || name === undefined || !available.includes(name)) {
  console.log(`usage: pnpm bench <name> [--quick] [--runs N]\nbenchmarks: ${available.join(', ')}`);
  process.exit(values.help ? 0 : 2);
}
const runs = values.runs === undefined ? (values.quick ? 3 : 7) : Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) {
  console.error('--runs must be a positive integer');
  process.exit(2);
}
const options: BenchOptions = { quick: values.quick ?? false, runs };
console.log(`# bench ${name} — ${environmentLine()} — runs ${runs}${options.quick ? ' (quick)' : ''}`);
const mod = (await import(pathToFileURL(path.join(here, `${name}.bench.ts`)).href)) as { run(o: BenchOptions): Promise<void> };
await mod.run(options);
