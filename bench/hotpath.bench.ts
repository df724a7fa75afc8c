// The hot path against plain fs, lmdb and better-sqlite3 (issue 18): appends
// (build cost included), durable appends (p50 vs raw write + fdatasync, 16
// producers vs 1), warm and cold sequential reads with every record decoded.
// The workload and the cases are in lib/hotpath.ts; bench/report/hotpath.ts
// puts the same figures into `pnpm bench:report`.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fmtRate, printTable, type BenchOptions, type CaseResult } from './lib/harness.js';
import { hotpathParams, measureDurableOnly, measureHotpath, plainFor } from './lib/hotpath.js';

function ratioTable(title: string, results: readonly CaseResult[]): void {
  // Each case against plain fs with the same read size.
  const base = (name: string): number => results.find((r) => r.name === plainFor(name))!.median;
  console.log(`\n${title}`);
  printTable([
    ['store', 'records/s (median)', 'min', 'max', 'vs plain fs'],
    ...results.map((r) => [r.name, fmtRate(r.median, 'rec'), fmtRate(r.min, 'rec'), fmtRate(r.max, 'rec'), `${(r.median / base(r.name)).toFixed(2)}x`]),
  ]);
}

export async function run(options: BenchOptions): Promise<void> {
  const params = hotpathParams(options);
  const root = mkdtempSync(path.join(process.env['SEGLOG_BENCH_DIR'] ?? os.tmpdir(), 'seglog-hotpath-'));
  try {
    console.log(`${params.records} records of 100 B in batches of 100; durable: ${params.durableBatches} batches; ${options.runs} alternating rounds (shared machine: figures are noisy)`);
    // SEGLOG_BENCH_HOTPATH=durable: only the durable-append table (a quicker loop; the full run gives the figures of record).
    const durableOnly = process.env['SEGLOG_BENCH_HOTPATH'] === 'durable';
    if (durableOnly) console.log('SEGLOG_BENCH_HOTPATH=durable: appends and reads skipped');
    const full = durableOnly ? null : await measureHotpath(root, options, params);
    const r = full ?? (await measureDurableOnly(root, options, params));
    if (full !== null) {
      for (const line of full.skipped) console.log(line);
      ratioTable('append (built, appended, synced at the end)', full.append);
      ratioTable('warm sequential read (page cache, store reopened), every record decoded, seglog CRC-checked', full.warmRead);
      ratioTable(`cold sequential read${full.coldEvicts ? ' (posix_fadvise DONTNEED first)' : ' (no fadvise: NOT cold, same as warm)'}`, full.coldRead);
    }
    const rawP50 = median(r.durableP50us.get('raw')!);
    console.log('\ndurable append (a sync per batch)');
    const one = new Map(r.durable.map((c) => [c.name, c.median]));
    printTable([
      ['case', 'records/s (median)', 'p50 µs (median of rounds)', 'p50 vs raw p50', 'vs 1 producer'],
      ...r.durable.map((c) => {
        const key = c.name.replace(/ p\d+$/, '');
        const p = c.name.endsWith(' p16') ? Number.NaN : median(r.durableP50us.get(key) ?? []);
        const single = one.get(c.name.replace(/ p16$/, ' p1'));
        return [c.name, fmtRate(c.median, 'rec'), Number.isFinite(p) ? p.toFixed(0) : '-', Number.isFinite(p) ? `${(p / rawP50).toFixed(2)}x` : '-',
          c.name.endsWith(' p16') && single !== undefined ? `${(c.median / single).toFixed(2)}x` : '-'];
      }),
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
