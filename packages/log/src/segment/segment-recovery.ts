// Segment recovery: rebuilding a Segment's state and indexes from its .log
// (§21), the index-only rebuild a read asks for when it finds a trusted index
// wrong, and the fsyncgate re-write after an unclean stop. The format is
// Segment's (segment.ts); the .log is authoritative.
//
// Invariants:
// - RecoveryScan keeps the longest valid prefix: it stops at the first
//   partial, all-zero, corrupt (framing, CRC) or out-of-order batch; a dry
//   scan changes nothing (a refused cut leaves the files as they were).
// - scanIndexEntries derives entries by appendBatch's rule (an entry when more
//   than indexIntervalBytes accumulated since the last one); a malformed
//   header below the written position is SEGLOG_ERR_LOG_CORRUPTION.
// - loadTrustedState reads a cleanly closed segment's state and says false
//   (recover instead) when the file does not hold whole batches to its size.
// - installIndexEntries replaces the entries below the scanned limit in one
//   synchronous step (lookups never see a half-built index) and keeps the
//   entries an active segment added at or past it.
import { nextBatchSize, RecordBatch, validateFollowerBatch } from '@seglog/records';
import type { SegmentFileRef } from '../fetch-plan.js';
import { logCorruption } from '../internal/log-errors.js';
import { seams } from '../internal/test-seams.js';
import type { LogConfig } from '../log-config.js';
import { BatchHeaderReader } from './batch-header-reader.js';
import type { OffsetIndex, OffsetPosition } from './offset-index.js';
import type { TimeIndex, TimestampOffset } from './time-index.js';

const INT32_MAX = 0x7fffffff;
const RECOVERY_CHUNK_BYTES = 1024 * 1024;
const HEADER_SIZE_UP_TO_MAGIC = 17;

/** Why recover() stopped. */
export type RecoveryStop = 'end' | 'partial' | 'zero' | 'corrupt';

export interface SegmentRecovery {
  /** Bytes kept (the position of the first byte cut). */
  readonly validBytes: number;
  /** Bytes cut from the end of the file. */
  readonly truncatedBytes: number;
  /** Offset after the last valid batch (the base offset when none). */
  readonly nextOffset: number;
  readonly stop: RecoveryStop;
  /** The error that stopped the scan ('corrupt'). */
  readonly error: unknown;
}

/** What recovery reads and sets of its Segment (a shape, so segment.ts and this file do not import each other). */
export interface RecoverableSegment {
  readonly baseOffset: number;
  readonly config: LogConfig;
  readonly logFile: SegmentFileRef;
  readonly offsetIndex: OffsetIndex;
  readonly timeIndex: TimeIndex;
  readonly size: number;
  readonly lastModifiedMs: number;
  nextOffset: number;
  readablePosition: number;
  readableNextOffset: number;
  rollingBasedTimestamp: number;
  preallocated: boolean;
  maxTimestampSoFar: number;
  offsetOfMaxTimestampSoFar: number;
  appendBatch(sizeInBytes: number, lastOffset: number, maxTimestamp: number, nowMs: number): void;
  translateOffset(offset: number, reader: BatchHeaderReader, limit?: number): Promise<boolean>;
}

/** Index entries found by scanIndexEntries. */
export interface IndexScan {
  readonly offsets: OffsetPosition[];
  readonly times: TimestampOffset[];
  maxTimestamp: number;
  offsetOfMaxTimestamp: number;
}

/** One recovery pass over a segment file, reading it in chunks. */
export class RecoveryScan {
  private readonly segment: RecoverableSegment;
  private readonly fileSize: number;
  /** A dry scan only validates: it never touches the segment's state or indexes. */
  private readonly dry: boolean;
  private window: Buffer;
  private windowStart: number;
  private windowLength: number;
  private view: RecordBatch | undefined;
  private position: number;
  private nextOffset: number;

  constructor(segment: RecoverableSegment, fileSize: number, dry = false) {
    this.segment = segment;
    this.fileSize = fileSize;
    this.dry = dry;
    this.window = Buffer.allocUnsafe(Math.min(RECOVERY_CHUNK_BYTES, Math.max(fileSize, HEADER_SIZE_UP_TO_MAGIC)));
    this.windowStart = 0;
    this.windowLength = 0;
    this.view = undefined;
    this.position = 0;
    this.nextOffset = segment.baseOffset;
  }

  /** What a recovery with this scan's outcome would keep and cut. */
  result(fileSize: number, stop: { reason: RecoveryStop; error: unknown }): SegmentRecovery {
    return { validBytes: this.position, truncatedBytes: fileSize - this.position, nextOffset: this.nextOffset, stop: stop.reason, error: stop.error };
  }

  async run(onBatch: (batch: RecordBatch) => void): Promise<{ reason: RecoveryStop; error: unknown }> {
    const segment = this.segment;
    for (;;) {
      const position = this.position;
      const remaining = this.fileSize - position;
      if (remaining <= HEADER_SIZE_UP_TO_MAGIC) return { reason: remaining === 0 ? 'end' : 'partial', error: undefined };
      let at = await this.ensure(position, HEADER_SIZE_UP_TO_MAGIC);
      const declared = this.window.readInt32BE(at + 8) + 12;
      if (declared > HEADER_SIZE_UP_TO_MAGIC && declared <= remaining) at = await this.ensure(position, declared);
      const available = Math.min(remaining, this.windowStart + this.windowLength - position);
      const frame = this.window.subarray(at, at + available);
      let size: number;
      try {
        size = nextBatchSize(frame, 0, { mode: 'file', zeroHeaderIsEnd: true });
        if (size === 0) return { reason: isZero(frame) ? 'zero' : 'partial', error: undefined };
        this.view = seams.skipRecoveryCrc ? new RecordBatch(frame, 0) : validateFollowerBatch(frame, 0, this.view); // mutant: no CRC
      } catch (error) {
        return { reason: 'corrupt', error };
      }
      const batch = this.view;
      const relative = batch.lastOffset - segment.baseOffset;
      if (batch.baseOffset < this.nextOffset || relative < 0 || relative > INT32_MAX) {
        return { reason: 'corrupt', error: new Error(`batch offsets [${batch.baseOffset}, ${batch.lastOffset}] out of order at position ${position}`) };
      }
      this.position += size;
      this.nextOffset = batch.lastOffset + 1;
      if (this.dry) continue;
      segment.appendBatch(size, batch.lastOffset, batch.maxTimestamp, segment.lastModifiedMs);
      onBatch(batch);
    }
  }

  /** Makes [position, position + length) available in the window; returns its start in the window. */
  private async ensure(position: number, length: number): Promise<number> {
    const end = position + length;
    if (position >= this.windowStart && end <= this.windowStart + this.windowLength) return position - this.windowStart;
    if (length > this.window.length) this.window = Buffer.allocUnsafe(length);
    const want = Math.min(this.window.length, this.fileSize - position);
    this.windowLength = await this.segment.logFile.file.pread(this.window, position, want);
    this.windowStart = position;
    return 0;
  }
}

function isZero(bytes: Buffer): boolean {
  for (let i = 0; i < HEADER_SIZE_UP_TO_MAGIC && i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}

/** The index entries of the batches in [0, limit), by appendBatch's rule; throws on a malformed header. */
export async function scanIndexEntries(segment: RecoverableSegment, limit: number): Promise<IndexScan> {
  const reader = new BatchHeaderReader(segment.logFile.file, RECOVERY_CHUNK_BYTES);
  const scan: IndexScan = { offsets: [], times: [], maxTimestamp: -1, offsetOfMaxTimestamp: segment.baseOffset };
  let bytesSinceLastEntry = 0;
  let position = 0;
  let nextOffset = segment.baseOffset;
  while (await reader.read(position, limit)) {
    // Offsets going back (or past the written end) are a damaged header, not something to index.
    if (reader.baseOffset < nextOffset || reader.lastOffset >= segment.readableNextOffset) {
      throw logCorruption(segment.logFile.path, 'batch offsets out of order below the written position', { baseOffset: segment.baseOffset, position, offset: reader.baseOffset, expected: nextOffset });
    }
    nextOffset = reader.lastOffset + 1;
    if (reader.maxTimestamp > scan.maxTimestamp) {
      scan.maxTimestamp = reader.maxTimestamp;
      scan.offsetOfMaxTimestamp = reader.lastOffset;
    }
    if (bytesSinceLastEntry > segment.config.indexIntervalBytes) {
      scan.offsets.push({ offset: reader.lastOffset, position });
      scan.times.push({ timestamp: scan.maxTimestamp, offset: scan.offsetOfMaxTimestamp });
      bytesSinceLastEntry = 0;
    }
    bytesSinceLastEntry += reader.size;
    position += reader.size;
  }
  if (position !== limit) {
    throw logCorruption(segment.logFile.path, 'batches do not end at the written position', { baseOffset: segment.baseOffset, position, limit });
  }
  return scan;
}

/** Replaces the index entries below `limit` by the scanned ones, synchronously (lookups never see a half-built index). */
export function installIndexEntries(segment: RecoverableSegment, scan: IndexScan, limit: number, limitOffset: number): void {
  const keptOffsets: OffsetPosition[] = [];
  for (let slot = 0; slot < segment.offsetIndex.entries; slot++) {
    const entry = segment.offsetIndex.entry(slot);
    if (entry.position >= limit) keptOffsets.push(entry);
  }
  const keptTimes: TimestampOffset[] = [];
  for (let slot = 0; slot < segment.timeIndex.entries; slot++) {
    const entry = segment.timeIndex.entry(slot);
    if (entry.offset >= limitOffset) keptTimes.push(entry);
  }
  segment.offsetIndex.truncate();
  segment.timeIndex.truncate();
  let lastOffset = -1;
  for (const entry of [...scan.offsets, ...keptOffsets]) {
    if (segment.offsetIndex.isFull() || entry.offset <= lastOffset || entry.offset - segment.baseOffset > INT32_MAX) continue;
    segment.offsetIndex.append(entry.offset, entry.position);
    lastOffset = entry.offset;
  }
  let last: TimestampOffset = { timestamp: -1, offset: segment.baseOffset };
  for (const entry of [...scan.times, ...keptTimes]) {
    // isFull keeps the slot of the entry written on roll.
    if (entry.timestamp <= last.timestamp || entry.offset < last.offset || segment.timeIndex.isFull()) continue;
    segment.timeIndex.maybeAppend(entry.timestamp, entry.offset);
    last = entry;
  }
  if (limit !== segment.size || keptTimes.length > 0) return;
  // Sealed (or idle): the scan saw every batch; the max timestamp is the .log's, and indexed (as after recover()).
  segment.maxTimestampSoFar = scan.maxTimestamp;
  segment.offsetOfMaxTimestampSoFar = scan.offsetOfMaxTimestamp;
  const final = scan.maxTimestamp > last.timestamp && scan.offsetOfMaxTimestamp >= last.offset;
  if (final && segment.timeIndex.entries < segment.timeIndex.maxEntries) segment.timeIndex.maybeAppend(scan.maxTimestamp, scan.offsetOfMaxTimestamp, true);
}

/**
 * fsyncgate (reliability.md §2.1): re-writes, unchanged, the bytes of the
 * batches holding offsets ≥ `fromOffset` and fdatasyncs the file. After an
 * unclean stop these bytes may be page-cache copies whose writeback failed:
 * Linux marks such pages clean, so an fdatasync alone would persist
 * nothing, yet the next flush would report them durable. Writing them
 * again dirties them, so the fdatasync here (which throws on failure)
 * really makes them durable. Returns the bytes re-written.
 */
export async function rewriteFrom(segment: RecoverableSegment, fromOffset: number): Promise<number> {
  const file = segment.logFile.file;
  const reader = new BatchHeaderReader(file);
  if (!(await segment.translateOffset(fromOffset, reader, segment.size))) return 0;
  const start = reader.position;
  const buffer = Buffer.allocUnsafe(Math.min(RECOVERY_CHUNK_BYTES, segment.size - start));
  for (let position = start; position < segment.size; ) {
    const length = Math.min(buffer.length, segment.size - position);
    const read = await file.pread(buffer, position, length);
    if (read !== length) throw logCorruption(segment.logFile.path, 'file shorter than its recovered size', { baseOffset: segment.baseOffset, position, read, size: segment.size });
    await file.pwrite(buffer.subarray(0, length), position);
    position += length;
  }
  await file.fdatasync();
  return segment.size - start;
}

/** Segment.loadState: a trusted segment's state from its last index entries and a header scan after them. */
export async function loadTrustedState(segment: RecoverableSegment): Promise<boolean> {
  const reader = new BatchHeaderReader(segment.logFile.file);
  const lastTime = segment.timeIndex.lastEntry();
  segment.maxTimestampSoFar = lastTime.timestamp;
  segment.offsetOfMaxTimestampSoFar = lastTime.offset;
  let position = Math.min(segment.offsetIndex.lookup(Number.MAX_SAFE_INTEGER).position, segment.offsetIndex.lookup(lastTime.offset).position);
  try {
    if (await reader.read(0, segment.size)) segment.rollingBasedTimestamp = reader.maxTimestamp;
    while (await reader.read(position, segment.size)) {
      if (reader.maxTimestamp > segment.maxTimestampSoFar) {
        segment.maxTimestampSoFar = reader.maxTimestamp;
        segment.offsetOfMaxTimestampSoFar = reader.lastOffset;
      }
      segment.nextOffset = reader.lastOffset + 1;
      position += reader.size;
    }
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'SEGLOG_ERR_LOG_CORRUPTION') throw error;
    return false;
  }
  if (position !== segment.size) return false;
  segment.readableNextOffset = segment.nextOffset;
  return true;
}

/** Segment.recover: resets (`reset`) and rebuilds the segment from its .log, cutting the file after the valid prefix. */
export async function recoverSegment(segment: RecoverableSegment, reset: () => Promise<void>, onBatch: (batch: RecordBatch) => void, checkBeforeCut?: (result: SegmentRecovery) => void): Promise<SegmentRecovery> {
  const file = segment.logFile.file;
  const fileSize = await file.size();
  if (checkBeforeCut !== undefined) {
    // A refusal (damage below the recovery point) must change nothing on
    // disk, indexes included: scan without touching the segment first, and
    // only then reset and rebuild. Costs a second read of the segment,
    // only after an unclean stop and only when a refusal is possible.
    const probe = new RecoveryScan(segment, fileSize, true);
    const stop = await probe.run(() => undefined);
    checkBeforeCut(probe.result(fileSize, stop));
  }
  await reset();
  const scan = new RecoveryScan(segment, fileSize);
  const stop = await scan.run(onBatch);
  const validBytes = segment.size;
  const result = { validBytes, truncatedBytes: fileSize - validBytes, nextOffset: segment.nextOffset, stop: stop.reason, error: stop.error };
  // The same check again (the file cannot have changed; kept as a guard): a
  // throwing check leaves the .log untouched.
  checkBeforeCut?.(result);
  if (fileSize > validBytes) await file.truncate(validBytes);
  segment.preallocated = false;
  segment.timeIndex.maybeAppend(segment.maxTimestampSoFar, segment.offsetOfMaxTimestampSoFar, true);
  segment.readablePosition = validBytes;
  segment.readableNextOffset = segment.nextOffset;
  return result;
}

/** Segment.rebuildIndexes' one run: the index entries of the written bytes rebuilt from the .log. */
export async function rebuildIndexesOnce(segment: RecoverableSegment): Promise<void> {
  const limit = segment.readablePosition;
  const limitOffset = segment.readableNextOffset;
  const scan = await scanIndexEntries(segment, limit);
  // Room for the rebuilt entries (a sealed segment's files are trimmed); trimmed back below.
  const wasTrimmed = segment.offsetIndex.fileBytes === segment.offsetIndex.sizeBytes;
  await segment.offsetIndex.resize(Math.max(segment.config.segmentIndexBytes, segment.offsetIndex.sizeBytes));
  await segment.timeIndex.resize(Math.max(segment.config.segmentIndexBytes, segment.timeIndex.sizeBytes));
  // A truncation while scanning: what was scanned may be gone; leave the indexes to it.
  if (segment.readablePosition < limit) return;
  installIndexEntries(segment, scan, limit, limitOffset);
  if (wasTrimmed) {
    await segment.offsetIndex.trim();
    await segment.timeIndex.trim();
  }
}
