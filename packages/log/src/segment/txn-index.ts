// TxnIndex: the `.txnindex` file of a segment, listing the transactions
// aborted in it (reference/kafka-storage.md §7.3).
//
// On-disk format: a sequence of 34-byte big-endian AbortedTxn entries
//   version          int16  (= 0)
//   producerId       int64
//   firstOffset      int64  (first offset of the transaction; may be in an earlier segment)
//   lastOffset       int64  (offset of the ABORT marker, which is in this segment)
//   lastStableOffset int64  (the LSO when the transaction was aborted)
// no header, no checksum, not preallocated: the file is created at the first
// append and its length is entries × 34.
//
// Invariants:
// - Only aborted transactions are written, into the index of the segment
//   holding the ABORT marker; lastOffset strictly increases from entry to entry.
// - A partial entry (< 34 bytes) at the end of the file is ignored on read
//   and overwritten (the file is cut to whole entries) by the next write-back.
// - A version other than 0, or an int64 outside the safe-integer range, is
//   corruption: sanityCheck() and every read throw SEGLOG_ERR_INDEX_CORRUPT
//   until reset(). (Kafka rejects versions above 0; no negative version was
//   ever written, so we reject those too.)
// - The bytes live in an in-memory mirror written back through Io (see
//   segment/index-file.ts); reads never wait for I/O.

import { assert } from '@seglog/common';
import type { Io } from '@seglog/io';
import { lowerBound } from '../internal/binary-search.js';
import { corruptIndex, invalidIndexOffset } from './index-errors.js';
import { IndexFile } from './index-file.js';
import type { IndexFileOptions } from './index-file.js';
import { readInt64BE, writeInt64BE } from '../internal/int64.js';

export const TXN_INDEX_ENTRY_BYTES = 34;
const CURRENT_VERSION = 0;
const INITIAL_CAPACITY_BYTES = 64 * TXN_INDEX_ENTRY_BYTES;

export interface AbortedTxn {
  readonly producerId: number;
  readonly firstOffset: number;
  readonly lastOffset: number;
  readonly lastStableOffset: number;
}

export interface TxnIndexSearchResult {
  /** Aborted transactions overlapping the searched range, in index order. */
  readonly txns: AbortedTxn[];
  /**
   * True when an entry with lastStableOffset ≥ upperBoundOffset was seen: no
   * later segment can hold a transaction overlapping the range.
   */
  readonly isComplete: boolean;
}

export interface TxnIndexOpenOptions {
  readonly baseOffset: number;
  /** Open read-only (tools). Default false. */
  readonly readOnly?: boolean;
  /** Whether the file exists, when the caller knows it (a directory listing). */
  readonly present?: boolean | undefined;
}

/** Encodes one AbortedTxn (version 0) at `at`. */
export function writeAbortedTxn(buffer: Buffer, at: number, txn: AbortedTxn): void {
  buffer.writeInt16BE(CURRENT_VERSION, at);
  writeInt64BE(buffer, txn.producerId, at + 2);
  writeInt64BE(buffer, txn.firstOffset, at + 10);
  writeInt64BE(buffer, txn.lastOffset, at + 18);
  writeInt64BE(buffer, txn.lastStableOffset, at + 26);
}

function txnStorageOptions(options: TxnIndexOpenOptions): IndexFileOptions {
  return { entryBytes: TXN_INDEX_ENTRY_BYTES, sizing: 'exact', preallocateBytes: 0, readOnly: options.readOnly ?? false, initialCapacityBytes: INITIAL_CAPACITY_BYTES, present: options.present };
}

export class TxnIndex {
  readonly baseOffset: number;
  private readonly storage: IndexFile;
  /** First problem found in the file, or null. */
  private corruption: string | null;
  private lastOffsetAtFn: ((slot: number) => number) | null = null;

  private constructor(storage: IndexFile, baseOffset: number) {
    this.baseOffset = baseOffset;
    this.storage = storage;
    this.corruption = null;
  }

  /** Entry reader for the binary searches, made on first use (a sealed segment's index that is never searched costs no closure). */
  private get lastOffsetAt(): (slot: number) => number {
    this.lastOffsetAtFn ??= (slot) => readInt64BE(this.storage.mirror, slot * TXN_INDEX_ENTRY_BYTES + 18);
    return this.lastOffsetAtFn;
  }

  /** The index of a segment that has no .txnindex file (known from a directory listing): empty, no I/O. */
  static absent(io: Io, path: string, options: TxnIndexOpenOptions): TxnIndex {
    return new TxnIndex(IndexFile.deferred(io, path, txnStorageOptions(options), null, 0), options.baseOffset);
  }

  /**
   * Opens the index at `path`. A missing file is an empty index; the file is
   * created at the first append's write-back (Kafka creates it lazily too).
   */
  static async open(io: Io, path: string, options: TxnIndexOpenOptions): Promise<TxnIndex> {
    assert(Number.isSafeInteger(options.baseOffset) && options.baseOffset >= 0, 'TxnIndex.open: baseOffset must be a non-negative safe integer');
    const storage = await IndexFile.open(io, path, txnStorageOptions(options));
    const index = new TxnIndex(storage, options.baseOffset);
    index.corruption = index.findCorruption();
    return index;
  }

  get path(): string {
    return this.storage.path;
  }

  get entries(): number {
    return this.storage.usedBytes / TXN_INDEX_ENTRY_BYTES;
  }

  get sizeBytes(): number {
    return this.storage.usedBytes;
  }

  isEmpty(): boolean {
    return this.storage.usedBytes === 0;
  }

  /** The last entry's lastOffset, or undefined when empty. */
  lastOffset(): number | undefined {
    this.throwIfCorrupt();
    const entries = this.entries;
    return entries === 0 ? undefined : this.lastOffsetAt(entries - 1);
  }

  /**
   * Appends an aborted transaction. Its lastOffset must be above the last
   * entry's (SEGLOG_ERR_INDEX_INVALID_OFFSET). Visible at once; written back
   * in the background (flush() to make it durable).
   */
  append(txn: AbortedTxn): void {
    assert(Number.isSafeInteger(txn.producerId), 'TxnIndex.append: producerId must be a safe integer');
    assert(Number.isSafeInteger(txn.firstOffset), 'TxnIndex.append: firstOffset must be a safe integer');
    assert(Number.isSafeInteger(txn.lastOffset), 'TxnIndex.append: lastOffset must be a safe integer');
    assert(Number.isSafeInteger(txn.lastStableOffset), 'TxnIndex.append: lastStableOffset must be a safe integer');
    this.storage.checkWritable();
    const last = this.lastOffset();
    if (last !== undefined && last >= txn.lastOffset) throw invalidIndexOffset(this.path, txn.lastOffset, last, this.entries);
    const at = this.storage.reserve(TXN_INDEX_ENTRY_BYTES);
    writeAbortedTxn(this.storage.mirror, at, txn);
    this.storage.append(TXN_INDEX_ENTRY_BYTES);
  }

  /** Every entry, in order. */
  allAbortedTxns(): AbortedTxn[] {
    this.throwIfCorrupt();
    const out: AbortedTxn[] = [];
    const entries = this.entries;
    for (let slot = 0; slot < entries; slot++) out.push(this.entryAt(slot));
    return out;
  }

  /**
   * The entries with lastOffset ≥ fetchOffset and firstOffset < upperBoundOffset,
   * in order. Stops with isComplete at the first entry whose lastStableOffset
   * ≥ upperBoundOffset (after considering that entry); otherwise isComplete is
   * false and the caller goes on with the next segment's index.
   */
  collectAbortedTxns(fetchOffset: number, upperBoundOffset: number): TxnIndexSearchResult {
    this.throwIfCorrupt();
    const txns: AbortedTxn[] = [];
    const entries = this.entries;
    for (let slot = 0; slot < entries; slot++) {
      const txn = this.entryAt(slot);
      if (txn.lastOffset >= fetchOffset && txn.firstOffset < upperBoundOffset) txns.push(txn);
      if (txn.lastStableOffset >= upperBoundOffset) return { txns, isComplete: true };
    }
    return { txns, isComplete: false };
  }

  /** Removes the entries with lastOffset ≥ `offset` (the file is cut at the first of them). */
  truncateTo(offset: number): void {
    assert(Number.isSafeInteger(offset), 'TxnIndex.truncateTo: offset must be a safe integer');
    this.throwIfCorrupt();
    const keep = lowerBound(this.entries, offset, this.lastOffsetAt);
    this.storage.truncateUsed(keep * TXN_INDEX_ENTRY_BYTES);
  }

  /** Removes every entry (the file is truncated to 0) and forgets any corruption. */
  reset(): void {
    this.storage.checkWritable();
    this.corruption = null;
    // Bytes of a damaged or partial tail are dropped by the write-back's ftruncate.
    this.storage.truncateUsed(0);
  }

  /**
   * SEGLOG_ERR_INDEX_CORRUPT if an entry has a bad version or an unsafe
   * int64, or (Kafka's check) a lastOffset below the segment base offset.
   */
  sanityCheck(): void {
    this.throwIfCorrupt();
    const entries = this.entries;
    for (let slot = 0; slot < entries; slot++) {
      const lastOffset = this.lastOffsetAt(slot);
      if (lastOffset < this.baseOffset) {
        throw corruptIndex(this.path, `last offset ${lastOffset} of entry ${slot} is below the base offset ${this.baseOffset}`);
      }
    }
  }

  flush(): Promise<void> {
    return this.storage.flush();
  }

  /** Waits for pending write-backs (no fdatasync); rejects with the kept failure. */
  drain(): Promise<void> {
    return this.storage.drain();
  }

  /** No write-back pending or running and no failure kept (drain() would find nothing to do). */
  get settled(): boolean {
    return this.storage.settled;
  }

  /** Reports the first failed file operation (background write-backs included) to `listener` (the log's fail-stop). */
  setFailureListener(listener: (error: unknown) => void): void {
    this.storage.setFailureListener(listener);
  }

  renameTo(path: string): Promise<void> {
    return this.storage.rename(path);
  }

  /** Writes back pending entries and closes. Does not fdatasync: flush() first. */
  close(): Promise<void> {
    return this.storage.close();
  }

  delete(): Promise<void> {
    return this.storage.delete();
  }

  private throwIfCorrupt(): void {
    if (this.corruption !== null) throw corruptIndex(this.path, this.corruption);
  }

  private entryAt(slot: number): AbortedTxn {
    const at = slot * TXN_INDEX_ENTRY_BYTES;
    const mirror = this.storage.mirror;
    return {
      producerId: readInt64BE(mirror, at + 2),
      firstOffset: readInt64BE(mirror, at + 10),
      lastOffset: readInt64BE(mirror, at + 18),
      lastStableOffset: readInt64BE(mirror, at + 26),
    };
  }

  private findCorruption(): string | null {
    const mirror = this.storage.mirror;
    const entries = this.entries;
    for (let slot = 0; slot < entries; slot++) {
      const at = slot * TXN_INDEX_ENTRY_BYTES;
      const version = mirror.readInt16BE(at);
      if (version !== CURRENT_VERSION) return `entry ${slot} has version ${version}, expected ${CURRENT_VERSION}`;
      for (let field = at + 2; field < at + TXN_INDEX_ENTRY_BYTES; field += 8) {
        if (!Number.isSafeInteger(readInt64BE(mirror, field))) return `entry ${slot} holds an int64 outside the safe-integer range`;
      }
    }
    return null;
  }
}
