// SegmentReader: the reads of one Segment's written bytes: offset
// translation through the offset index, whole-batch ranges for fetches
// (readRange), timestamp lookups (ListOffsets), the producer-state replay
// walk (forEachBatch), and reads around damage a survey found. Holds the state those reads share: the surveyed damaged
// ranges and the prefix whose framing a read already walked.
//
// Invariants (the format is Segment's, see segment.ts):
// - A trusted index entry is checked on use: an offset-index entry must start
//   a batch whose last offset is its offset; a time-index entry (T, O) must
//   name the batch ending at O with max timestamp T. A mismatch is
//   SEGLOG_ERR_LOG_CORRUPTION, which rebuilds the indexes from the .log and
//   retries the read once (withIndexRebuild).
// - [0, framingCheckedTo) was walked header by header and chains into whole
//   batches; a range read may skip through the index only inside it, never
//   over known damage. A truncation or recovery resets it to 0.
// - Damage is surveyed once and kept: a sealed segment's bytes do not change,
//   and an active one's damage below the written position stays where it is.
// - The continuation (offset, position) is where the last range read stopped:
//   the batch at `position` was read and had base offset `offset` (or
//   `position` was the readable end and `offset` the readable next offset),
//   so every batch before it has a last offset below `offset`. A read at
//   exactly that offset (the next read of a sequential reader) starts there
//   without an index lookup, after checking the header it finds. A
//   truncation or recovery forgets it; a read that raced one does not set it
//   (the generation changed).
import { assert } from '@seglog/common';
import { RecordBatch } from '@seglog/records';
import type { SegmentFileRef } from '../fetch-plan.js';
import { corruptBatch, logCorruption } from '../internal/log-errors.js';
import { surveyDamage } from '../recovery/damage-survey.js';
import type { DamagedRange } from '../recovery/damage-survey.js';
import { BATCH_HEADER_BYTES, BatchHeaderReader } from './batch-header-reader.js';
import type { OffsetIndex, OffsetPosition } from './offset-index.js';
import type { TimeIndex, TimestampOffset } from './time-index.js';

/** Window of forEachBatch's replay reads (larger for a larger batch). */
const REPLAY_CHUNK_BYTES = 1024 * 1024;
/** baseOffset int64 + batchLength int32: enough to know a batch's size. */
const BATCH_LENGTH_END = 12;
/** Largest window of readRange's header walk (one pread covers the headers of a whole range up to this). */
const WALK_CHUNK_BYTES = 1024 * 1024;
/** Window of a header read outside a readRange `into` buffer (the rare header that crosses its end). */
const INTO_MISS_CHUNK_BYTES = 16 * 1024;

/** A byte range of whole batches found by readRange. */
export interface SegmentRange {
  readonly position: number;
  readonly length: number;
  readonly firstOffset: number;
  readonly nextOffset: number;
  /**
   * The range's bytes, when readRange was given an `into` buffer and the
   * whole range fit in it: into[0, length), read once, already walked.
   */
  readonly bytes?: Buffer;
}

/** Offset-to-timestamp answer (ListOffsets). */
export interface TimestampLookup {
  readonly timestamp: number;
  readonly offset: number;
  /** The batch's partition leader epoch, or -1. */
  readonly leaderEpoch: number;
}

/** What a SegmentReader reads of its Segment (a shape, so segment.ts and this file do not import each other). */
export interface ReadableSegment {
  readonly baseOffset: number;
  readonly logFile: SegmentFileRef;
  readonly offsetIndex: OffsetIndex;
  readonly timeIndex: TimeIndex;
  readonly readablePosition: number;
  readonly readableNextOffset: number;
  rebuildIndexes(): Promise<void>;
}

export class SegmentReader {
  private readonly segment: ReadableSegment;
  /** Damaged ranges of the .log found after a read failed (issue 23 0c); null until surveyed. */
  private damage: readonly DamagedRange[] | null;
  private damageSurvey: Promise<readonly DamagedRange[]> | null;
  /** [0, framingCheckedTo) of the .log was walked header by header by reads and chains into whole batches. */
  private framingCheckedTo: number;
  /** Where the last range read stopped (see the file comment); -1 when unknown. */
  private continueOffset: number;
  private continuePosition: number;
  /** Counts forgetCheckedFraming() calls: a read that spans one learns nothing. */
  private generation: number;

  constructor(segment: ReadableSegment) {
    this.segment = segment;
    this.damage = null;
    this.damageSurvey = null;
    this.framingCheckedTo = 0;
    this.continueOffset = -1;
    this.continuePosition = -1;
    this.generation = 0;
  }

  /** The bytes were cut or rewritten (truncation, recovery): no prefix is known to be walked, no continuation holds. */
  forgetCheckedFraming(): void {
    this.framingCheckedTo = 0;
    this.continueOffset = -1;
    this.continuePosition = -1;
    this.generation++;
  }

  /**
   * The batch holding `offset` (the first with lastOffset ≥ offset) below
   * `limit`: true with its header in `reader`, false when there is none.
   */
  async translateOffset(offset: number, reader: BatchHeaderReader, limit = this.segment.readablePosition): Promise<boolean> {
    const entry = this.segment.offsetIndex.lookup(offset);
    if (!(await this.readAtEntry(entry, reader, limit))) return false;
    let position = entry.position;
    while (reader.lastOffset < offset) {
      position += reader.size;
      if (!(await reader.read(position, limit))) return false;
    }
    return true;
  }

  /**
   * Reads the header of the batch an offset-index entry points at (the one
   * header read a lookup does anyway) and checks the entry against it: a
   * real entry (position > 0) below `limit` must start a batch whose last
   * offset is the entry's offset. False when the entry is at or past `limit`
   * (the active segment indexes a batch before its bytes are written).
   * Throws SEGLOG_ERR_LOG_CORRUPTION for a wrong entry (a damaged trusted
   * .index: the caller rebuilds it, see withIndexRebuild) or a malformed
   * header.
   */
  private async readAtEntry(entry: OffsetPosition, reader: BatchHeaderReader, limit: number): Promise<boolean> {
    if (!(await reader.read(entry.position, limit))) {
      if (entry.position < limit) throw this.indexEntryMismatch(entry, -1);
      return false;
    }
    if (entry.position > 0 && reader.lastOffset !== entry.offset) throw this.indexEntryMismatch(entry, reader.lastOffset);
    return true;
  }

  private indexEntryMismatch(entry: OffsetPosition, lastOffset: number): Error {
    return logCorruption(this.segment.offsetIndex.path, 'offset index entry does not point at a batch ending at its offset', {
      baseOffset: this.segment.baseOffset, offset: entry.offset, position: entry.position, lastOffset,
    });
  }

  /**
   * Runs `read`; when it fails with SEGLOG_ERR_LOG_CORRUPTION (an index entry
   * that does not match the .log, or a header read through one that is not a
   * batch), rebuilds the indexes from the .log and runs it once more with
   * `retry` = true. The .log is authoritative and its headers are checked by
   * the rebuild, so corruption that survives the rebuild is real.
   */
  private async withIndexRebuild<T>(read: (retry: boolean) => Promise<T>): Promise<T> {
    try {
      return await read(false);
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SEGLOG_ERR_LOG_CORRUPTION' || this.damage !== null) throw error;
      try {
        await this.segment.rebuildIndexes();
      } catch (rebuildError) {
        // The .log itself is damaged: find where (once), then reads go around it (readRange) or say where it is.
        if ((rebuildError as { code?: unknown }).code !== 'SEGLOG_ERR_LOG_CORRUPTION') throw rebuildError;
        if ((await this.surveyDamage()).length === 0) throw rebuildError;
      }
      return read(true);
    }
  }

  /**
   * The damaged ranges of the written bytes (recovery/damage-survey.ts),
   * surveyed once and kept: a sealed segment's bytes do not change, and an
   * active one's damage below the written position stays where it is.
   */
  surveyDamage(): Promise<readonly DamagedRange[]> {
    if (this.damage !== null) return Promise.resolve(this.damage);
    this.damageSurvey ??= surveyDamage(this.segment.logFile.file, { baseOffset: this.segment.baseOffset, limit: this.segment.readablePosition, limitOffset: this.segment.readableNextOffset })
      .then((ranges) => {
        this.damage = ranges;
        return ranges;
      })
      .finally(() => {
        this.damageSurvey = null;
      });
    return this.damageSurvey;
  }

  /** The damaged ranges found so far (empty until a read found damage). */
  get damagedRanges(): readonly DamagedRange[] {
    return this.damage ?? [];
  }

  /**
   * translateOffset for reads around surveyed damage: an offset inside a
   * damaged range is SEGLOG_ERR_LOG_CORRUPT_BATCH (file, position, the
   * offsets lost, the next readable one); one after it is found from the
   * range's resume position instead of walking through the damage.
   */
  private async translateAroundDamage(offset: number, reader: BatchHeaderReader, limit: number): Promise<boolean> {
    const damage = this.damage;
    if (damage === null || damage.length === 0) return this.translateOffset(offset, reader, limit);
    const entry = this.segment.offsetIndex.lookup(offset);
    let position = entry.position;
    let jumped = false;
    for (const range of damage) {
      if (offset >= range.firstOffset && offset < range.nextOffset) throw corruptBatch(this.segment.logFile.path, this.segment.baseOffset, range);
      if (range.resumePosition > position && range.nextOffset <= offset) {
        position = range.resumePosition;
        jumped = true;
      }
    }
    if (!jumped) return this.translateOffset(offset, reader, limit);
    if (!(await reader.read(position, limit))) return false;
    while (reader.lastOffset < offset) {
      position += reader.size;
      if (!(await reader.read(position, limit))) return false;
    }
    return true;
  }

  /** Whether a surveyed damaged range starts at `position`, or lies in [from, to). */
  private damageIn(from: number, to: number): boolean {
    for (const range of this.damage ?? []) if (range.position >= from && range.position < to) return true;
    return false;
  }

  /**
   * Whole batches from the one holding `startOffset`: at most `maxBytes`
   * (unless minOneMessage and the first batch alone is larger), only batches
   * with lastOffset < boundOffset, only written bytes. null when no batch
   * below the written position holds startOffset or later; length 0 when the
   * first batch does not fit.
   *
   * With `into` (and no known damage), the range's bytes are read into it
   * with one pread and walked there: when the whole range fits, it comes
   * back as `bytes` (into[0, length)), so the caller need not read it again.
   * `into` must not be touched by anyone else until the caller is done with
   * the bytes.
   */
  readRange(startOffset: number, maxBytes: number, boundOffset: number, minOneMessage: boolean, into: Buffer | null = null): Promise<SegmentRange | null> {
    return this.withIndexRebuild(() => {
      const damage = this.damage;
      if (into !== null && into.length >= BATCH_HEADER_BYTES && (damage === null || damage.length === 0)) {
        return this.readRangeInto(startOffset, maxBytes, boundOffset, minOneMessage, into);
      }
      return this.readRangeOnce(startOffset, maxBytes, boundOffset, minOneMessage);
    });
  }

  /**
   * readRange with a buffer: the first batch is found from the continuation
   * (a sequential reader's next read) or the index, then one pread of
   * min(into.length, limit - start) bytes into `into`, and every header of
   * the range is walked in memory (checked as BatchHeaderReader checks it).
   * Headers beyond `into` (a range larger than it) are read as usual; the
   * range then comes back without `bytes`.
   */
  private async readRangeInto(startOffset: number, maxBytes: number, boundOffset: number, minOneMessage: boolean, into: Buffer): Promise<SegmentRange | null> {
    const generation = this.generation;
    const limit = this.segment.readablePosition;
    const limitOffset = this.segment.readableNextOffset; // read with `limit`: the offset after the batches below it
    const file = this.segment.logFile.file;
    let start = -1;
    let got = 0;
    let w: BatchHeaderReader | null = null;
    if (this.continueOffset === startOffset && this.continuePosition <= limit) {
      start = this.continuePosition;
      got = await file.pread(into, start, Math.min(into.length, limit - start));
      w = new BatchHeaderReader(file, INTO_MISS_CHUNK_BYTES, { buffer: into, position: start, length: got });
      if (!(await w.read(start, limit))) return null; // nothing written past where the last read stopped
      if (w.baseOffset !== startOffset) start = -1; // not the batch the continuation named: use the index
    }
    if (start < 0) {
      const reader = new BatchHeaderReader(file);
      if (!(await this.translateOffset(startOffset, reader, limit))) return null;
      start = reader.position;
      got = await file.pread(into, start, Math.min(into.length, limit - start));
      w = new BatchHeaderReader(file, INTO_MISS_CHUNK_BYTES, { buffer: into, position: start, length: got });
      // The header translateOffset read is there: read again from `into`, it is the range's first.
      if (!(await w.read(start, limit))) return null;
    }
    assert(w !== null, 'readRangeInto: a header reader exists once start is known');
    const firstOffset = w.baseOffset;
    const end = Math.min(limit, start + (minOneMessage ? Math.max(maxBytes, w.size) : maxBytes));
    let position = start;
    let nextOffset = startOffset;
    let stoppedAt = -1; // offset of the batch at `position` when the walk stopped on its header
    for (;;) {
      if (!(w.readInWindow(position, limit) ?? (await w.read(position, limit)))) { // no await per header inside `into`
        nextOffset = position === start ? startOffset : limitOffset;
        if (position === limit) stoppedAt = limitOffset;
        break;
      }
      if (position > start && w.baseOffset < nextOffset) {
        throw logCorruption(file.path, 'batch offsets go back below the written position', { baseOffset: this.segment.baseOffset, position, offset: w.baseOffset, expected: nextOffset });
      }
      if (w.lastOffset >= boundOffset || position + w.size > end) {
        nextOffset = position === start ? startOffset : w.baseOffset;
        stoppedAt = w.baseOffset;
        break;
      }
      position += w.size;
      nextOffset = w.lastOffset + 1;
    }
    if (generation === this.generation) {
      if (start <= this.framingCheckedTo && position > this.framingCheckedTo) this.framingCheckedTo = position;
      if (stoppedAt >= 0 && position > start) {
        this.continueOffset = stoppedAt;
        this.continuePosition = position;
      }
    }
    const length = position - start;
    if (length === 0 || length > got) return { position: start, length, firstOffset, nextOffset };
    return { position: start, length, firstOffset, nextOffset, bytes: into.subarray(0, length) };
  }

  private async readRangeOnce(startOffset: number, maxBytes: number, boundOffset: number, minOneMessage: boolean): Promise<SegmentRange | null> {
    const limit = this.segment.readablePosition;
    const reader = new BatchHeaderReader(this.segment.logFile.file);
    if (!(await this.translateAroundDamage(startOffset, reader, limit))) return null;
    const start = reader.position;
    const firstOffset = reader.baseOffset;
    const end = Math.min(limit, start + (minOneMessage ? Math.max(maxBytes, reader.size) : maxBytes));
    // Every batch before scanStart ends at or before `end` and has lastOffset < boundOffset.
    let scanStart = this.segment.offsetIndex.lookupByPosition(end);
    if (scanStart !== undefined && boundOffset - 1 >= this.segment.baseOffset) {
      const byBound = this.segment.offsetIndex.lookup(boundOffset - 1);
      if (byBound.position < scanStart.position) scanStart = byBound;
    }
    // A range goes to clients verbatim, so its framing must be checked here, not by a client (issue 23 0c: a
    // damaged length sent out stalls kcat). The skip through the index to scanStart trusts the bytes it jumps
    // over, so it is taken only over bytes an earlier read already walked (framingCheckedTo) and never over
    // known damage; otherwise every header of the range is read, in one chunked pass (at most 1 MiB).
    let position = start;
    if (scanStart !== undefined && scanStart.position > start && scanStart.position <= this.framingCheckedTo && !this.damageIn(start, scanStart.position)) {
      // The skip trusts the entry: check it (its header is the next one read anyway).
      await this.readAtEntry(scanStart, reader, limit);
      position = scanStart.position;
    }
    const walkFrom = position;
    const walker = new BatchHeaderReader(this.segment.logFile.file, Math.min(end - position + BATCH_HEADER_BYTES, WALK_CHUNK_BYTES));
    let nextOffset = startOffset;
    for (;;) {
      if (position > start && this.damageIn(position, position + 1)) break; // the next read, at nextOffset, says where
      if (!(await walker.read(position, limit))) {
        nextOffset = position === start ? startOffset : this.segment.readableNextOffset;
        break;
      }
      if (position > walkFrom && walker.baseOffset < nextOffset) {
        throw logCorruption(this.segment.logFile.path, 'batch offsets go back below the written position', { baseOffset: this.segment.baseOffset, position, offset: walker.baseOffset, expected: nextOffset });
      }
      if (walker.lastOffset >= boundOffset || position + walker.size > end) {
        nextOffset = position === start ? startOffset : walker.baseOffset;
        break;
      }
      position += walker.size;
      nextOffset = walker.lastOffset + 1;
    }
    // Walked from a checked boundary: the checked prefix grows (sequential readers pay the walk once per byte).
    if (walkFrom <= this.framingCheckedTo && position > this.framingCheckedTo) this.framingCheckedTo = position;
    return { position: start, length: position - start, firstOffset, nextOffset };
  }

  /**
   * Kafka's findOffsetByTimestamp: the first record with timestamp ≥
   * `timestamp` and offset ≥ `startingOffset`, or null.
   */
  findOffsetByTimestamp(timestamp: number, startingOffset: number): Promise<TimestampLookup | null> {
    return this.withIndexRebuild((retry) => this.findOffsetByTimestampOnce(timestamp, startingOffset, !retry));
  }

  /**
   * One lookup. With `checkEntry`, the time-index entry used is checked
   * against the batch it names: entries are (max timestamp so far, last
   * offset of the batch that first had it), so that batch must end at the
   * entry's offset and have exactly its timestamp, and every record before
   * it has a smaller timestamp (which is what lets the scan skip them). A
   * damaged entry fails the check (SEGLOG_ERR_LOG_CORRUPTION: rebuild and
   * retry without the check, the rebuilt entries being exact).
   */
  private async findOffsetByTimestampOnce(timestamp: number, startingOffset: number, checkEntry: boolean): Promise<TimestampLookup | null> {
    const entry: TimestampOffset = this.segment.timeIndex.lookup(timestamp);
    const reader = new BatchHeaderReader(this.segment.logFile.file);
    const limit = this.segment.readablePosition;
    if (checkEntry && entry.timestamp >= 0 && entry.offset < this.segment.readableNextOffset) {
      const found = await this.translateOffset(entry.offset, reader, limit);
      if (!found || reader.lastOffset !== entry.offset || reader.maxTimestamp !== entry.timestamp) {
        throw logCorruption(this.segment.timeIndex.path, 'time index entry does not match the batch at its offset', {
          baseOffset: this.segment.baseOffset, offset: entry.offset, timestamp: entry.timestamp, lastOffset: found ? reader.lastOffset : -1, maxTimestamp: found ? reader.maxTimestamp : -1,
        });
      }
    }
    if (!(await this.translateOffset(Math.max(entry.offset, startingOffset), reader, limit))) return null;
    let position = reader.position;
    while (await reader.read(position, limit)) {
      if (reader.maxTimestamp >= timestamp && reader.lastOffset >= startingOffset) {
        const found = await this.findInBatch(reader, timestamp, startingOffset);
        if (found !== null) return found;
      }
      position += reader.size;
    }
    return null;
  }

  private async findInBatch(reader: BatchHeaderReader, timestamp: number, startingOffset: number): Promise<TimestampLookup | null> {
    const bytes = Buffer.allocUnsafe(reader.size);
    await this.segment.logFile.file.pread(bytes, reader.position, reader.size);
    const batch = new RecordBatch(bytes);
    const cursor = batch.records();
    try {
      while (cursor.next()) {
        if (cursor.timestamp >= timestamp && cursor.offset >= startingOffset) {
          return { timestamp: cursor.timestamp, offset: cursor.offset, leaderEpoch: batch.partitionLeaderEpoch };
        }
      }
    } finally {
      cursor.close();
    }
    return null;
  }

  /**
   * Calls `onBatch` with a reused view of every batch with lastOffset ≥
   * `fromOffset` below the readable position, in order (producer-state
   * replay over written, trusted bytes; CRCs are not checked). Reads in
   * chunks of REPLAY_CHUNK_BYTES (larger for a larger batch).
   */
  async forEachBatch(fromOffset: number, onBatch: (batch: RecordBatch) => void): Promise<void> {
    const limit = this.segment.readablePosition;
    const reader = new BatchHeaderReader(this.segment.logFile.file);
    if (!(await this.translateOffset(fromOffset, reader, limit))) return;
    let position = reader.position;
    let window = Buffer.allocUnsafe(Math.min(REPLAY_CHUNK_BYTES, limit - position));
    let view: RecordBatch | undefined;
    while (position < limit) {
      const read = await this.segment.logFile.file.pread(window, position, Math.min(window.length, limit - position));
      let at = 0;
      while (at + BATCH_LENGTH_END <= read) {
        const size = window.readInt32BE(at + 8) + 12;
        if (size < BATCH_HEADER_BYTES || position + at + size > limit) {
          throw logCorruption(this.segment.logFile.path, 'bad batch size during producer-state replay', { baseOffset: this.segment.baseOffset, position: position + at, size });
        }
        if (at + size > read) break;
        view = view === undefined ? new RecordBatch(window, at) : view.reset(window, at);
        onBatch(view);
        at += size;
      }
      if (at === 0) {
        if (read < BATCH_LENGTH_END) throw logCorruption(this.segment.logFile.path, 'short read during producer-state replay', { baseOffset: this.segment.baseOffset, position, read });
        window = Buffer.allocUnsafe(window.readInt32BE(8) + 12);
        view = undefined;
        continue;
      }
      position += at;
    }
  }
}
