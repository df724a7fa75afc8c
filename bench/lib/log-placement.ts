// Part of `pnpm bench log` (bench/log.bench.ts): the direct-I/O write path and
// caller/pool placement, measured in one run on the disk under the bench root.
//
// 1. Append throughput per batch size (16 KiB, 256 KiB, 1 MiB), every figure
//    "in the file and fdatasynced": the disk's own O_DIRECT bandwidth
//    (sequential pwrite from an AlignedArena chunk through NodeIo with
//    direct: true, then fdatasync — the reference), the Log in direct mode,
//    the Log in buffered mode, and plain fs.writeSync + fdatasync. Batch
//    buffers are reused only after written() of their previous append
//    resolved (the log patches offsets in place).
// 2. Placement during those engine runs with a caught-up consumer running
//    beside the appends (await written(offset), read(offset, 1 MiB), repeat):
//    the share of appends and of its reads served on the caller.
// 3. Read throughput of the active segment: read(1 MiB) + toBuffer from the
//    tail cache (caller, inline parts) vs the same bytes after evicting the
//    cache (pool, file parts from the page cache).
import { closeSync, fdatasyncSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { AlignedArena, NodeIo } from '@seglog/io';
import { Log, LogConfig } from '@seglog/log';
import type { WriteMode } from '@seglog/log';
import { buildBatch, RecordBatch } from '@seglog/records';
import type { RecordInput } from '@seglog/records';
import { fmtMBps, printTable, runCases } from './harness.js';
import type { BenchOptions, Case, CaseResult } from './harness.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const T0 = 1_700_000_000_000;

export function makeBatch(bytes: number, seed: number, valueBytes = 1000): Buffer {
  const records: RecordInput[] = [];
  const count = Math.max(1, Math.floor((bytes - 61) / (valueBytes + (valueBytes < 128 ? 8 : 12))));
  let x = seed >>> 0;
  for (let r = 0; r < count; r++) {
    const value = Buffer.allocUnsafe(valueBytes);
    for (let i = 0; i < valueBytes; i++) {
      x = (x * 1103515245 + 12345) >>> 0;
      value[i] = 32 + ((x >>> 16) % 95);
    }
    records.push({ key: null, value, timestampDelta: r });
  }
  return buildBatch({ records, baseTimestamp: T0 });
}

export interface SizeSetup {
  readonly batchBytes: number;
  readonly batches: Buffer[];
  readonly views: RecordBatch[];
  readonly count: number;
  readonly totalBytes: number;
}

export function sizeSetup(batchBytes: number, totalTarget: number, valueBytes = 1000): SizeSetup {
  const slots = Math.max(4, Math.min(32, Math.floor((8 * MiB) / batchBytes)));
  const batches = Array.from({ length: slots }, (_, i) => makeBatch(batchBytes, i + 1, valueBytes));
  const count = Math.max(slots, Math.floor(totalTarget / batches[0]!.length));
  let totalBytes = 0;
  for (let i = 0; i < count; i++) totalBytes += batches[i % slots]!.length;
  return { batchBytes, batches, views: batches.map((b) => new RecordBatch(b)), count, totalBytes };
}

/** `preallocate`: zero-filled reservation growth (LogConfig.preallocate, off by default). */
export function logConfig(writeMode: WriteMode, segmentBytes: number, preallocate = false): LogConfig {
  return new LogConfig({ segmentBytes, retentionMs: -1, writeMode, maxMessageBytes: 2 * MiB, preallocate });
}

export interface PlacementTotals { appendCaller: number; appendPool: number; readCaller: number; readPool: number }

/** Appends everything while a caught-up consumer tails the log (waits for written(), reads 1 MiB); flush; returns the log size. */
export async function appendWithConsumer(log: Log, s: SizeSetup, totals: PlacementTotals): Promise<number> {
  const slots = s.batches.length;
  const slotWritten: Array<Promise<void> | undefined> = new Array(slots);
  for (const view of s.views) view.setBaseOffset(0);
  const a0 = { ...log.placement.append };
  const r0 = { ...log.placement.read };
  let records = 0;
  for (let i = 0; i < s.count; i++) records += s.views[i % slots]!.lastOffsetDelta + 1;
  const start = log.logEndOffset;
  const consumer = (async () => {
    let offset = start;
    while (offset < start + records) {
      // written() refuses an offset not appended yet (SEGLOG_ERR_LOG_OFFSET_NOT_APPENDED):
      // a caught-up tailer yields a turn until the producer has appended it.
      while (offset >= log.logEndOffset) await new Promise<void>((resolve) => setImmediate(resolve));
      await log.written(offset);
      const plan = await log.read(offset, MiB);
      offset = plan.nextOffset;
      await plan.release();
    }
  })();
  for (let i = 0; i < s.count; i++) {
    const slot = i % slots;
    const previous = slotWritten[slot];
    if (previous !== undefined) {
      await previous;
      s.views[slot]!.setBaseOffset(0);
    }
    const result = await log.appendAsLeader(s.batches[slot]!, { leaderEpoch: 0 });
    slotWritten[slot] = log.written(result.lastOffset);
  }
  await consumer;
  await log.flush();
  totals.appendCaller += log.placement.append.caller - a0.caller;
  totals.appendPool += log.placement.append.pool - a0.pool;
  totals.readCaller += log.placement.read.caller - r0.caller;
  totals.readPool += log.placement.read.pool - r0.pool;
  return log.size;
}

export function writePlain(file: string, s: SizeSetup): number {
  const fd = openSync(file, 'w', 0o600);
  let bytes = 0;
  try {
    for (let i = 0; i < s.count; i++) {
      const batch = s.batches[i % s.batches.length]!;
      let done = 0;
      while (done < batch.length) done += writeSync(fd, batch, done, batch.length - done, bytes + done);
      bytes += batch.length;
    }
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return bytes;
}

/** The disk's O_DIRECT bandwidth: sequential aligned pwrites of batchBytes rounded up to 4 KiB, then fdatasync. */
export async function writeDirectRaw(io: NodeIo, file: string, s: SizeSetup, arena: AlignedArena): Promise<number> {
  const chunk = arena.acquire();
  if (chunk === null) throw new Error('arena exhausted');
  const handle = await io.open(file, { create: true, direct: true });
  const unit = Math.ceil(s.batchBytes / 4096) * 4096;
  let position = 0;
  try {
    s.batches[0]!.copy(chunk, 0, 0, Math.min(unit, s.batches[0]!.length));
    while (position < s.totalBytes) {
      await handle.pwrite(chunk.subarray(0, unit), position);
      position += unit;
    }
    await handle.fdatasync();
  } finally {
    await handle.close();
    arena.release(chunk);
  }
  return s.totalBytes;
}

function rowOf(result: CaseResult, baseline: CaseResult, extra: string): string[] {
  return [result.name, fmtMBps(result.median), `${(result.min / 1e6).toFixed(0)}-${(result.max / 1e6).toFixed(0)}`, `${(result.median / baseline.median).toFixed(2)}x`, extra];
}

const pct = (part: number, whole: number): string => (whole === 0 ? '-' : `${((100 * part) / whole).toFixed(1)}%`);

async function appendTables(root: string, options: BenchOptions, io: NodeIo, arena: AlignedArena): Promise<void> {
  const totalTarget = options.quick ? 8 * MiB : 64 * MiB;
  const rows: string[][] = [];
  const placementRows: string[][] = [];
  for (const batchBytes of [16 * KiB, 256 * KiB, MiB]) {
    mkdirSync(root, { recursive: true });
    const s = sizeSetup(batchBytes, totalTarget);
    let run = 0;
    const logs: Log[] = [];
    const totals: Record<WriteMode, PlacementTotals> = {
      direct: { appendCaller: 0, appendPool: 0, readCaller: 0, readPool: 0 },
      buffered: { appendCaller: 0, appendPool: 0, readCaller: 0, readPool: 0 },
    };
    const engine = (mode: WriteMode): Case => ({
      name: `engine ${mode}`,
      run: async () => {
        const log = await Log.open(io, path.join(root, `${mode}-${batchBytes}-${run++}`), logConfig(mode, 64 * MiB), {
          topic: 'bench', partition: 0, recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: true, arena,
          tailCache: { maxBytes: 16 * MiB },
        });
        logs.push(log);
        if (log.writeMode !== mode) throw new Error(`wanted ${mode}, the log writes ${log.writeMode} (O_DIRECT refused under ${root}?)`);
        const bytes = await appendWithConsumer(log, s, totals[mode]);
        return { units: bytes, checksum: bytes >>> 0 };
      },
      teardown: async () => {
        for (const log of logs.splice(0)) await log.close();
      },
    });
    const cases: Case[] = [
      { name: 'disk: O_DIRECT pwrite QD1 + fdatasync', run: async () => { const b = await writeDirectRaw(io, path.join(root, `raw-${batchBytes}-${run++}`), s, arena); return { units: b, checksum: b >>> 0 }; } },
      engine('direct'),
      engine('buffered'),
      { name: 'plain: fs.writeSync + fdatasync', run: () => { const b = writePlain(path.join(root, `plain-${batchBytes}-${run++}`), s); return { units: b, checksum: b >>> 0 }; } },
    ];
    const results = await runCases(cases, options);
    rmSync(root, { recursive: true, force: true });
    const [disk, direct, buffered, plain] = results as [CaseResult, CaseResult, CaseResult, CaseResult];
    const label = `${batchBytes / KiB} KiB`;
    for (const r of [disk, direct, buffered, plain]) rows.push([label, ...rowOf(r, disk, `${(r.median / plain.median).toFixed(2)}x`)]);
    for (const mode of ['direct', 'buffered'] as const) {
      const t = totals[mode];
      placementRows.push([label, mode, pct(t.appendCaller, t.appendCaller + t.appendPool), `${t.appendCaller}/${t.appendCaller + t.appendPool}`, pct(t.readCaller, t.readCaller + t.readPool), `${t.readCaller}/${t.readCaller + t.readPool}`]);
    }
  }
  console.log(`\nAppend throughput by batch size (${(totalTarget / MiB).toFixed(0)} MiB per run, 1000 B records, fdatasync included, segment.bytes 64 MiB), in ${root}`);
  printTable([['batch', 'case', 'MB/s (median)', 'min-max MB/s', 'vs disk O_DIRECT', 'vs plain fs'], ...rows]);
  console.log('\nPlacement during the engine runs (a caught-up consumer tails the log: written(offset), read(offset, 1 MiB))');
  printTable([['batch', 'mode', 'appends on caller', 'caller/all', 'caught-up reads on caller', 'caller/all'], ...placementRows]);
}

async function readTable(root: string, options: BenchOptions, io: NodeIo): Promise<void> {
  const s = sizeSetup(16 * KiB, options.quick ? 8 * MiB : 32 * MiB);
  const log = await Log.open(io, path.join(root, 'cache-read'), logConfig('buffered', 64 * MiB), {
    topic: 'bench', partition: 0, recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: true, tailCache: { maxBytes: 64 * MiB },
  });
  try {
    await appendWithConsumer(log, s, { appendCaller: 0, appendPool: 0, readCaller: 0, readPool: 0 });
    const readAll = async (): Promise<{ units: number; checksum: number; kind: string }> => {
      let offset = log.logStartOffset;
      let bytes = 0;
      let sum = 0;
      let kind = '';
      while (offset < log.logEndOffset) {
        const plan = await log.read(offset, MiB);
        kind = plan.parts[0]?.kind ?? kind;
        const buffer = await plan.toBuffer();
        await plan.release();
        sum = (sum + buffer[buffer.length >> 1]! + buffer.length) >>> 0;
        bytes += buffer.length;
        offset = plan.nextOffset;
      }
      return { units: bytes, checksum: sum, kind };
    };
    const cached = await readAll();
    if (cached.kind !== 'inline') throw new Error(`expected cache reads, got ${cached.kind}`);
    const cacheCase: Case = { name: 'tail cache (caller, inline)', run: readAll };
    const [fromCache] = (await runCases([cacheCase], options)) as [CaseResult];
    log.tailCache.evict(Number.MAX_SAFE_INTEGER);
    const fileCase: Case = { name: 'file (pool, page cache)', run: readAll };
    await readAll();
    const [fromFile] = (await runCases([fileCase], options)) as [CaseResult];
    if (fromCache.checksum !== fromFile.checksum) throw new Error(`read checksums differ: cache ${fromCache.checksum}, file ${fromFile.checksum}`);
    console.log(`\nActive-segment read, read(1 MiB) + toBuffer of ${(s.totalBytes / MiB).toFixed(0)} MiB in 16 KiB batches: tail cache vs file`);
    printTable([['source', 'MB/s (median)', 'min-max MB/s', 'vs file', 'checksum'], rowOf(fromCache, fromFile, String(fromCache.checksum)), rowOf(fromFile, fromFile, String(fromFile.checksum))]);
  } finally {
    await log.close();
  }
}

/** The direct-path and placement tables of `pnpm bench log`. */
export async function runPlacementTables(root: string, options: BenchOptions): Promise<void> {
  const io = new NodeIo();
  const arena = new AlignedArena({ chunkBytes: 2 * MiB, chunkCount: 16 });
  await appendTables(path.join(root, 'direct'), options, io, arena);
  await readTable(path.join(root, 'cache'), options, io);
}
