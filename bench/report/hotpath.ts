// Section "hotpath": issue 18's workload (bench/lib/hotpath.ts) in the report:
// 100 B records in batches of 100, built with our builder, appended, read
// back and decoded — against plain fs, lmdb and better-sqlite3 — plus the
// durable p50 against raw write + fdatasync and 16 producers against one.
import type { CaseResult } from '../lib/harness.js';
import type { BenchOptions } from '../lib/harness.js';
import { hotpathParams, measureHotpath, plainFor } from '../lib/hotpath.js';
import { fmt, num, ratio, stat, type Report } from './model.js';

function slug(name: string): string {
  return name.replace(/^seglog /, '').replace(/[^a-z0-9]+/gi, '');
}

function rateRows(report: Report, figure: string, results: readonly CaseResult[]): string[][] {
  // Each case against plain fs with the same read size (the 4 MiB read cases against plain fs's 4 MiB reads).
  return results.map((r) => {
    const base = results.find((b) => b.name === plainFor(r.name))!;
    const f = report.figure(`hotpath.${figure}.${slug(r.name)}.recps`, 'records/s', r.rates);
    return [r.name, fmt(f.samples), ratio(stat(f.samples).median, base.median)];
  });
}

export async function hotpathSection(report: Report, root: string, options: BenchOptions, full: boolean): Promise<void> {
  const params = hotpathParams(options, full);
  const s = report.section('hotpath', 'Hot path vs plain files',
    `${num(params.records)} records of 100 B in batches of 100 (bench/lib/hotpath.ts): seglog builds each batch with buildBatch, appends it with ` +
    'tryAppendAsLeader (appendAsLeader when null), reads back with PlanBatchReader.scan over read() (verifyCrc, indexRecords) + RecordCursor, ' +
    'CRC-32C checked, in reads of 1 MiB and of 4 MiB; plain fs writes [u32 length][payload] frames with one writeSync per batch and parses ' +
    'readSync chunks of the same two sizes; lmdb and better-sqlite3 write one transaction per batch. Appends end synced. ' +
    `Durable: ${num(params.durableBatches)} batches, a sync per batch. ${options.runs} runs, alternating order; a shared 2-vCPU VM, so the figures are noisy.`);
  const r = await measureHotpath(root, options, params);
  for (const line of r.skipped) s.notes.push(line);
  if (!r.coldEvicts) s.notes.push('The native addon has no posix_fadvise: "cold" reads were served from the page cache.');
  const header = ['store', 'records/s', 'vs plain fs'];
  s.tables.push({ caption: 'appends (build included), median (min–max)', header, rows: rateRows(report, 'append', r.append) });
  s.tables.push({ caption: 'warm sequential reads (page cache; store reopened), every record decoded', header, rows: rateRows(report, 'warmRead', r.warmRead) });
  s.tables.push({ caption: 'cold sequential reads (posix_fadvise DONTNEED first), every record decoded', header, rows: rateRows(report, 'coldRead', r.coldRead) });
  const raw = report.figure('hotpath.durable.raw.p50us', 'µs', r.durableP50us.get('raw') ?? []);
  const rows: string[][] = [['raw writeSync + fdatasyncSync', '-', fmt(raw.samples), '1.00x', '-']];
  for (const c of r.durable) {
    if (c.name === 'raw') continue;
    // 'seglog buffered p1' -> 'buffered'; 'seglog direct preallocate p1' -> 'direct-preallocate'.
    const key = c.name.replace(/ p\d+$/, '');
    const mode = key.replace(/^seglog /, '').replaceAll(' ', '-');
    const producers = c.name.endsWith('p16') ? 16 : 1;
    const rate = report.figure(`hotpath.durable.${mode}.p${producers}.recps`, 'records/s', c.rates);
    if (producers === 1) {
      const p50 = report.figure(`hotpath.durable.${mode}.p50us`, 'µs', r.durableP50us.get(key) ?? []);
      rows.push([c.name, fmt(rate.samples), fmt(p50.samples), ratio(stat(p50.samples).median, stat(raw.samples).median), '-']);
    } else {
      rows.push([c.name, fmt(rate.samples), '-', '-', ratio(stat(rate.samples).median, report.med(`hotpath.durable.${mode}.p1.recps`))]);
    }
  }
  s.tables.push({ caption: 'durable appends, a sync per batch', header: ['case', 'records/s', 'p50 µs', 'p50 vs raw', 'vs 1 producer'], rows });
}
