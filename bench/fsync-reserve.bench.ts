// fdatasync latency after appends into each kind of reserved space
// (SegmentReservation's modes, packages/log/src/segment/segment-reservation.ts):
// - none: appends extend the file (size change → journal commit per sync);
// - fallocate: fallocate(2) mode 0 ahead (unwritten extents, size extended);
// - fallocate-keep-size: FALLOC_FL_KEEP_SIZE ahead (size still grows per append);
// - truncate: ftruncate ahead (sparse: allocation on first write);
// - zero: zeros written ahead, then fdatasync'd (appends are overwrites).
// For each mode and append size (4 KiB, 64 KiB), a fresh file is reserved
// (untimed, made durable by one fdatasync), then `ops` times: pwrite at the
// end, fdatasync; the fdatasync alone is timed for p50/p99, the write+sync
// loop for syncs/s. Buffered writes (the default write path) and O_DIRECT
// writes from an AlignedArena. Medians over runs, alternating case order.
// The ratio column compares each mode's p50 against 'none' in the same run.
// The file lives under os.tmpdir() (ext4 here); SEGLOG_BENCH_DIR chooses.
//
// Result on the reference VM (2 vCPU, ext4 on virtio, native fallocate;
// `pnpm bench fsync-reserve --runs 5`, two invocations, fdatasync p50 µs,
// run 1 / run 2; the machine was shared with other test runs, so p99 and
// syncs/s swing by 10x between runs and are not used for the decision):
//
//   append                 none      fallocate  keep-size  truncate  zero
//   buffered 4 KiB         139/107   111/87     103/86     101/91    75/77
//   buffered 64 KiB        143/136   140/135    131/141    151/144   97/110
//   O_DIRECT 4 KiB          73/64     60/61      64/64      59/65    34/39
//   O_DIRECT 64 KiB         56/66     64/67      66/65      62/65    45/44
//
// 'zero' is the fastest in every row of both runs (0.47-0.81x of 'none');
// the fallocate modes and truncate are within noise of 'none' (unwritten
// extents or allocation still change metadata at the first write). The
// price of 'zero' is the fill itself: ~0.9-1.1 ms per MiB reserved (a 16 MiB
// step ≈ 16 ms of pool work, each byte written twice). Hence
// DEFAULT_PREALLOCATE_MODE = 'zero' in packages/log/src/segment/segment-reservation.ts.
import { AlignedArena, NodeIo } from '@seglog/io';
import type { AllocateMode, IoFile } from '@seglog/io';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { median, pretouch, printTable, type BenchOptions } from './lib/harness.js';

const KiB = 1024;
type Mode = 'none' | AllocateMode;
const MODES: readonly Mode[] = ['none', 'fallocate', 'fallocate-keep-size', 'truncate', 'zero'];

export interface CaseSpec {
  readonly mode: Mode;
  readonly size: number;
  readonly direct: boolean;
}

export interface RoundResult {
  readonly p50Us: number;
  readonly p99Us: number;
  readonly syncsPerSec: number;
  /** The reservation itself (allocate + fdatasync), per MiB reserved: pool work, not on the append path. */
  readonly reserveMsPerMiB: number;
  readonly checksum: number;
}

function percentile(sorted: Float64Array, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

export async function runCase(io: NodeIo, dir: string, spec: CaseSpec, ops: number, data: Buffer, n: number): Promise<RoundResult> {
  const file = path.join(dir, `f${n}`);
  const handle: IoFile = await io.open(file, { create: true, direct: spec.direct });
  const total = ops * spec.size;
  try {
    const r0 = process.hrtime.bigint();
    if (spec.mode !== 'none') await handle.allocate(0, total, spec.mode);
    await handle.fdatasync();
    const reserveMsPerMiB = Number(process.hrtime.bigint() - r0) / 1e6 / (total / (1024 * KiB));
    const latencies = new Float64Array(ops);
    const buf = data.subarray(0, spec.size);
    let checksum = 0;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < ops; i++) {
      await handle.pwrite(buf, i * spec.size);
      const s0 = process.hrtime.bigint();
      await handle.fdatasync();
      latencies[i] = Number(process.hrtime.bigint() - s0) / 1000;
      checksum = (checksum + i) >>> 0;
    }
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    latencies.sort();
    return { p50Us: percentile(latencies, 0.5), p99Us: percentile(latencies, 0.99), syncsPerSec: ops / seconds, reserveMsPerMiB, checksum: (checksum + (await handle.size())) >>> 0 };
  } finally {
    await handle.close();
    await io.unlink(file);
  }
}

export async function run(options: BenchOptions): Promise<void> {
  const dir = mkdtempSync(path.join(process.env['SEGLOG_BENCH_DIR'] ?? os.tmpdir(), 'seglog-bench-fsync-'));
  const io = new NodeIo();
  const arena = new AlignedArena({ chunkBytes: 64 * KiB, chunkCount: 1 });
  const data = arena.acquire()!;
  data.fill(0x61);
  pretouch(data);
  const ops = options.quick ? 60 : 2000;
  const specs: CaseSpec[] = [];
  for (const direct of [false, true]) for (const size of [4 * KiB, 64 * KiB]) for (const mode of MODES) specs.push({ mode, size, direct });
  const results = specs.map(() => [] as RoundResult[]);
  let n = 0;
  try {
    // Warm-up, untimed: one short case per I/O kind.
    await runCase(io, dir, { mode: 'none', size: 4 * KiB, direct: false }, 20, data, n++);
    await runCase(io, dir, { mode: 'none', size: 4 * KiB, direct: true }, 20, data, n++);
    for (let round = 0; round < options.runs; round++) {
      const order = specs.map((_, i) => i);
      if (round % 2 === 1) order.reverse();
      for (const i of order) results[i]!.push(await runCase(io, dir, specs[i]!, ops, data, n++));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const rows = [['writes', 'append', 'reserve mode', 'fdatasync p50 µs', 'p99 µs', 'syncs/s', 'p50 vs none', 'reserve ms/MiB', 'checksum']];
  for (const [i, spec] of specs.entries()) {
    const r = results[i]!;
    const base = results[specs.findIndex((s) => s.mode === 'none' && s.size === spec.size && s.direct === spec.direct)]!;
    const p50 = median(r.map((x) => x.p50Us));
    rows.push([
      spec.direct ? 'O_DIRECT' : 'buffered', `${spec.size / KiB} KiB`, spec.mode,
      p50.toFixed(0), median(r.map((x) => x.p99Us)).toFixed(0), median(r.map((x) => x.syncsPerSec)).toFixed(0),
      `${(p50 / median(base.map((x) => x.p50Us))).toFixed(2)}x`,
      spec.mode === 'none' ? '-' : median(r.map((x) => x.reserveMsPerMiB)).toFixed(2),
      String(r.reduce((c, x) => (c + x.checksum) >>> 0, 0)),
    ]);
  }
  console.log(`\nfdatasync after each append, ${ops} appends per case, medians over ${options.runs} runs (native fallocate: ${io.stats.allocateNative > 0 ? 'yes' : 'no, fell back'})`);
  printTable(rows);
}
