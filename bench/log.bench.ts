// The Log's append and sequential read throughput on a real disk, each
// against plain node:fs doing the same job in the same run:
// - append: 100-byte records in batches of 100 through Log.appendAsLeader on
//   NodeIo, then flush() (one fdatasync) — vs fs.writeSync of the same batch
//   bytes to one file, one call per batch, then fdatasync. Both figures are
//   "in the file and synced". The engine's cost includes validation (CRC-32C
//   of every batch), offset assignment, index bookkeeping, the coalesced
//   pwritev queue and its segment rolls (segment.bytes = total / 4).
// - read: Log.read(offset, 1 MiB) + FetchPlan.toBuffer() from the log start
//   to the end — vs fs.readSync of the same .log files in 1 MiB chunks into
//   one reused buffer. The files were just written, so both read from the
//   page cache: the ratio is the engine's read-path overhead.
// Batches are built once, pre-touched and reused (the log patches a base
// offset and leader epoch into a batch in place, so a buffer is reused only
// after written() of its previous append resolved, with its base offset
// reset to 0), so the figures measure the engine, not the batch builder.
// Checksums: bytes on disk for appends (engine and plain must match), and a
// sample of the byte stream for reads (must match between engine and plain).
// The directory is under os.tmpdir() (ext4 here); SEGLOG_BENCH_DIR overrides.
// Then bench/lib/log-placement.ts: append throughput for 16 KiB / 256 KiB /
// 1 MiB batches (disk O_DIRECT reference, Log direct, Log buffered, plain fs),
// the share of appends and caught-up reads served on the caller, and active-
// segment reads from the tail cache vs the file.
import { closeSync, fdatasyncSync, mkdirSync, mkdtempSync, openSync, readdirSync, readSync, rmSync, statSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NodeIo } from '@seglog/io';
import { Log, LogConfig } from '@seglog/log';
import { buildBatch, RecordBatch, type RecordInput } from '@seglog/records';
import { fmtMBps, fmtRate, pretouch, printTable, runCases, type BenchOptions, type Case, type CaseResult } from './lib/harness.js';
import { runPlacementTables } from './lib/log-placement.js';

const MiB = 1024 * 1024;
const RECORD_VALUE_BYTES = 100;
const RECORDS_PER_BATCH = 100;
/** Distinct batch buffers cycled through (about 1 MiB of batches). */
const BATCH_SLOTS = 96;
const READ_BYTES = MiB;
const T0 = 1_700_000_000_000;

function makeBatch(seed: number): Buffer {
  const records: RecordInput[] = [];
  let x = seed >>> 0;
  for (let r = 0; r < RECORDS_PER_BATCH; r++) {
    const value = Buffer.allocUnsafe(RECORD_VALUE_BYTES);
    for (let i = 0; i < value.length; i++) {
      x = (x * 1103515245 + 12345) >>> 0;
      value[i] = 32 + ((x >>> 16) % 95);
    }
    records.push({ key: null, value, timestampDelta: r });
  }
  // buildBatch writes every byte (and computes the CRC over them), so the pages are resident: no pretouch
  // here, which would change bytes under the CRC.
  return buildBatch({ records, baseTimestamp: T0 });
}

interface Setup {
  readonly root: string;
  readonly batches: Buffer[];
  readonly views: RecordBatch[];
  readonly batchCount: number;
  readonly totalBytes: number;
  readonly config: LogConfig;
}

function openLog(io: NodeIo, dir: string, config: LogConfig): Promise<Log> {
  return Log.open(io, dir, config, { topic: 'bench', partition: 0, recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: true });
}

/** Appends every batch (cycling through the slots), then flush(); returns the bytes in the log. */
async function appendAll(log: Log, setup: Setup): Promise<number> {
  const slotWritten: Array<Promise<void> | undefined> = new Array(BATCH_SLOTS);
  for (const view of setup.views) view.setBaseOffset(0);
  for (let i = 0; i < setup.batchCount; i++) {
    const slot = i % BATCH_SLOTS;
    const previous = slotWritten[slot];
    if (previous !== undefined) {
      await previous;
      setup.views[slot]!.setBaseOffset(0);
    }
    const appended = log.appendAsLeader(setup.batches[slot]!, { leaderEpoch: 0 });
    slotWritten[slot] = appended.then((result) => log.written(result.lastOffset));
  }
  await log.flush();
  return log.size;
}

/** One call per batch, like the appends, then one fdatasync; returns the bytes written. */
function writeAllPlain(file: string, setup: Setup): number {
  const fd = openSync(file, 'w', 0o600);
  let bytes = 0;
  try {
    for (let i = 0; i < setup.batchCount; i++) {
      const batch = setup.batches[i % BATCH_SLOTS]!;
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

/** A checksum of a byte stream read in arbitrary chunks: the bytes at every 4096th stream position, and the length. */
class StreamSample {
  position = 0;
  sum = 0;
  add(buf: Buffer, length: number): void {
    const start = (4096 - (this.position % 4096)) % 4096;
    for (let i = start; i < length; i += 4096) this.sum = (this.sum + buf[i]! * ((this.position + i) / 4096 + 1)) >>> 0;
    this.position += length;
  }
  get value(): number {
    return (this.sum + this.position) >>> 0;
  }
}

async function readAllEngine(log: Log): Promise<{ bytes: number; checksum: number }> {
  const sample = new StreamSample();
  let offset = log.logStartOffset;
  const end = log.logEndOffset;
  while (offset < end) {
    const plan = await log.read(offset, READ_BYTES);
    const bytes = await plan.toBuffer();
    await plan.release();
    if (bytes.length === 0) throw new Error(`empty read at ${offset} below the log end ${end}`);
    sample.add(bytes, bytes.length);
    offset = plan.nextOffset;
  }
  return { bytes: sample.position, checksum: sample.value };
}

function readAllPlain(files: readonly string[], buf: Buffer): { bytes: number; checksum: number } {
  const sample = new StreamSample();
  for (const file of files) {
    const fd = openSync(file, 'r');
    try {
      let position = 0;
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, position);
        if (n === 0) break;
        sample.add(buf, n);
        position += n;
      }
    } finally {
      closeSync(fd);
    }
  }
  return { bytes: sample.position, checksum: sample.value };
}

function row(result: CaseResult, recordsPerRun: number, bytesPerRun: number, baseline: CaseResult): string[] {
  // runCases measures bytes per second; records/s follow from the bytes per record of this run.
  const records = (rate: number): number => (rate * recordsPerRun) / bytesPerRun;
  return [
    result.name,
    fmtRate(records(result.median), 'rec'),
    fmtMBps(result.median),
    `${(result.min / 1e6).toFixed(0)}-${(result.max / 1e6).toFixed(0)}`,
    `${(result.median / baseline.median).toFixed(2)}x`,
    String(result.checksum),
  ];
}

async function appendTable(setup: Setup, options: BenchOptions, io: NodeIo): Promise<Log> {
  let run = 0;
  // Each round writes a fresh log / file. They are closed and removed only in
  // teardown: removing 256 MiB at the start of the next round cost ~100 ms of
  // unlink inside the timed section (cpu profile), so the disk holds
  // runs × 2 × total bytes until the end.
  const logs: Log[] = [];
  const cases: Case[] = [
    {
      name: 'engine: appendAsLeader + flush',
      run: async () => {
        const log = await openLog(io, path.join(setup.root, `engine-${run++}`), setup.config);
        logs.push(log);
        const bytes = await appendAll(log, setup);
        return { units: bytes, checksum: bytes >>> 0 };
      },
      teardown: async () => {
        for (const log of logs) await log.close();
      },
    },
    {
      name: 'plain: fs.writeSync per batch + fdatasync',
      run: () => {
        const bytes = writeAllPlain(path.join(setup.root, `plain-${run++}.log`), setup);
        return { units: bytes, checksum: bytes >>> 0 };
      },
    },
  ];
  const results = await runCases(cases, options);
  for (const name of readdirSync(setup.root)) rmSync(path.join(setup.root, name), { recursive: true, force: true });
  const [engine, plain] = results as [CaseResult, CaseResult];
  if (engine.checksum !== plain.checksum) throw new Error(`append checksums differ: engine ${engine.checksum}, plain ${plain.checksum}`);
  const records = setup.batchCount * RECORDS_PER_BATCH;
  console.log(`\nAppend ${records} records of ${RECORD_VALUE_BYTES} B in ${setup.batchCount} batches of ${RECORDS_PER_BATCH} ` +
    `(${setup.batches[0]!.length} B each, ${(setup.totalBytes / MiB).toFixed(1)} MiB), segment.bytes ${(setup.config.segmentBytes / MiB).toFixed(1)} MiB, ` +
    `final fdatasync included, in ${setup.root}`);
  printTable([['case', 'records/s (median)', 'MB/s (median)', 'min-max MB/s', 'vs plain', 'checksum'], row(engine, records, setup.totalBytes, plain), row(plain, records, setup.totalBytes, plain)]);
  // The log the read table uses: written once more, closed and reopened (clean), outside any timing.
  const dir = path.join(setup.root, 'read');
  const writer = await openLog(io, dir, setup.config);
  await appendAll(writer, setup);
  await writer.close();
  return openLog(io, dir, setup.config);
}

async function readTable(log: Log, setup: Setup, options: BenchOptions): Promise<void> {
  const files = readdirSync(log.dir).filter((name) => name.endsWith('.log')).sort().map((name) => path.join(log.dir, name));
  const fileBytes = files.reduce((sum, file) => sum + statSync(file).size, 0);
  const buf = Buffer.allocUnsafe(READ_BYTES);
  pretouch(buf);
  const cases: Case[] = [
    { name: 'engine: read(1 MiB) + toBuffer', run: async () => { const r = await readAllEngine(log); return { units: r.bytes, checksum: r.checksum }; } },
    { name: 'plain: fs.readSync 1 MiB chunks', run: () => { const r = readAllPlain(files, buf); return { units: r.bytes, checksum: r.checksum }; } },
  ];
  for (const c of cases) await c.run(); // warm: both read the page cache
  const results = await runCases(cases, options);
  const [engine, plain] = results as [CaseResult, CaseResult];
  if (engine.checksum !== plain.checksum) throw new Error(`read checksums differ: engine ${engine.checksum}, plain ${plain.checksum}`);
  const records = log.logEndOffset - log.logStartOffset;
  console.log(`\nSequential read of ${records} records (${(fileBytes / MiB).toFixed(1)} MiB in ${files.length} segments), page cache warm`);
  printTable([['case', 'records/s (median)', 'MB/s (median)', 'min-max MB/s', 'vs plain', 'checksum'], row(engine, records, fileBytes, plain), row(plain, records, fileBytes, plain)]);
}

export async function run(options: BenchOptions): Promise<void> {
  const totalTarget = options.quick ? 16 * MiB : 128 * MiB;
  const base = process.env['SEGLOG_BENCH_DIR'] ?? os.tmpdir();
  mkdirSync(base, { recursive: true });
  const root = mkdtempSync(path.join(base, 'seglog-bench-log-'));
  const batches = Array.from({ length: BATCH_SLOTS }, (_, i) => makeBatch(i + 1));
  const batchCount = Math.max(BATCH_SLOTS, Math.floor(totalTarget / batches[0]!.length));
  const setup: Setup = {
    root,
    batches,
    views: batches.map((b) => new RecordBatch(b)),
    batchCount,
    totalBytes: Array.from({ length: batchCount }, (_, i) => batches[i % BATCH_SLOTS]!.length).reduce((a, b) => a + b, 0),
    config: new LogConfig({ segmentBytes: Math.max(MiB, Math.floor(totalTarget / 4)), retentionMs: -1 }),
  };
  const io = new NodeIo();
  let log: Log | null = null;
  try {
    log = await appendTable(setup, options, io);
    await readTable(log, setup, options);
    await log.close();
    log = null;
    // Direct vs buffered vs plain fs per batch size against the disk's O_DIRECT bandwidth, placement shares, cache vs file reads.
    await runPlacementTables(root, options);
  } finally {
    await log?.close();
    rmSync(root, { recursive: true, force: true });
  }
}
