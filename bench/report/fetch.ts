// Section 5: fetch response writing — fetch.bench's grid (coalesce / writev
// for inline fragments, sendfile / pread / coalesce-file for file fragments,
// over loopback TCP to a child process that counts bytes) on a reduced grid,
// and the crossover thresholds it implies (fetch.bench's decision stumps).
import { rmSync } from 'node:fs';
import { connectReader, defaultGrid, fetchFixture, grid, svg, thresholds, type Cell, type GridParams } from '../fetch.bench.js';
import type { BenchOptions } from '../lib/harness.js';
import { fmt, ratio, size, type Report } from './model.js';

const KiB = 1024;
const MiB = 1024 * KiB;

function params(options: BenchOptions, full: boolean): GridParams {
  if (options.quick) return { sizes: [100, MiB], counts: [1], targetBytes: MiB, maxResponses: 50 };
  if (full) return defaultGrid(options);
  return { sizes: [100, KiB, 16 * KiB, 64 * KiB, MiB], counts: [1, 16], targetBytes: 16 * MiB, maxResponses: 1000 };
}

export async function fetchSection(report: Report, _root: string, options: BenchOptions, full: boolean): Promise<void> {
  const p = params(options, full);
  const s = report.section('fetch', 'Fetch: writev vs sendfile crossover',
    `fetch.bench's grid, reduced: fragment sizes ${p.sizes.map(size).join(', ')} × ${p.counts.join(', ')} fragment(s) per response, ` +
    `~${p.targetBytes / MiB} MiB (≤ ${p.maxResponses} responses) per case and run, over loopback TCP to a child process; file fragments in the ` +
    `page cache. Inline: coalesce (one staging copy) vs writev (zero-copy slices); file: sendfile vs pread (+ write) vs coalesce-file. ` +
    `${options.runs} runs, alternating order. \`pnpm bench fetch\` runs the whole grid and the tuning sweeps.`);
  const fixture = await fetchFixture((Math.max(...p.counts) + 1) * (MiB + 8 * KiB));
  const link = await connectReader();
  let cells: Cell[];
  try {
    cells = await grid(options, link, fixture.file, fixture.source, p);
  } finally {
    link.close();
    await fixture.file.close();
    rmSync(fixture.dir, { recursive: true, force: true });
  }
  const strategies = [...new Set(cells.map((c) => c.strategy))];
  const rows: string[][] = [];
  for (const size0 of p.sizes) {
    for (const count of p.counts) {
      const row = cells.filter((c) => c.size === size0 && c.count === count);
      const get = (st: string): Cell | undefined => row.find((c) => c.strategy === st);
      for (const c of row) report.figure(`fetch.${c.strategy}.${size0}x${count}.MBps`, 'MB/s', c.mbpsSamples);
      const sf = get('sendfile');
      const pr = get('pread');
      rows.push([`${size(size0)} × ${count}`, ...strategies.map((st) => fmt(get(st)?.mbpsSamples ?? [])),
        ratio(get('writev')?.mbps ?? NaN, get('coalesce')?.mbps ?? NaN), sf === undefined || pr === undefined ? 'n/a' : ratio(sf.mbps, pr.mbps)]);
    }
  }
  s.tables.push({ caption: 'MB/s median (min–max) over runs', header: ['fragment × count', ...strategies, 'writev / coalesce', 'sendfile / pread'], rows });
  const implied = thresholds(cells);
  s.tables.push({ caption: 'Crossovers implied by this grid (decision stumps over the cells)', header: ['threshold', 'value'], rows: Object.entries(implied).map(([k, v]) => [k, v]) });
  report.raw['fetch'] = { params: p, cells, implied };
  report.raw['fetch.implied'] = implied;
  report.chart(s, 'report-fetch.svg', svg(cells));
}
