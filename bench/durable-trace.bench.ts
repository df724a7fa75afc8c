// Where the time of one durable append goes (issue 18): one producer builds a
// 100-record batch, appends it (tryAppendAsLeader, else appendAsLeader) and
// awaits durable(lastOffset), as the hotpath bench's "durable append" case,
// with every segment-file write and sync timestamped through a tracing Io
// wrapper. Prints the medians of each step per write mode next to the same
// run's raw writeSync + fdatasyncSync p50 (alternating rounds).
// Steps: append = build + tryAppend (caller); →write = append returned to
// the write being issued; write = issue to completion callback; →sync = write
// done to sync issued; sync = the fdatasync; →resolved = sync done to
// durable() resolving. A fused write+sync (one pool job) counts as "write+sync".
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AlignedArena, NodeIo } from '@seglog/io';
import type { Io, IoFile } from '@seglog/io';
import { Log, LogConfig } from '@seglog/log';
import type { WriteMode } from '@seglog/log';
import { median, printTable, type BenchOptions } from './lib/harness.js';
import { BatchSource, makePayloads, RECORDS_PER_BATCH, VALUE_BYTES } from './lib/hotpath.js';

const now = (): number => Number(process.hrtime.bigint()) / 1000;

interface Trace { writeStart: number; writeEnd: number; syncStart: number; syncEnd: number; writes: number; fused: boolean }
const trace: Trace = { writeStart: 0, writeEnd: 0, syncStart: 0, syncEnd: 0, writes: 0, fused: false };

/** Wraps a file's data calls with timestamps into `trace` (the last of each kind wins). */
function traced(file: IoFile): IoFile {
  const wrap = Object.create(file) as IoFile;
  const write = (run: () => Promise<void>): Promise<void> => {
    trace.writeStart = now();
    trace.writes++;
    return run().then(() => { trace.writeEnd = now(); });
  };
  wrap.pwritev = (b, p) => write(() => file.pwritev(b, p));
  wrap.pwrite = (b, p) => write(() => file.pwrite(b, p));
  wrap.fdatasync = () => {
    trace.syncStart = now();
    return file.fdatasync().then(() => { trace.syncEnd = now(); });
  };
  wrap.pwritevDatasync = (b, p) => {
    trace.writeStart = now();
    trace.writes++;
    trace.fused = true;
    return file.pwritevDatasync(b, p).then(() => { trace.writeEnd = trace.syncStart = trace.syncEnd = now(); });
  };
  return wrap;
}

function tracingIo(io: NodeIo): NodeIo {
  const wrap = Object.create(io) as NodeIo;
  (wrap as { open: Io['open'] }).open = async (p, o) => {
    const file = await io.open(p, o);
    return p.endsWith('.log') ? traced(file) : file;
  };
  return wrap;
}

const STEPS = ['append', '→write', 'write', '→sync', 'sync', '→resolved', 'total'] as const;

interface Variant { readonly mode: WriteMode; readonly preallocate: boolean }
const variantName = (v: Variant): string => `seglog ${v.mode}${v.preallocate ? ' preallocate' : ''}`;

async function seglogRound(io: NodeIo, arena: AlignedArena, root: string, variant: Variant, source: BatchSource, batches: number): Promise<number[][]> {
  const { mode, preallocate } = variant;
  const dir = mkdtempSync(path.join(root, `${mode}-`));
  // The hotpath bench's config (lib/log-placement.ts logConfig), plus preallocate (zero-filled reservation) for the variant.
  const config = new LogConfig({ segmentBytes: 256 * 1024 * 1024, retentionMs: -1, writeMode: mode, maxMessageBytes: 2 * 1024 * 1024, preallocate });
  const log = await Log.open(tracingIo(io), dir, config, { topic: 'hot', partition: 0, recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: true, arena });
  const steps = STEPS.map(() => [] as number[]);
  let kept = 0;
  try {
    for (let b = 0; b < batches; b++) {
      trace.writeStart = trace.writeEnd = trace.syncStart = trace.syncEnd = 0;
      trace.writes = 0;
      trace.fused = false;
      const t0 = now();
      const batch = source.build(b);
      const r = log.tryAppendAsLeader(batch) ?? (await log.appendAsLeader(batch));
      const tA = now();
      await log.durable(r.lastOffset);
      const tR = now();
      // One write and one sync of this batch (not a pooled append, a reservation fill or a roll's extra work).
      if (trace.writes !== 1 || trace.writeStart < t0 || trace.syncStart < trace.writeEnd) continue;
      kept++;
      const values = [tA - t0, trace.writeStart - tA, trace.writeEnd - trace.writeStart, trace.syncStart - trace.writeEnd,
        trace.syncEnd - trace.syncStart, tR - trace.syncEnd, tR - t0];
      values.forEach((v, i) => steps[i]!.push(v));
    }
  } finally {
    await log.close();
    rmSync(dir, { recursive: true, force: true });
  }
  if (kept < batches / 2) throw new Error(`${variantName(variant)}: only ${kept} of ${batches} batches had one write and one sync`);
  return steps;
}

function rawRound(root: string, source: BatchSource, batches: number): number {
  const file = path.join(root, 'raw');
  const fd = openSync(file, 'w', 0o600);
  const frame = Buffer.allocUnsafe(RECORDS_PER_BATCH * (VALUE_BYTES + 4));
  const lat: number[] = [];
  try {
    let at = 0;
    for (let b = 0; b < batches; b++) {
      const t0 = now();
      const len = source.frames(b, frame);
      let done = 0;
      while (done < len) done += writeSync(fd, frame, done, len - done, at + done);
      fdatasyncSync(fd);
      lat.push(now() - t0);
      at += len;
    }
  } finally {
    closeSync(fd);
    rmSync(file, { force: true });
  }
  return median(lat);
}

export async function run(options: BenchOptions): Promise<void> {
  const batches = options.quick ? 100 : 2000;
  const root = mkdtempSync(path.join(process.env['SEGLOG_BENCH_DIR'] ?? os.tmpdir(), 'seglog-trace-'));
  const io = new NodeIo();
  const arena = new AlignedArena({ chunkBytes: 2 * 1024 * 1024, chunkCount: 8 });
  const source = new BatchSource(makePayloads());
  // Preallocation (zero-filled reservation, LogConfig.preallocate; off by default): appends then overwrite written
  // blocks, whose fdatasync is cheaper than one that extends the file (ARCHITECTURE.md "The write path").
  const modes: Variant[] = [
    { mode: 'buffered', preallocate: false }, { mode: 'direct', preallocate: false },
    { mode: 'buffered', preallocate: true }, { mode: 'direct', preallocate: true },
  ];
  const raw: number[] = [];
  const per = new Map<Variant, number[][]>(modes.map((m) => [m, STEPS.map(() => [])]));
  try {
    for (let round = 0; round < options.runs; round++) {
      const order = round % 2 === 0 ? modes : [...modes].reverse();
      raw.push(rawRound(root, source, batches));
      for (const mode of order) {
        const steps = await seglogRound(io, arena, root, mode, source, batches);
        steps.forEach((s, i) => per.get(mode)![i]!.push(median(s)));
        raw.push(rawRound(root, source, batches)); // the baseline between every case: the disk's state changes fast here
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  console.log(`${batches} durable appends of ${RECORDS_PER_BATCH} × ${VALUE_BYTES} B per round; µs, median over batches, then median of ${options.runs} rounds`);
  const rawP50 = median(raw);
  printTable([
    ['case', ...STEPS, 'vs raw'],
    ['raw write+fdatasync', '-', '-', '-', '-', '-', '-', rawP50.toFixed(0), '1.00x'],
    ...modes.map((m) => {
      const s = per.get(m)!.map((v) => median(v));
      return [variantName(m), ...s.map((v) => v.toFixed(0)), `${(s[s.length - 1]! / rawP50).toFixed(2)}x`];
    }),
  ]);
}
