// OffsetIndex: the sparse `.index` file of a segment (reference/kafka-storage.md §7.1).
//
// On-disk format: a sequence of 8-byte big-endian entries
//   relativeOffset int32  (offset − baseOffset, in [0, 2^31 − 1])
//   position       int32  (byte position of a batch start in the .log file)
// no header, no checksum (the .log file is authoritative; the index is
// rebuilt from it whenever it is not trusted).
//
// Meaning: entry (O, P) says "the batch(es) starting at byte P have last
// offset ≤ O, and nothing before P has an offset > O". The key is a batch
// LAST offset, the value a batch START position.
//
// Invariants:
// - Offsets strictly increase from entry to entry; so do positions.
// - entries ≤ maxEntries = floor(file length / 8).
// - A new file is preallocated (sparse ftruncate) to segmentIndexBytes
//   rounded down to 8; the unused tail is zero. On roll and close it is
//   trimmed to entries × 8. A reopened file has entries = length / 8
//   (rounded down), which is why an unclean stop requires a rebuild; the
//   active segment's index is resized back to the maximum after load and
//   after truncation (resize()).
// - The bytes live in an in-memory mirror written back through Io (see
//   segment/index-file.ts for why this replaces Kafka's mmap). Lookups are
//   synchronous and never wait for I/O.

import { assert } from '@seglog/common';
import type { Io, IoFile } from '@seglog/io';
import { lowerBound, upperBound } from '../internal/binary-search.js';
import { corruptIndex, indexFull, indexOffsetOverflow, invalidIndexOffset } from './index-errors.js';
import { IndexFile } from './index-file.js';
import { indexStorageOptions, openIndexStorage, SparseIndex } from './sparse-index.js';
import type { IndexOpenOptions } from './sparse-index.js';

export const OFFSET_INDEX_ENTRY_BYTES = 8;
const INT32_MAX = 0x7fffffff;

/** An offset-index entry: a batch last offset and the position of the batch start. */
export interface OffsetPosition {
  readonly offset: number;
  readonly position: number;
}

export type { IndexOpenOptions } from './sparse-index.js';

/** Encodes one entry at `at`. */
export function writeOffsetIndexEntry(buffer: Buffer, at: number, relativeOffset: number, position: number): void {
  buffer.writeInt32BE(relativeOffset, at);
  buffer.writeInt32BE(position, at + 4);
}

export class OffsetIndex extends SparseIndex {
  private keyAtFn: ((slot: number) => number) | null = null;
  private positionAtFn: ((slot: number) => number) | null = null;

  private constructor(storage: IndexFile, baseOffset: number) {
    super(storage, baseOffset, OFFSET_INDEX_ENTRY_BYTES);
  }

  /** An existing file opened without I/O (`file` from a deferred open, `size` as a clean close recorded it): loads on first lookup. */
  static deferred(io: Io, path: string, options: IndexOpenOptions, file: IoFile, size: number): OffsetIndex {
    return new OffsetIndex(IndexFile.deferred(io, path, indexStorageOptions(path, options, OFFSET_INDEX_ENTRY_BYTES, 'OffsetIndex'), file, size), options.baseOffset);
  }

  /** Entry reader for the binary searches, made on first use (a sealed segment's index that is never searched costs no closure). */
  private get keyAt(): (slot: number) => number {
    this.keyAtFn ??= (slot) => this.storage.mirror.readInt32BE(slot * OFFSET_INDEX_ENTRY_BYTES);
    return this.keyAtFn;
  }

  /** Entry reader for the binary searches, made on first use (a sealed segment's index that is never searched costs no closure). */
  private get positionAt(): (slot: number) => number {
    this.positionAtFn ??= (slot) => this.storage.mirror.readInt32BE(slot * OFFSET_INDEX_ENTRY_BYTES + 4);
    return this.positionAtFn;
  }

  /**
   * Opens the index at `path`, creating it (preallocated to maxIndexBytes
   * rounded down to 8) when it does not exist. An existing file is read
   * whole; its entry count is its length / 8, its maxEntries the same
   * until resize().
   */
  static async open(io: Io, path: string, options: IndexOpenOptions): Promise<OffsetIndex> {
    const storage = await openIndexStorage(io, path, options, OFFSET_INDEX_ENTRY_BYTES, 'OffsetIndex');
    return new OffsetIndex(storage, options.baseOffset);
  }

  isFull(): boolean {
    return this.entries >= this.maxEntriesValue;
  }

  /** The last entry's offset, or the base offset when empty. */
  lastOffset(): number {
    const entries = this.entries;
    return entries === 0 ? this.baseOffset : this.baseOffset + this.keyAt(entries - 1);
  }

  /** Entry number `slot` (0-based, < entries). */
  entry(slot: number): OffsetPosition {
    assert(Number.isInteger(slot) && slot >= 0 && slot < this.entries, 'OffsetIndex.entry: slot out of range');
    return { offset: this.baseOffset + this.keyAt(slot), position: this.positionAt(slot) };
  }

  /**
   * Appends (offset, position). `offset` is a batch last offset and must be
   * above the last entry's; `position` is the batch start. Throws
   * SEGLOG_ERR_INDEX_FULL, SEGLOG_ERR_INDEX_OFFSET_OVERFLOW,
   * SEGLOG_ERR_INDEX_INVALID_OFFSET. The entry is visible to lookups at
   * once; its bytes reach the file in the background (flush() to wait).
   */
  append(offset: number, position: number): void {
    assert(Number.isSafeInteger(offset), 'OffsetIndex.append: offset must be a safe integer');
    assert(Number.isInteger(position) && position >= 0 && position <= INT32_MAX, 'OffsetIndex.append: position must be an int32 >= 0');
    this.storage.checkWritable();
    const entries = this.entries;
    if (entries >= this.maxEntriesValue) throw indexFull(this.path, entries, this.maxEntriesValue);
    if (entries > 0 && offset <= this.lastOffset()) throw invalidIndexOffset(this.path, offset, this.lastOffset(), entries);
    const relative = offset - this.baseOffset;
    if (relative < 0 || relative > INT32_MAX) throw indexOffsetOverflow(this.path, this.baseOffset, offset);
    const at = this.storage.reserve(OFFSET_INDEX_ENTRY_BYTES);
    writeOffsetIndexEntry(this.storage.mirror, at, relative, position);
    this.storage.append(OFFSET_INDEX_ENTRY_BYTES);
  }

  /**
   * The largest entry with offset ≤ targetOffset: where to start scanning the
   * .log for the batch containing targetOffset. (baseOffset, 0) when there is none.
   */
  lookup(targetOffset: number): OffsetPosition {
    const slot = upperBound(this.entries, targetOffset - this.baseOffset, this.keyAt) - 1;
    if (slot < 0) return { offset: this.baseOffset, position: 0 };
    return { offset: this.baseOffset + this.keyAt(slot), position: this.positionAt(slot) };
  }

  /**
   * The entry with the largest position ≤ `position`, or undefined: a batch
   * boundary at or before a byte limit (bounds a read to whole batches
   * without scanning every header).
   */
  lookupByPosition(position: number): OffsetPosition | undefined {
    const slot = upperBound(this.entries, position, this.positionAt) - 1;
    if (slot < 0) return undefined;
    return { offset: this.baseOffset + this.keyAt(slot), position: this.positionAt(slot) };
  }

  /**
   * The smallest entry whose position is ≥ start.position + fetchBytes, or
   * undefined: an offset above everything a fetch of fetchBytes from `start`
   * can return (bounds the aborted-transaction lookup of read_committed).
   * Kafka's search returns the entry after an exact match on slot 0; this
   * returns the exact match (the documented meaning).
   */
  fetchUpperBoundOffset(start: OffsetPosition, fetchBytes: number): OffsetPosition | undefined {
    const entries = this.entries;
    const slot = lowerBound(entries, start.position + fetchBytes, this.positionAt);
    if (slot >= entries) return undefined;
    return { offset: this.baseOffset + this.keyAt(slot), position: this.positionAt(slot) };
  }

  /**
   * Removes every entry with offset ≥ `offset` (Kafka's truncateTo: keep the
   * entries before an exact match, else everything up to the floor entry).
   * The file keeps its length; resize() or trim() set it.
   */
  truncateTo(offset: number): void {
    assert(Number.isSafeInteger(offset), 'OffsetIndex.truncateTo: offset must be a safe integer');
    const keep = lowerBound(this.entries, offset - this.baseOffset, this.keyAt);
    this.storage.truncateUsed(keep * OFFSET_INDEX_ENTRY_BYTES);
  }

  /** Removes every entry. */
  truncate(): void {
    this.storage.truncateUsed(0);
  }

  /**
   * Kafka's sanity check: corrupt (SEGLOG_ERR_INDEX_CORRUPT) when non-empty
   * with a last offset below the base offset, or when the file length is not
   * a multiple of 8.
   */
  sanityCheck(logBytes?: number): void {
    const entries = this.entries;
    if (entries !== 0 && this.lastOffset() < this.baseOffset) {
      throw corruptIndex(this.path, `last offset ${this.lastOffset()} is below the base offset ${this.baseOffset}`);
    }
    if (this.storage.fileBytes % OFFSET_INDEX_ENTRY_BYTES !== 0) {
      throw corruptIndex(this.path, `file length ${this.storage.fileBytes} is not a multiple of ${OFFSET_INDEX_ENTRY_BYTES}`);
    }
    this.checkEntries(logBytes);
  }

  /**
   * Stricter than Kafka, which trusts an index below the recovery point: a
   * torn or garbage sector can leave entries that pass Kafka's two checks yet
   * send a lookup to a negative position or into the middle of nowhere. Every
   * entry must have a non-negative relative offset and position, both
   * strictly increasing, and (given the .log length) a position inside the
   * file. O(entries), at load only.
   */
  private checkEntries(logBytes: number | undefined): void {
    let previousKey = -1;
    let previousPosition = -1;
    for (let slot = 0; slot < this.entries; slot++) {
      const key = this.keyAt(slot);
      const position = this.positionAt(slot);
      if (key < 0 || key <= previousKey) {
        throw corruptIndex(this.path, `entry ${slot}: relative offset ${key} does not increase (previous ${previousKey})`);
      }
      if (position < 0 || position <= previousPosition) {
        throw corruptIndex(this.path, `entry ${slot}: position ${position} does not increase (previous ${previousPosition})`);
      }
      if (logBytes !== undefined && position >= logBytes) {
        throw corruptIndex(this.path, `entry ${slot}: position ${position} is past the end of the log (${logBytes} bytes)`);
      }
      previousKey = key;
      previousPosition = position;
    }
  }
}
