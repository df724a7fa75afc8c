// Benchmark harness. Machines here are shared and noisy, so every figure is a
// median over several runs, cases alternate order between rounds, inputs are
// built and pre-touched before timing, and each benchmark prints a checksum of
// its work (so a run that silently did nothing is visible) and a ratio
// against a baseline measured in the same run.

export interface BenchOptions {
  /** Small parameters: used by the smoke test in `pnpm test` so benchmarks never rot. */
  readonly quick: boolean;
  /** Rounds per case; each round runs every case once, in alternating order. */
  readonly runs: number;
}

export interface Sample {
  /** Wall time of one timed section, in nanoseconds. */
  readonly ns: number;
  /** Units of work (bytes, records, ops) done in it. */
  readonly units: number;
}

export interface Case {
  readonly name: string;
  /** One timed round. Returns units of work done and a checksum contribution. */
  readonly run: () => { units: number; checksum: number } | Promise<{ units: number; checksum: number }>;
  /** Called before the first round, untimed (allocate, pre-touch, warm up). */
  readonly setup?: () => void | Promise<void>;
  readonly teardown?: () => void | Promise<void>;
  /** Called before every round of this case, untimed (open a fresh log, ...). */
  readonly before?: () => void | Promise<void>;
  /** Called after every round of this case, untimed (close and remove what the round wrote). */
  readonly after?: () => void | Promise<void>;
}

export interface CaseResult {
  readonly name: string;
  readonly samples: Sample[];
  /** Units per second for each sample. */
  readonly rates: number[];
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly checksum: number;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Runs every case `runs` times, alternating order each round (ABC, CBA, ABC ...). */
export async function runCases(cases: readonly Case[], options: BenchOptions): Promise<CaseResult[]> {
  for (const c of cases) await c.setup?.();
  const samples = cases.map(() => [] as Sample[]);
  const checksums = cases.map(() => 0);
  for (let round = 0; round < options.runs; round++) {
    const order = cases.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) {
      const c = cases[i]!;
      await c.before?.();
      const t0 = process.hrtime.bigint();
      const r = await c.run();
      const ns = Number(process.hrtime.bigint() - t0);
      await c.after?.();
      samples[i]!.push({ ns, units: r.units });
      checksums[i] = (checksums[i]! + r.checksum) >>> 0;
    }
  }
  for (const c of cases) await c.teardown?.();
  return cases.map((c, i) => {
    const rates = samples[i]!.map((s) => (s.units * 1e9) / Math.max(1, s.ns));
    return {
      name: c.name,
      samples: samples[i]!,
      rates,
      median: median(rates),
      min: Math.min(...rates),
      max: Math.max(...rates),
      checksum: checksums[i]!,
    };
  });
}

export function fmtRate(unitsPerSec: number, unit: string): string {
  if (!Number.isFinite(unitsPerSec)) return 'n/a';
  const scales: Array<[number, string]> = [[1e9, 'G'], [1e6, 'M'], [1e3, 'k'], [1, '']];
  for (const [scale, prefix] of scales) {
    if (Math.abs(unitsPerSec) >= scale) return `${(unitsPerSec / scale).toFixed(2)} ${prefix}${unit}/s`;
  }
  return `${unitsPerSec.toFixed(3)} ${unit}/s`;
}

export function fmtMBps(bytesPerSec: number): string {
  return `${(bytesPerSec / 1e6).toFixed(1)} MB/s`;
}

/** Prints a fixed-width table (first row = header). */
export function printTable(rows: readonly (readonly string[])[]): void {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  rows.forEach((row, r) => {
    console.log(row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  '));
    if (r === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  });
}

/** A line describing the machine, for every result. */
export function environmentLine(): string {
  return `node ${process.version}, UV_THREADPOOL_SIZE=${process.env['UV_THREADPOOL_SIZE'] ?? '4 (default)'}, ` +
    `SEGLOG_NATIVE=${process.env['SEGLOG_NATIVE'] ?? '(on)'}, ${process.platform}/${process.arch}`;
}

/** Writes every byte of `buf` so its pages are resident before timing (see node-platform.md §5.1). */
export function pretouch(buf: Uint8Array): void {
  for (let i = 0; i < buf.length; i += 4096) buf[i] = (buf[i]! + 1) & 0xff;
}
