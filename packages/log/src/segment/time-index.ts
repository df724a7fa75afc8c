// TimeIndex: the sparse `.timeindex` file of a segment (reference/kafka-storage.md §7.2).
//
// On-disk format: a sequence of 12-byte big-endian entries
//   timestamp      int64  (written as two 32-bit halves)
//   relativeOffset int32  (offset − baseOffset, in [0, 2^31 − 1])
// no header, no checksum (rebuilt from the .log file when not trusted).
//
// Meaning: entry (T, O) says "the largest timestamp seen up to and including
// the batch whose last offset is O is T": every record with a timestamp > T
// comes after O.
//
// Invariants:
// - Timestamps strictly increase across entries (an entry is appended only
//   when its timestamp is above the last one; an equal timestamp is silently
//   ignored, a lower one is an error); offsets never decrease.
// - An empty index's last entry is (-1, baseOffset), so only timestamps ≥ 0
//   are ever indexed.
// - maxEntries = floor(file length / 12); isFull when entries ≥ maxEntries − 1:
//   one slot is kept for the entry written on roll/close (skipFullCheck).
// - Preallocation, trim on roll/close, entries = length / 12 on reopen, and
//   the in-memory mirror written back through Io: as OffsetIndex.
// - Timestamps are JS numbers; a stored timestamp outside the safe-integer
//   range is corruption (SEGLOG_ERR_INDEX_CORRUPT when returned).

import { assert, SeglogError } from '@seglog/common';
import type { Io, IoFile } from '@seglog/io';
import { lowerBound, upperBound } from '../internal/binary-search.js';
import { corruptIndex, indexFull, indexOffsetOverflow, invalidIndexOffset } from './index-errors.js';
import { IndexFile } from './index-file.js';
import { indexStorageOptions, openIndexStorage, SparseIndex } from './sparse-index.js';
import type { IndexOpenOptions } from './sparse-index.js';
import { readInt64BE, writeInt64BE } from '../internal/int64.js';

export const TIME_INDEX_ENTRY_BYTES = 12;
const INT32_MAX = 0x7fffffff;

/** A time-index entry: the max timestamp so far and the offset of the batch it was seen in. */
export interface TimestampOffset {
  readonly timestamp: number;
  readonly offset: number;
}

/** Encodes one entry at `at`. */
export function writeTimeIndexEntry(buffer: Buffer, at: number, timestamp: number, relativeOffset: number): void {
  writeInt64BE(buffer, timestamp, at);
  buffer.writeInt32BE(relativeOffset, at + 8);
}

export class TimeIndex extends SparseIndex {
  private timestampAtFn: ((slot: number) => number) | null = null;
  private relativeOffsetAtFn: ((slot: number) => number) | null = null;

  private constructor(storage: IndexFile, baseOffset: number) {
    super(storage, baseOffset, TIME_INDEX_ENTRY_BYTES);
  }

  /** An existing file opened without I/O (`file` from a deferred open, `size` as a clean close recorded it): loads on first lookup. */
  static deferred(io: Io, path: string, options: IndexOpenOptions, file: IoFile, size: number): TimeIndex {
    return new TimeIndex(IndexFile.deferred(io, path, indexStorageOptions(path, options, TIME_INDEX_ENTRY_BYTES, 'TimeIndex'), file, size), options.baseOffset);
  }

  /** Entry reader for the binary searches, made on first use (a sealed segment's index that is never searched costs no closure). */
  private get timestampAt(): (slot: number) => number {
    this.timestampAtFn ??= (slot) => readInt64BE(this.storage.mirror, slot * TIME_INDEX_ENTRY_BYTES);
    return this.timestampAtFn;
  }

  /** Entry reader for the binary searches, made on first use (a sealed segment's index that is never searched costs no closure). */
  private get relativeOffsetAt(): (slot: number) => number {
    this.relativeOffsetAtFn ??= (slot) => this.storage.mirror.readInt32BE(slot * TIME_INDEX_ENTRY_BYTES + 8);
    return this.relativeOffsetAtFn;
  }

  /**
   * Opens the index at `path`, creating it (preallocated to maxIndexBytes
   * rounded down to 12) when it does not exist; an existing file is read whole
   * and has entries = maxEntries = length / 12 until resize().
   */
  static async open(io: Io, path: string, options: IndexOpenOptions): Promise<TimeIndex> {
    const storage = await openIndexStorage(io, path, options, TIME_INDEX_ENTRY_BYTES, 'TimeIndex');
    return new TimeIndex(storage, options.baseOffset);
  }

  /** Full when only the slot reserved for the roll/close entry is left. */
  isFull(): boolean {
    return this.entries >= this.maxEntriesValue - 1;
  }

  /** The last entry, or (-1, baseOffset) when empty. */
  lastEntry(): TimestampOffset {
    const entries = this.entries;
    if (entries === 0) return { timestamp: -1, offset: this.baseOffset };
    return this.entryAt(entries - 1);
  }

  /** Entry number `slot` (0-based, < entries). */
  entry(slot: number): TimestampOffset {
    assert(Number.isInteger(slot) && slot >= 0 && slot < this.entries, 'TimeIndex.entry: slot out of range');
    return this.entryAt(slot);
  }

  /**
   * Appends (timestamp, offset) if timestamp is above the last entry's.
   * An entry equal to the last (same timestamp, same or higher offset) is
   * ignored. Throws SEGLOG_ERR_INDEX_FULL (unless skipFullCheck, which may
   * use the reserved slot), SEGLOG_ERR_INDEX_INVALID_OFFSET (offset below the
   * last), SEGLOG_ERR_INDEX_INVALID_TIMESTAMP (timestamp below the last),
   * SEGLOG_ERR_INDEX_OFFSET_OVERFLOW.
   */
  maybeAppend(timestamp: number, offset: number, skipFullCheck = false): void {
    assert(Number.isSafeInteger(timestamp), 'TimeIndex.maybeAppend: timestamp must be a safe integer');
    assert(Number.isSafeInteger(offset), 'TimeIndex.maybeAppend: offset must be a safe integer');
    this.storage.checkWritable();
    const entries = this.entries;
    if (!skipFullCheck && this.isFull()) throw indexFull(this.path, entries, this.maxEntriesValue);
    const last = this.lastEntry();
    if (entries !== 0 && offset < last.offset) throw invalidIndexOffset(this.path, offset, last.offset, entries);
    if (entries !== 0 && timestamp < last.timestamp) {
      throw new SeglogError(
        'SEGLOG_ERR_INDEX_INVALID_TIMESTAMP',
        `time index ${this.path}: timestamp ${timestamp} appended at entry ${entries} is below the last timestamp ${last.timestamp}`,
        { context: { path: this.path, timestamp, lastTimestamp: last.timestamp, entries } },
      );
    }
    if (timestamp <= last.timestamp) return;
    // Even with skipFullCheck there must be a slot left.
    if (entries >= this.maxEntriesValue) throw indexFull(this.path, entries, this.maxEntriesValue);
    const relative = offset - this.baseOffset;
    if (relative < 0 || relative > INT32_MAX) throw indexOffsetOverflow(this.path, this.baseOffset, offset);
    const at = this.storage.reserve(TIME_INDEX_ENTRY_BYTES);
    writeTimeIndexEntry(this.storage.mirror, at, timestamp, relative);
    this.storage.append(TIME_INDEX_ENTRY_BYTES);
  }

  /**
   * The largest entry with timestamp ≤ targetTimestamp, or (-1, baseOffset)
   * when there is none: where to start looking for the first record with a
   * timestamp ≥ target.
   */
  lookup(targetTimestamp: number): TimestampOffset {
    const slot = upperBound(this.entries, targetTimestamp, this.timestampAt) - 1;
    if (slot < 0) return { timestamp: -1, offset: this.baseOffset };
    return this.entryAt(slot);
  }

  /** Removes every entry with offset ≥ `offset` (as OffsetIndex.truncateTo, on the offset column). */
  truncateTo(offset: number): void {
    assert(Number.isSafeInteger(offset), 'TimeIndex.truncateTo: offset must be a safe integer');
    const keep = lowerBound(this.entries, offset - this.baseOffset, this.relativeOffsetAt);
    this.storage.truncateUsed(keep * TIME_INDEX_ENTRY_BYTES);
  }

  truncate(): void {
    this.storage.truncateUsed(0);
  }

  /**
   * Kafka's sanity check (SEGLOG_ERR_INDEX_CORRUPT): non-empty with the last
   * timestamp below the first, or the last offset below the base offset, or
   * a file length that is not a multiple of 12. Also: a first or last
   * timestamp that is not a safe integer.
   */
  sanityCheck(): void {
    const entries = this.entries;
    if (entries !== 0) {
      const first = this.timestampAt(0);
      const last = this.timestampAt(entries - 1);
      if (!Number.isSafeInteger(first) || !Number.isSafeInteger(last)) {
        throw corruptIndex(this.path, 'a timestamp is outside the safe-integer range');
      }
      if (last < first) throw corruptIndex(this.path, `last timestamp ${last} is below the first timestamp ${first}`);
      const lastOffset = this.baseOffset + this.relativeOffsetAt(entries - 1);
      if (lastOffset < this.baseOffset) {
        throw corruptIndex(this.path, `last offset ${lastOffset} is below the base offset ${this.baseOffset}`);
      }
    }
    if (this.storage.fileBytes % TIME_INDEX_ENTRY_BYTES !== 0) {
      throw corruptIndex(this.path, `file length ${this.storage.fileBytes} is not a multiple of ${TIME_INDEX_ENTRY_BYTES}`);
    }
    this.checkEntries();
  }

  /** Stricter than Kafka: timestamps and relative offsets never decrease, offsets are never negative. */
  private checkEntries(): void {
    let previousTimestamp = Number.MIN_SAFE_INTEGER;
    let previousOffset = -1;
    for (let slot = 0; slot < this.entries; slot++) {
      const timestamp = this.timestampAt(slot);
      const offset = this.relativeOffsetAt(slot);
      if (!Number.isSafeInteger(timestamp) || timestamp < previousTimestamp) {
        throw corruptIndex(this.path, `entry ${slot}: timestamp ${timestamp} decreases (previous ${previousTimestamp})`);
      }
      if (offset < 0 || offset < previousOffset) {
        throw corruptIndex(this.path, `entry ${slot}: relative offset ${offset} decreases (previous ${previousOffset})`);
      }
      previousTimestamp = timestamp;
      previousOffset = offset;
    }
  }

  private entryAt(slot: number): TimestampOffset {
    const timestamp = this.timestampAt(slot);
    if (!Number.isSafeInteger(timestamp)) throw corruptIndex(this.path, `timestamp of entry ${slot} is outside the safe-integer range`);
    return { timestamp, offset: this.baseOffset + this.relativeOffsetAt(slot) };
  }
}
