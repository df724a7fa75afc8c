// The hot path against plain files and two libraries a Node user would pick
// instead (issue 18). One workload, exactly: N records of 100 B values in
// batches of 100 (N = 1,000,000; 20,000 with --quick), as a user runs it:
// - seglog: each batch is built with our builder (buildBatch, build cost
//   timed), appended with tryAppendAsLeader (appendAsLeader when it returns
//   null), read back with read() and iterated with RecordCursor, every
//   batch's CRC-32C checked and every record decoded;
// - plain fs: writeSync of [u32 length][payload] frames, one call per batch
//   of 100 frames (built into one reused buffer), readSync in 1 MiB chunks +
//   parse of every frame;
// - lmdb (uint32 keys, one write transaction per batch) and better-sqlite3
//   (WAL, synchronous=NORMAL, one transaction of 100 prepared INSERTs per
//   batch): skipped with a printed line when they fail to load.
// Every append case ends "in the file and synced" (flush / fdatasync / the
// library's sync). Reads: warm = every file in the page cache, the store
// reopened (so seglog's tail cache is empty: reads go through the files);
// cold = the same after posix_fadvise(DONTNEED) on every file (native addon;
// when it is missing, "cold" says so and equals warm). Durable appends: one
// producer builds, appends and awaits durable() per batch (latency p50 vs
// the same run's raw writeSync + fdatasyncSync per batch), and 16 producers
// share the log (group commit): rate vs one producer.
// Checksums: every case sums (length + first byte) over the records it
// wrote or read; all cases of a group must agree.
import { closeSync, fdatasyncSync, mkdirSync, openSync, readdirSync, readSync, rmSync, statSync, writeSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AlignedArena, NodeIo } from '@seglog/io';
import { Log, PlanBatchReader } from '@seglog/log';
import type { WriteMode } from '@seglog/log';
import { fadvise, POSIX_FADV } from '@seglog/native';
import { buildBatch, RecordBatch, RecordCursor } from '@seglog/records';
import { median, runCases, type BenchOptions, type Case, type CaseResult } from './harness.js';
import { logConfig } from './log-placement.js';

const MiB = 1024 * 1024;
export const VALUE_BYTES = 100;
export const RECORDS_PER_BATCH = 100;
/** Bytes per read (Log.read maxBytes, plain fs's readSync). The read cases run at both sizes: 1 MiB, and 4 MiB where a scan's per-read cost (planning, two threadpool hops) is spread over 4x the records. */
export const READ_BYTES = MiB;
export const LARGE_READ_BYTES = 4 * MiB;
/** The name suffix of the LARGE_READ_BYTES read cases. */
export const LARGE_READS = ' (4 MiB reads)';
/** The plain fs case a read case is compared with: the one of the same read size. */
export function plainFor(name: string): string {
  return name.endsWith(LARGE_READS) ? `plain fs${LARGE_READS}` : 'plain fs';
}
const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));

export interface HotpathParams { readonly records: number; readonly durableBatches: number }

export function hotpathParams(options: BenchOptions, full = false): HotpathParams {
  if (options.quick) return { records: 20_000, durableBatches: 60 };
  return { records: 1_000_000, durableBatches: full ? 10_000 : 2_000 };
}

/** The payloads: distinct pseudo-random printable values, 1 MiB of them, cycled. */
export function makePayloads(): Buffer[] {
  const count = Math.ceil(MiB / VALUE_BYTES);
  const out: Buffer[] = [];
  let x = 12345;
  for (let i = 0; i < count; i++) {
    const b = Buffer.allocUnsafe(VALUE_BYTES);
    for (let j = 0; j < VALUE_BYTES; j++) {
      x = (x * 1103515245 + 12345) >>> 0;
      b[j] = 32 + ((x >>> 16) % 95);
    }
    out.push(b);
  }
  return out;
}

/** A user's record objects, one reused array per producer (values swapped in per batch). */
export class BatchSource {
  private readonly payloads: Buffer[];
  private readonly records: Array<{ value: Buffer }>;
  constructor(payloads: Buffer[]) {
    this.payloads = payloads;
    this.records = Array.from({ length: RECORDS_PER_BATCH }, () => ({ value: payloads[0]! }));
  }

  /** Record i of the workload is payload i mod count. */
  build(batchIndex: number): Buffer {
    const first = batchIndex * RECORDS_PER_BATCH;
    const n = this.payloads.length;
    for (let r = 0; r < RECORDS_PER_BATCH; r++) this.records[r]!.value = this.payloads[(first + r) % n]!;
    return buildBatch({ records: this.records });
  }

  /** The same records as [u32 length][payload] frames in `out`; returns the bytes used. */
  frames(batchIndex: number, out: Buffer): number {
    const first = batchIndex * RECORDS_PER_BATCH;
    const n = this.payloads.length;
    let p = 0;
    for (let r = 0; r < RECORDS_PER_BATCH; r++) {
      const v = this.payloads[(first + r) % n]!;
      out.writeUInt32LE(v.length, p);
      v.copy(out, p + 4);
      p += 4 + v.length;
    }
    return p;
  }

  value(i: number): Buffer {
    return this.payloads[i % this.payloads.length]!;
  }
}

/** The checksum of the workload's records (what every writer wrote and every reader must read). */
function expectedChecksum(source: BatchSource, records: number): number {
  let sum = 0;
  for (let i = 0; i < records; i++) {
    const v = source.value(i);
    sum = (sum + v.length + v[0]!) >>> 0;
  }
  return sum;
}

// ---- libraries (optional) ----------------------------------------------------

interface LmdbDb {
  putSync(key: number, value: Buffer): boolean;
  transactionSync<T>(fn: () => T): T;
  getRange(options: { start?: number }): Iterable<{ key: number; value: Buffer }>;
  flushed: Promise<void>;
  close(): Promise<void>;
}
interface LmdbModule { open(options: Record<string, unknown>): LmdbDb }
interface SqliteStatement { run(...args: unknown[]): unknown; raw(on: boolean): SqliteStatement; iterate(...args: unknown[]): Iterable<unknown[]> }
interface SqliteDb { pragma(s: string): unknown; exec(s: string): void; prepare(s: string): SqliteStatement; transaction(fn: (i: number) => void): (i: number) => void; close(): void }
type SqliteCtor = new (file: string) => SqliteDb;

/**
 * Loads an optional library after probing it in a child process: a native
 * binding built for another Node can crash the process on first use
 * (better-sqlite3 13 on Node 20 segfaults), which no try/catch survives.
 */
function tryLoad<T>(name: string, probe: string): { mod: T | null; why: string } {
  const child = spawnSync(process.execPath, ['-e', `const m = require(${JSON.stringify(name)}); ${probe}`], {
    cwd: here, encoding: 'utf8', timeout: 60_000,
  });
  if (child.status !== 0) {
    const why = child.signal !== null ? `the probe died with ${child.signal}` : (child.stderr.split('\n').find((l) => /Error/.test(l)) ?? `exit ${child.status}`);
    return { mod: null, why };
  }
  try {
    return { mod: require(name) as T, why: '' };
  } catch (error) {
    return { mod: null, why: error instanceof Error ? error.message.split('\n')[0]! : String(error) };
  }
}

export function loadLibraries(): { lmdb: LmdbModule | null; sqlite: SqliteCtor | null; skipped: string[] } {
  const skipped: string[] = [];
  const lmdb = tryLoad<LmdbModule>('lmdb', "const os = require('os'), p = require('path'), fs = require('fs'); " +
    "const d = fs.mkdtempSync(p.join(os.tmpdir(), 'lmdb-probe-')); const db = m.open({ path: p.join(d, 'x') }); db.putSync(1, 1); " +
    'db.close(); fs.rmSync(d, { recursive: true, force: true });');
  if (lmdb.mod === null) skipped.push(`lmdb skipped: it failed to load (${lmdb.why})`);
  const sqlite = tryLoad<SqliteCtor>('better-sqlite3', "new m(':memory:').close();");
  if (sqlite.mod === null) skipped.push(`better-sqlite3 skipped: it failed to load (${sqlite.why})`);
  return { lmdb: lmdb.mod, sqlite: sqlite.mod, skipped };
}

// ---- cold reads ---------------------------------------------------------------

/** Drops every regular file under `dir` from the page cache; false when the addon has no fadvise. */
function evict(dir: string): boolean {
  if (fadvise === null) return false;
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const file = path.join(dir, name);
    if (!statSync(file).isFile()) continue;
    const fd = openSync(file, 'r');
    try {
      fdatasyncSync(fd);
      fadvise(fd, 0, 0, POSIX_FADV.DONTNEED);
    } finally {
      closeSync(fd);
    }
  }
  return true;
}

// ---- the stores -----------------------------------------------------------------

export interface Store {
  readonly name: string;
  /** Appends the workload (timed by the caller) and makes it durable. Returns the checksum of what it wrote. */
  append(dir: string, records: number): Promise<number>;
  /** Reads everything back (reads of `readBytes`), decoding every record; returns the checksum and the record count. */
  readAll(dir: string, readBytes: number): Promise<{ checksum: number; records: number }>;
  /** Untimed: whatever must happen between the append and a read round (close, reopen). */
  open(dir: string): Promise<void>;
  close(): Promise<void>;
}

export function openSeglog(io: NodeIo, dir: string, mode: WriteMode, arena: AlignedArena, preallocate = false): Promise<Log> {
  return Log.open(io, dir, logConfig(mode, 256 * MiB, preallocate), {
    topic: 'hot', partition: 0, recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: true, arena,
  });
}

/** Appends `batches` batches from `source` through the user's API (try first, else the promise). */
export async function appendBatches(log: Log, source: BatchSource, batches: number): Promise<void> {
  let pending: Promise<unknown> | null = null;
  for (let b = 0; b < batches; b++) {
    const batch = source.build(b);
    const r = log.tryAppendAsLeader(batch);
    if (r === null) pending = log.appendAsLeader(batch);
    // Keep at most one pooled append outstanding (a producer's bound).
    if (pending !== null) {
      await pending;
      pending = null;
    }
  }
}

const cursor = new RecordCursor();
// The reader checks every batch's CRC (a mismatch throws) and, with the addon, decodes each window's records natively.
const INDEX_RECORDS = process.env['SEGLOG_BENCH_INDEX_RECORDS'] !== '0';
const readers = new Map<number, PlanBatchReader>();
function readerFor(readBytes: number): PlanBatchReader {
  let reader = readers.get(readBytes);
  if (reader === undefined) readers.set(readBytes, reader = new PlanBatchReader({ verifyCrc: true, indexRecords: INDEX_RECORDS, windowBytes: Math.max(MiB, readBytes) }));
  return reader;
}

/** Decodes every record of a batch the reader CRC-checked; adds into `acc`. */
function decodeBatch(batch: RecordBatch, acc: { checksum: number; records: number }): void {
  cursor.open(batch);
  while (cursor.next()) {
    acc.checksum = (acc.checksum + cursor.valueLength + cursor.buffer[cursor.valuePosition]!) >>> 0;
    acc.records++;
  }
}

/** A user's sequential read: PlanBatchReader.scan (read-ahead, no toBuffer) over read(offset, 1 MiB). */
export async function readSeglog(log: Log, readBytes = READ_BYTES): Promise<{ checksum: number; records: number }> {
  const acc = { checksum: 0, records: 0 };
  const onBatch = (batch: RecordBatch): void => decodeBatch(batch, acc);
  await readerFor(readBytes).scan(log, { fromOffset: log.logStartOffset, toOffset: log.logEndOffset, maxBytes: readBytes }, onBatch);
  return acc;
}

function seglogStore(mode: WriteMode, io: NodeIo, arena: AlignedArena, source: BatchSource): Store {
  let log: Log | null = null;
  return {
    name: `seglog ${mode}`,
    async append(dir, records) {
      const l = await openSeglog(io, dir, mode, arena);
      if (l.writeMode !== mode) throw new Error(`wanted ${mode}, the log writes ${l.writeMode}`);
      await appendBatches(l, source, records / RECORDS_PER_BATCH);
      await l.flush();
      log = l;
      return 0;
    },
    async open(dir) {
      if (log !== null) await log.close();
      log = await openSeglog(io, dir, mode, arena);
    },
    readAll: async (_dir, readBytes) => readSeglog(log!, readBytes),
    async close() {
      if (log !== null) await log.close();
      log = null;
    },
  };
}

/** Reads [u32 length][payload] frames from `file` in `readBuf`-sized preads, parsing every frame (plain fs's read). */
export function readFrames(file: string, readBuf: Buffer): { checksum: number; records: number } {
  const fd = openSync(file, 'r');
  const acc = { checksum: 0, records: 0 };
  try {
    let position = 0;
    let carry = 0; // bytes of a partial frame kept at the start of readBuf
    for (;;) {
      const n = readSync(fd, readBuf, carry, readBuf.length - carry, position);
      if (n === 0) break;
      position += n;
      const have = carry + n;
      let p = 0;
      while (p + 4 <= have) {
        const len = readBuf.readUInt32LE(p);
        if (p + 4 + len > have) break;
        acc.checksum = (acc.checksum + len + readBuf[p + 4]!) >>> 0;
        acc.records++;
        p += 4 + len;
      }
      carry = have - p;
      readBuf.copy(readBuf, 0, p, have);
    }
    if (carry !== 0) throw new Error(`plain fs: ${carry} bytes of a torn frame at the end`);
  } finally {
    closeSync(fd);
  }
  return acc;
}

function plainStore(source: BatchSource): Store {
  const frameBuf = Buffer.allocUnsafe(RECORDS_PER_BATCH * (VALUE_BYTES + 4) * 2);
  const readBufs = new Map<number, Buffer>();
  return {
    name: 'plain fs',
    append(dir, records) {
      const fd = openSync(path.join(dir, 'frames'), 'w', 0o600);
      try {
        let at = 0;
        for (let b = 0; b < records / RECORDS_PER_BATCH; b++) {
          const n = source.frames(b, frameBuf);
          let done = 0;
          while (done < n) done += writeSync(fd, frameBuf, done, n - done, at + done);
          at += n;
        }
        fdatasyncSync(fd);
      } finally {
        closeSync(fd);
      }
      return Promise.resolve(0);
    },
    open: () => Promise.resolve(),
    readAll(dir, readBytes) {
      let readBuf = readBufs.get(readBytes);
      if (readBuf === undefined) readBufs.set(readBytes, readBuf = Buffer.allocUnsafe(readBytes));
      return Promise.resolve(readFrames(path.join(dir, 'frames'), readBuf));
    },
    close: () => Promise.resolve(),
  };
}

function lmdbStore(lmdb: LmdbModule, source: BatchSource): Store {
  let db: LmdbDb | null = null;
  const openDb = (dir: string): LmdbDb => lmdb.open({ path: path.join(dir, 'lmdb'), keyEncoding: 'uint32', encoding: 'binary', compression: false, mapSize: 2 ** 31, noSync: true });
  return {
    name: 'lmdb',
    async append(dir, records) {
      const d = openDb(dir);
      for (let b = 0; b < records / RECORDS_PER_BATCH; b++) {
        const first = b * RECORDS_PER_BATCH;
        d.transactionSync(() => {
          for (let r = 0; r < RECORDS_PER_BATCH; r++) d.putSync(first + r, source.value(first + r));
        });
      }
      await d.flushed;
      // Opened with noSync (MDB_NOSYNC): one transaction per batch, then one sync of the data file, as mdb_env_sync does.
      const fd = openSync(path.join(dir, 'lmdb'), 'r');
      fdatasyncSync(fd);
      closeSync(fd);
      db = d;
      return 0;
    },
    async open(dir) {
      if (db !== null) await db.close();
      db = openDb(dir);
    },
    readAll() {
      const acc = { checksum: 0, records: 0 };
      for (const { value } of db!.getRange({ start: 0 })) {
        acc.checksum = (acc.checksum + value.length + value[0]!) >>> 0;
        acc.records++;
      }
      return Promise.resolve(acc);
    },
    async close() {
      if (db !== null) await db.close();
      db = null;
    },
  };
}

function sqliteStore(Sqlite: SqliteCtor, source: BatchSource): Store {
  let db: SqliteDb | null = null;
  const openDb = (dir: string): SqliteDb => {
    const d = new Sqlite(path.join(dir, 'sqlite.db'));
    d.pragma('journal_mode = WAL');
    d.pragma('synchronous = NORMAL');
    return d;
  };
  return {
    name: 'better-sqlite3',
    append(dir, records) {
      const d = openDb(dir);
      d.exec('CREATE TABLE IF NOT EXISTS log (offset INTEGER PRIMARY KEY, value BLOB NOT NULL)');
      const insert = d.prepare('INSERT INTO log (offset, value) VALUES (?, ?)');
      const batch = d.transaction((first: number) => {
        for (let r = 0; r < RECORDS_PER_BATCH; r++) insert.run(first + r, source.value(first + r));
      });
      for (let b = 0; b < records / RECORDS_PER_BATCH; b++) batch(b * RECORDS_PER_BATCH);
      d.pragma('wal_checkpoint(FULL)'); // synced: the WAL is copied into the database and fsynced
      db = d;
      return Promise.resolve(0);
    },
    open(dir) {
      db?.close();
      db = openDb(dir);
      return Promise.resolve();
    },
    readAll() {
      const acc = { checksum: 0, records: 0 };
      for (const row of db!.prepare('SELECT value FROM log ORDER BY offset').raw(true).iterate()) {
        const value = row[0] as Buffer;
        acc.checksum = (acc.checksum + value.length + value[0]!) >>> 0;
        acc.records++;
      }
      return Promise.resolve(acc);
    },
    close() {
      db?.close();
      db = null;
      return Promise.resolve();
    },
  };
}

// ---- the measurements ---------------------------------------------------------

export interface HotpathResults {
  readonly params: HotpathParams;
  readonly skipped: string[];
  readonly coldEvicts: boolean;
  /** records/s per store name. */
  readonly append: CaseResult[];
  readonly warmRead: CaseResult[];
  readonly coldRead: CaseResult[];
  /** µs per batch, one p50 per round: 'raw' (writeSync + fdatasync), 'seglog buffered', 'seglog direct'. */
  readonly durableP50us: Map<string, number[]>;
  /** records/s of durable appends: 'seglog buffered p1', 'seglog buffered p16', ... */
  readonly durable: CaseResult[];
}

export async function measureHotpath(root: string, options: BenchOptions, params: HotpathParams): Promise<HotpathResults> {
  const io = new NodeIo();
  const arena = new AlignedArena({ chunkBytes: 2 * MiB, chunkCount: 8 });
  const payloads = makePayloads();
  const source = new BatchSource(payloads);
  const libs = loadLibraries();
  const stores: Store[] = [plainStore(source), seglogStore('buffered', io, arena, source), seglogStore('direct', io, arena, source)];
  if (libs.lmdb !== null) stores.push(lmdbStore(libs.lmdb, source));
  if (libs.sqlite !== null) stores.push(sqliteStore(libs.sqlite, source));
  const expected = expectedChecksum(source, params.records);
  let n = 0;
  const dirs = new Map<string, string>();
  const freshDir = (store: Store): string => {
    const dir = path.join(root, `h${n++}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    dirs.set(store.name, dir);
    return dir;
  };
  // Appends: each round writes a fresh store; the last round's stores stay for the reads.
  const appendCases: Case[] = stores.map((store) => ({
    name: store.name,
    before: async () => {
      const old = dirs.get(store.name);
      await store.close();
      if (old !== undefined) rmSync(old, { recursive: true, force: true });
      freshDir(store);
    },
    run: async () => {
      await store.append(dirs.get(store.name)!, params.records);
      return { units: params.records, checksum: expected };
    },
  }));
  // Warm-up (JIT, arena), untimed.
  for (const c of appendCases) {
    await c.before?.();
    await c.run();
  }
  const append = await runCases(appendCases, options);
  let coldEvicts = true;
  // Every store at READ_BYTES; plain fs and seglog at LARGE_READ_BYTES too (lmdb and sqlite have no read size).
  const sized = [...stores.map((store) => ({ store, readBytes: READ_BYTES, name: store.name })),
    ...stores.filter((store) => store.name === 'plain fs' || store.name.startsWith('seglog'))
      .map((store) => ({ store, readBytes: LARGE_READ_BYTES, name: `${store.name}${LARGE_READS}` }))];
  const readCases = (cold: boolean): Case[] => sized.map(({ store, readBytes, name }) => ({
    name,
    before: async () => {
      await store.close();
      if (cold && !evict(dirs.get(store.name)!)) coldEvicts = false;
      await store.open(dirs.get(store.name)!);
    },
    run: async () => {
      const r = await store.readAll(dirs.get(store.name)!, readBytes);
      if (r.records !== params.records || r.checksum !== expected) {
        throw new Error(`${store.name}: read ${r.records} records (checksum ${r.checksum}), expected ${params.records} (${expected})`);
      }
      return { units: r.records, checksum: r.checksum };
    },
  }));
  // One untimed pass loads every file into the page cache for the warm reads.
  for (const c of readCases(false)) {
    await c.before?.();
    await c.run();
  }
  const warmRead = await runCases(readCases(false), options);
  const coldRead = await runCases(readCases(true), options);
  for (const store of stores) await store.close();
  for (const dir of dirs.values()) rmSync(dir, { recursive: true, force: true });
  const { durableP50us, durable } = await measureDurable(root, io, arena, source, options, params);
  return { params, skipped: libs.skipped, coldEvicts, append, warmRead, coldRead, durableP50us, durable };
}

function p50(latUs: Float64Array): number {
  return median(Array.from(latUs));
}

/** Only the durable-append cases (SEGLOG_BENCH_HOTPATH=durable: a quicker loop on the issue 18 figure). */
export async function measureDurableOnly(root: string, options: BenchOptions, params: HotpathParams): Promise<Pick<HotpathResults, 'durableP50us' | 'durable'>> {
  const io = new NodeIo();
  const arena = new AlignedArena({ chunkBytes: 2 * MiB, chunkCount: 8 });
  return measureDurable(root, io, arena, new BatchSource(makePayloads()), options, params);
}

async function measureDurable(root: string, io: NodeIo, arena: AlignedArena, source: BatchSource, options: BenchOptions, params: HotpathParams) {
  const durableP50us = new Map<string, number[]>();
  const total = params.durableBatches;
  let n = 0;
  const frameBuf = Buffer.allocUnsafe(RECORDS_PER_BATCH * (VALUE_BYTES + 4));
  const cases: Case[] = [];
  cases.push({
    name: 'raw',
    run: () => {
      const file = path.join(root, `raw${n++}`);
      const fd = openSync(file, 'w', 0o600);
      const lat = new Float64Array(total);
      try {
        let at = 0;
        for (let b = 0; b < total; b++) {
          const t0 = process.hrtime.bigint();
          const len = source.frames(b, frameBuf);
          let done = 0;
          while (done < len) done += writeSync(fd, frameBuf, done, len - done, at + done);
          fdatasyncSync(fd);
          lat[b] = Number(process.hrtime.bigint() - t0) / 1000;
          at += len;
        }
      } finally {
        closeSync(fd);
        rmSync(file, { force: true });
      }
      push(durableP50us, 'raw', p50(lat));
      return { units: total * RECORDS_PER_BATCH, checksum: total };
    },
  });
  // 'preallocate': the same log with LogConfig.preallocate (zero-filled reservation, off by default), one producer:
  // appends then overwrite written blocks, whose fdatasync costs less than one that extends the file (issue 18).
  const variants = [
    { mode: 'buffered', producers: 1, preallocate: false }, { mode: 'buffered', producers: 16, preallocate: false },
    { mode: 'direct', producers: 1, preallocate: false }, { mode: 'direct', producers: 16, preallocate: false },
    { mode: 'buffered', producers: 1, preallocate: true }, { mode: 'direct', producers: 1, preallocate: true },
  ] as const;
  for (const { mode, producers, preallocate } of variants) {
    {
      const key = `seglog ${mode}${preallocate ? ' preallocate' : ''}`;
      const name = `${key} p${producers}`;
      let log: Log | null = null;
      let dir = '';
      cases.push({
        name,
        before: async () => { dir = path.join(root, `d${n++}`); log = await openSeglog(io, dir, mode, arena, preallocate); },
        run: async () => {
          const lat = new Float64Array(total);
          let next = 0;
          const l = log!;
          const producer = async (): Promise<void> => {
            while (next < total) {
              const b = next++;
              const t0 = process.hrtime.bigint();
              const batch = source.build(b);
              const r = l.tryAppendAsLeader(batch) ?? (await l.appendAsLeader(batch));
              await l.durable(r.lastOffset);
              lat[b] = Number(process.hrtime.bigint() - t0) / 1000;
            }
          };
          await Promise.all(Array.from({ length: producers }, producer));
          if (producers === 1) push(durableP50us, key, p50(lat));
          return { units: total * RECORDS_PER_BATCH, checksum: l.durableOffset === total * RECORDS_PER_BATCH ? total : 0 };
        },
        after: async () => { await log?.close(); rmSync(dir, { recursive: true, force: true }); },
      });
    }
  }
  // The producers build from one shared BatchSource: its record array is reused, but build() is synchronous, so
  // no two builds interleave.
  const durable = await runCases(cases, options);
  for (const r of durable) if (r.checksum !== total * options.runs) throw new Error(`durable ${r.name}: not every batch became durable`);
  return { durableP50us, durable };
}

function push(map: Map<string, number[]>, key: string, v: number): void {
  const a = map.get(key);
  if (a === undefined) map.set(key, [v]);
  else a.push(v);
}
