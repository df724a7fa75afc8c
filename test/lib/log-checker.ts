// The pass criteria of reliability.md §3.6, checked on a Log that has just
// been opened after a crash (SimIo crash points, kill -9 on a real disk).
//
// The reference is deliberately trivial: the files read back whole and framed
// with nextBatchSize (a linear scan, no index), and the expected bytes of
// every batch computed from its base offset (expected-log.ts). Against that:
//
// 1. Durability: every offset in [logStartOffset, durable) is present, byte
//    for byte (a batch is compared whole: key, value, headers, timestamps,
//    attributes, CRC, base offset and leader epoch).
// 2. Prefix: the segments hold one gap-free run of batches from the first
//    segment's base to the log end offset, each the batch appended there; no
//    batch beyond what was attempted; trailing bytes none (a torn tail cut).
// 3. Integrity: every batch passes its CRC-32C; reads return exactly the
//    scanned bytes.
// 4. Offsets and positions: logEndOffset = last batch + 1 ≥ durable,
//    writtenOffset = logEndOffset, durableOffset ≤ logEndOffset, the log
//    start offset inside the bounds retention allows.
// 5. Indexes agree with the scan: read(o, 1) for the first, a middle and the
//    last offset of every batch returns the batch holding o (through the
//    offset index floor lookup), a chained read from the log start returns
//    the scan, offsetForTimestamp finds every sampled record (time index),
//    and (after close) every on-disk .index/.timeindex entry points at a
//    batch boundary with the right offset and timestamp.
// 6. Leader epochs: the epoch cache gives every batch from its first entry on
//    the batch's own partition leader epoch.
// Plus hygiene: no .tmp/.deleted/.cleaned/.swap file after open.
//
// Each check throws a CheckFailure naming the rule; callers add the replay
// information (crash point, mode, seed, recovery point).

import type { Io } from '@seglog/io';
import type { Log } from '@seglog/log';
import { nextBatchSize, RecordBatch, splitBatches } from '@seglog/records';
import { T0 } from './expected-log.js';

export class CheckFailure extends Error {
  constructor(readonly rule: string, message: string) {
    super(`[${rule}] ${message}`);
    this.name = 'CheckFailure';
  }
}

function check(condition: boolean, rule: string, message: () => string): asserts condition {
  if (!condition) throw new CheckFailure(rule, message());
}

export interface Expectation {
  /** The bytes that belong to a batch starting at `base`, or undefined when no append started there. */
  expectedBatch(base: number): Buffer | undefined;
  /** Every attempted append is below this offset. */
  readonly attemptedEnd: number;
  /** Acknowledged durable: every offset in [logStartOffset, durable) must be present and intact. */
  readonly durable: number;
  /** Bounds of the recovered log start offset (checkpointed start and completed retention; retention calls). */
  readonly logStartMin: number;
  readonly logStartMax: number;
}

export interface ScannedBatch {
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly position: number;
  readonly maxTimestamp: number;
  readonly leaderEpoch: number;
  readonly bytes: Buffer;
}

export interface ScannedSegment {
  readonly baseOffset: number;
  readonly size: number;
  readonly batches: readonly ScannedBatch[];
}

/** What a recovered log shows: compared between two recoveries of the same crash. */
export interface LogSnapshot {
  readonly logStartOffset: number;
  readonly logEndOffset: number;
  readonly durableOffset: number;
  readonly segments: readonly ScannedSegment[];
  readonly epochs: readonly { readonly epoch: number; readonly startOffset: number }[];
}

export function segmentFile(dir: string, base: number, suffix: string): string {
  return `${dir}/${String(base).padStart(20, '0')}${suffix}`;
}

/** Reads every segment file of the log whole and frames it (the trivial reference). */
export async function scanSegments(io: Io, dir: string, bases: readonly number[]): Promise<ScannedSegment[]> {
  const out: ScannedSegment[] = [];
  for (const base of bases) {
    const path = segmentFile(dir, base, '.log');
    const bytes = await io.readFile(path);
    const batches: ScannedBatch[] = [];
    let position = 0;
    for (;;) {
      let size: number;
      try {
        size = nextBatchSize(bytes, position, { mode: 'file', zeroHeaderIsEnd: true });
      } catch (error) {
        throw new CheckFailure('integrity', `${path}: bad framing at position ${position}: ${(error as Error).message}`);
      }
      if (size === 0) break;
      const batch = new RecordBatch(bytes, position);
      check(batch.isValid(), 'integrity', () => `${path}: CRC mismatch in the batch at position ${position} (base ${batch.baseOffset})`);
      batches.push({
        baseOffset: batch.baseOffset, lastOffset: batch.lastOffset, position, maxTimestamp: batch.maxTimestamp,
        leaderEpoch: batch.partitionLeaderEpoch, bytes: Buffer.from(batch.bytes()),
      });
      position += size;
    }
    check(position === bytes.length, 'prefix', () => `${path}: ${bytes.length - position} bytes after the last batch (at ${position}) were not cut`);
    out.push({ baseOffset: base, size: bytes.length, batches });
  }
  return out;
}

/** Criteria 1–4 on the scan and the log's positions. */
function checkContents(log: Log, segments: readonly ScannedSegment[], expect: Expectation): void {
  const leo = log.logEndOffset;
  const start = log.logStartOffset;
  check(start >= expect.logStartMin && start <= expect.logStartMax, 'log-start',
    () => `logStartOffset ${start} outside [${expect.logStartMin}, ${expect.logStartMax}]`);
  check(leo >= expect.durable, 'durability', () => `logEndOffset ${leo} is below the acknowledged durable offset ${expect.durable}`);
  check(leo <= expect.attemptedEnd, 'prefix', () => `logEndOffset ${leo} is beyond every attempted append (${expect.attemptedEnd})`);
  check(log.writtenOffset === leo, 'positions', () => `writtenOffset ${log.writtenOffset} ≠ logEndOffset ${leo} after open`);
  check(log.durableOffset <= leo, 'positions', () => `durableOffset ${log.durableOffset} > logEndOffset ${leo}`);
  check(segments.length > 0, 'prefix', () => 'no segment');
  check(segments[0]!.baseOffset <= start, 'prefix', () => `first segment starts at ${segments[0]!.baseOffset}, above the log start ${start}`);
  // Segments wholly below the one holding the log start are invisible (a
  // crash during retention may leave any subset of them): each must hold
  // appended batches, but only the visible range must be gap-free.
  let floor = 0;
  while (floor + 1 < segments.length && segments[floor + 1]!.baseOffset <= start) floor++;
  let next = segments[floor]!.baseOffset;
  segments.forEach((segment, i) => {
    if (i < floor) {
      checkBatches(segment, segment.baseOffset, expect);
      return;
    }
    check(segment.baseOffset === next, 'prefix', () => segment.baseOffset > next
      ? `gap: offsets [${next}, ${segment.baseOffset}) are missing before segment ${segment.baseOffset}`
      : `segment ${segment.baseOffset} overlaps offsets below ${next}`);
    next = checkBatches(segment, next, expect);
  });
  check(next === leo, 'positions', () => `the scan ends at ${next}, logEndOffset is ${leo}`);
}

/** The batches of one segment: contiguous from `from`, each the batch appended there. Returns the next offset. */
function checkBatches(segment: ScannedSegment, from: number, expect: Expectation): number {
  let next = from;
  for (const batch of segment.batches) {
    check(batch.baseOffset === next, 'prefix', () => `batch at ${segment.baseOffset}.log:${batch.position} has base ${batch.baseOffset}, expected ${next}`);
    const expected = expect.expectedBatch(batch.baseOffset);
    check(expected !== undefined, 'prefix', () => `batch ${batch.baseOffset}–${batch.lastOffset} was never appended there`);
    check(expected.equals(batch.bytes), 'integrity', () => `batch ${batch.baseOffset}–${batch.lastOffset} differs from the appended bytes (${describeDiff(expected, batch.bytes)})`);
    next = batch.lastOffset + 1;
  }
  return next;
}

function describeDiff(expected: Buffer, actual: Buffer): string {
  if (expected.length !== actual.length) return `length ${actual.length}, expected ${expected.length}`;
  let at = 0;
  while (at < expected.length && expected[at] === actual[at]) at++;
  return `first difference at byte ${at}`;
}

async function readFirstBatch(log: Log, offset: number, maxBytes: number): Promise<{ bytes: Buffer; firstOffset: number; nextOffset: number }> {
  const plan = await log.read(offset, maxBytes);
  try {
    return { bytes: await plan.toBuffer(), firstOffset: plan.firstOffset, nextOffset: plan.nextOffset };
  } finally {
    await plan.release();
  }
}

/** Criterion 5 through the Log's read paths (offset index, time index). */
async function checkReads(log: Log, segments: readonly ScannedSegment[]): Promise<void> {
  const start = log.logStartOffset;
  const leo = log.logEndOffset;
  const visible = segments.flatMap((s) => s.batches).filter((b) => b.lastOffset >= start);
  for (const batch of visible) {
    const from = Math.max(batch.baseOffset, start);
    const probes = new Set([from, Math.floor((from + batch.lastOffset) / 2), batch.lastOffset]);
    for (const offset of probes) {
      const read = await readFirstBatch(log, offset, 1);
      const got = splitBatches(read.bytes, { mode: 'memory' })[0];
      check(got !== undefined && got.bytes().equals(batch.bytes), 'index',
        () => `read(${offset}, 1) returned ${got === undefined ? 'nothing' : `the batch at ${got.baseOffset}`}, the scan holds ${offset} in batch ${batch.baseOffset}–${batch.lastOffset}`);
      check(read.firstOffset === batch.baseOffset, 'index', () => `read(${offset}).firstOffset ${read.firstOffset} ≠ ${batch.baseOffset}`);
    }
    const ts = T0 + batch.lastOffset;
    const found = await log.offsetForTimestamp(ts);
    check(found !== null && found.offset === batch.lastOffset && found.leaderEpoch === batch.leaderEpoch, 'time-index',
      () => `offsetForTimestamp(T0+${batch.lastOffset}) = ${JSON.stringify(found)}, expected offset ${batch.lastOffset} epoch ${batch.leaderEpoch}`);
  }
  // A chained read from the log start, 700 bytes at a time, returns the scan.
  const chained: Buffer[] = [];
  let offset = start;
  while (offset < leo) {
    const read = await readFirstBatch(log, offset, 700);
    check(read.bytes.length > 0 && read.nextOffset > offset, 'index', () => `read(${offset}, 700) below the log end ${leo} returned nothing`);
    chained.push(read.bytes);
    offset = read.nextOffset;
  }
  const expected = Buffer.concat(visible.map((b) => b.bytes));
  check(Buffer.concat(chained).equals(expected), 'index', () => `chained reads from ${start} return ${Buffer.concat(chained).length} bytes, the scan ${expected.length}`);
  const end = await readFirstBatch(log, leo, 1 << 20);
  check(end.bytes.length === 0, 'positions', () => `read(logEndOffset) returned ${end.bytes.length} bytes`);
}

/** Criterion 6: the epoch cache agrees with the batches' leader epochs. */
function checkEpochs(log: Log, segments: readonly ScannedSegment[], expect: Expectation): void {
  const entries = log.epochCache.epochEntries();
  const leo = log.logEndOffset;
  for (let i = 1; i < entries.length; i++) {
    check(entries[i]!.epoch > entries[i - 1]!.epoch && entries[i]!.startOffset > entries[i - 1]!.startOffset, 'epochs',
      () => `epoch entries not increasing: ${JSON.stringify(entries)}`);
  }
  for (const entry of entries) check(entry.startOffset < leo || entry.startOffset === log.logStartOffset, 'epochs', () => `epoch entry ${JSON.stringify(entry)} at or beyond the log end ${leo}`);
  const batches = segments.flatMap((s) => s.batches).filter((b) => b.lastOffset >= log.logStartOffset);
  if (batches.length === 0) return;
  const first = entries[0];
  check(first !== undefined, 'epochs', () => `no epoch entry, but the log holds batches of epoch ${batches[0]!.leaderEpoch}`);
  check(first.startOffset <= Math.max(log.logStartOffset, batches[0]!.baseOffset, expect.logStartMax), 'epochs',
    () => `first epoch entry ${JSON.stringify(first)} starts above the log start ${log.logStartOffset}`);
  for (const batch of batches) {
    if (batch.baseOffset < first.startOffset) continue;
    const epoch = log.epochCache.epochForOffset(batch.baseOffset);
    check(epoch === batch.leaderEpoch, 'epochs',
      () => `epoch cache gives ${epoch} for offset ${batch.baseOffset}, the batch has ${batch.leaderEpoch}; entries ${JSON.stringify(entries)}`);
  }
}

const TRANSIENT = /\.(tmp|deleted|cleaned|swap)$/;

/**
 * Checks a just-opened (recovered) log against the expectation and returns
 * what it shows. Does not change the log. `reads: false` skips the read-path
 * checks (criterion 5) when the same state was already read once.
 */
export async function checkRecoveredLog(io: Io, log: Log, expect: Expectation, options: { reads?: boolean } = {}): Promise<LogSnapshot> {
  const leftovers = (await io.readdir(log.dir)).filter((name) => TRANSIENT.test(name));
  check(leftovers.length === 0, 'hygiene', () => `leftover files after open: ${leftovers.join(', ')}`);
  const segments = await scanSegments(io, log.dir, log.segmentBaseOffsets());
  checkContents(log, segments, expect);
  if (options.reads !== false) await checkReads(log, segments);
  checkEpochs(log, segments, expect);
  return {
    logStartOffset: log.logStartOffset,
    logEndOffset: log.logEndOffset,
    durableOffset: log.durableOffset,
    segments,
    epochs: log.epochCache.epochEntries().map((e) => ({ epoch: e.epoch, startOffset: e.startOffset })),
  };
}

/** The same visible contents and positions (recovery idempotence, criterion 6 of §3.6). */
export function compareSnapshots(a: LogSnapshot, b: LogSnapshot): void {
  const describe = (s: LogSnapshot): string =>
    `start ${s.logStartOffset} end ${s.logEndOffset} durable ${s.durableOffset} segments ${s.segments.map((g) => `${g.baseOffset}:${g.size}`).join(',')} epochs ${JSON.stringify(s.epochs)}`;
  const same = a.logStartOffset === b.logStartOffset && a.logEndOffset === b.logEndOffset && a.durableOffset === b.durableOffset &&
    JSON.stringify(a.epochs) === JSON.stringify(b.epochs) && a.segments.length === b.segments.length &&
    a.segments.every((s, i) => {
      const t = b.segments[i]!;
      return s.baseOffset === t.baseOffset && s.size === t.size && s.batches.length === t.batches.length &&
        s.batches.every((x, j) => x.bytes.equals(t.batches[j]!.bytes));
    });
  check(same, 'idempotence', () => `a second recovery differs:\n  first:  ${describe(a)}\n  second: ${describe(b)}`);
}

/**
 * Criterion 5 on disk, after a clean close (indexes trimmed and synced):
 * every .index entry (last offset, position) names a batch start in the scan
 * with that last offset, and every .timeindex entry (timestamp, offset) names
 * a batch last offset with the segment's max timestamp up to it.
 */
export async function checkIndexFiles(io: Io, dir: string, segments: readonly ScannedSegment[]): Promise<void> {
  for (const segment of segments) {
    const byPosition = new Map(segment.batches.map((b) => [b.position, b]));
    const indexPath = segmentFile(dir, segment.baseOffset, '.index');
    const index = (await io.exists(indexPath)) ? await io.readFile(indexPath) : Buffer.alloc(0);
    check(index.length % 8 === 0, 'index', () => `${indexPath}: length ${index.length} is not whole entries`);
    let previous = -1;
    for (let at = 0; at < index.length; at += 8) {
      const offset = segment.baseOffset + index.readInt32BE(at);
      const position = index.readInt32BE(at + 4);
      const batch = byPosition.get(position);
      check(batch !== undefined && batch.lastOffset === offset && offset > previous, 'index',
        () => `${indexPath}: entry ${at / 8} (${offset}, ${position}) does not name a batch start with that last offset`);
      previous = offset;
    }
    const timePath = segmentFile(dir, segment.baseOffset, '.timeindex');
    const time = (await io.exists(timePath)) ? await io.readFile(timePath) : Buffer.alloc(0);
    check(time.length % 12 === 0, 'time-index', () => `${timePath}: length ${time.length} is not whole entries`);
    let previousTs = -1;
    for (let at = 0; at < time.length; at += 12) {
      const timestamp = time.readUInt32BE(at) * 2 ** 32 + time.readUInt32BE(at + 4);
      const offset = segment.baseOffset + time.readInt32BE(at + 8);
      const upTo = segment.batches.filter((b) => b.lastOffset <= offset);
      const last = upTo[upTo.length - 1];
      const maxTs = Math.max(-1, ...upTo.map((b) => b.maxTimestamp));
      check(last !== undefined && last.lastOffset === offset && timestamp === maxTs && timestamp > previousTs, 'time-index',
        () => `${timePath}: entry ${at / 12} (${timestamp}, ${offset}) does not match the scan (max timestamp up to it ${maxTs})`);
      previousTs = timestamp;
    }
  }
}
