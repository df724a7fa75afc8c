// ProducerStateManager: the idempotent/transactional producer state of one
// partition (Kafka's ProducerStateManager, reference/kafka-storage.md §8,
// §13, §17), and its `<20-digit offset>.snapshot` files (format: see
// producer-snapshot.ts).
//
// State:
// - `producers`: producer id → committed ProducerStateEntry;
// - `ongoingTxns`: open transactions, sorted by first offset;
// - `unreplicatedTxns`: completed transactions whose marker is not yet below
//   the high watermark (they still hold the LSO back), sorted by first offset;
// - `lastMapOffset` (map end offset): the state covers every offset below it;
// - `lastSnapOffset`: the map end offset of the newest snapshot written or
//   loaded (a snapshot is written only past it);
// - `snapshots`: offsets of the snapshot files in the directory, ascending.
//
// Invariants:
// - a producer has an entry in `ongoingTxns` iff its entry's
//   currentTxnFirstOffset is not null, keyed by that offset;
// - firstUnstableOffset() = min(first ongoing, first unreplicated) in O(1);
// - validation never mutates committed state: prepareUpdate() hands out a
//   ProducerAppendInfo that works on its own in-flight entry, and only
//   update() merges it (two phases, so a rejected batch leaves no trace);
// - the synchronous methods run on the caller; the disk methods (snapshots,
//   truncateAndReload, truncateFullyAndStartAt) run one at a time in call
//   order. takeSnapshot() encodes the state at the moment it is called.

import { assert, SeglogError } from '@seglog/common';
import type { Io } from '@seglog/io';
import type { RecordBatch } from '@seglog/records';
import { ProducerTxnList } from './producer-txn-list.js';
import { ProducerAppendInfo } from './producer-append-info.js';
import type { AppendOrigin, CompletedTxn, TxnMetadata } from './producer-append-info.js';
import {
  encodeSnapshot,
  latestValidSnapshot,
  snapshotOffsets,
  snapshotPath,
  snapshotTempNames,
  writeSnapshotFile,
} from './producer-snapshot.js';
import type { ProducerSnapshotEntry } from './producer-snapshot.js';
import { batchMetadata, ProducerStateEntry } from './producer-state-entry.js';
import type { BatchMetadata, SequencedBatch } from './producer-state-entry.js';

/** Kafka's producer.id.expiration.ms default: one day. */
export const DEFAULT_PRODUCER_ID_EXPIRATION_MS = 86_400_000;

export interface ProducerStateManagerOptions {
  readonly io: Io;
  /** The partition directory holding the `.snapshot` files. */
  readonly dir: string;
  /** Kafka's producer.id.expiration.ms. Default 86400000. */
  readonly producerIdExpirationMs?: number;
}

/** A completed transaction of a replayed batch, with the LSO to record if it was aborted. */
export interface ReplayedTxn {
  readonly txn: CompletedTxn;
  readonly lastStableOffset: number;
}

/** A batch's producer identity and sequences, for duplicate detection. */
export interface DuplicateCandidate extends SequencedBatch {
  readonly producerId: number;
}

export class ProducerStateManager {
  /** null for an in-memory manager (BlackholeLog): it never touches disk. */
  private readonly io: Io | null;
  private dir: string;
  readonly producerIdExpirationMs: number;
  private readonly producers: Map<number, ProducerStateEntry>;
  private readonly ongoingTxns: ProducerTxnList;
  private readonly unreplicatedTxns: ProducerTxnList;
  private lastMapOffset: number;
  private lastSnapOffset: number;
  private snapshots: number[];
  /** Disk operations run one at a time, in call order. */
  private diskTail: Promise<void>;

  private constructor(options: { readonly io: Io | null; readonly dir: string; readonly producerIdExpirationMs?: number }, snapshots: number[]) {
    const expirationMs = options.producerIdExpirationMs ?? DEFAULT_PRODUCER_ID_EXPIRATION_MS;
    assert(Number.isSafeInteger(expirationMs) && expirationMs >= 0, 'ProducerStateManager: producerIdExpirationMs must be >= 0');
    this.io = options.io;
    this.dir = options.dir;
    this.producerIdExpirationMs = expirationMs;
    this.producers = new Map();
    this.ongoingTxns = new ProducerTxnList();
    this.unreplicatedTxns = new ProducerTxnList();
    this.lastMapOffset = 0;
    this.lastSnapOffset = 0;
    this.snapshots = snapshots;
    this.diskTail = Promise.resolve();
  }

  /**
   * Opens the manager of a partition directory: lists its snapshot files and
   * removes leftover `.snapshot.tmp` files (a crash during a write). The state
   * starts empty at map end offset 0; load it with truncateAndReload.
   */
  static async open(options: ProducerStateManagerOptions): Promise<ProducerStateManager> {
    const names = await options.io.readdir(options.dir);
    for (const name of snapshotTempNames(names)) await unlinkIfPresent(options.io, `${options.dir}/${name}`);
    return new ProducerStateManager(options, snapshotOffsets(names));
  }

  /**
   * A manager with no directory (BlackholeLog): the same validation and
   * transaction accounting, but no snapshot files. Its disk methods
   * (snapshots, truncateAndReload, truncateFullyAndStartAt) must not be called.
   */
  static inMemory(producerIdExpirationMs?: number): ProducerStateManager {
    return new ProducerStateManager({ io: null, dir: '', ...(producerIdExpirationMs === undefined ? {} : { producerIdExpirationMs }) }, []);
  }

  // ---------------------------------------------------------------- append

  /** Phase one: an append info that validates batches of `producerId` against its committed entry. */
  prepareUpdate(producerId: number, origin: AppendOrigin): ProducerAppendInfo {
    assert(Number.isSafeInteger(producerId) && producerId >= 0, 'prepareUpdate: producerId must be a safe integer >= 0');
    const current = this.producers.get(producerId) ?? ProducerStateEntry.empty(producerId);
    return new ProducerAppendInfo(producerId, current, origin);
  }

  /**
   * A retained batch of the committed state that `batch` duplicates (same
   * producer, same epoch, same first and last sequence; client origin only),
   * or null. The log then writes nothing and answers with its offsets.
   */
  findDuplicateBatch(batch: DuplicateCandidate): BatchMetadata | null {
    return this.producers.get(batch.producerId)?.findDuplicateBatch(batch) ?? null;
  }

  /** Phase two: commits an append info's changes and its begun transactions. */
  update(appendInfo: ProducerAppendInfo): void {
    const next = appendInfo.takeForCommit();
    const current = this.producers.get(appendInfo.producerId);
    if (current === undefined) this.producers.set(appendInfo.producerId, next);
    else current.update(next);
    for (const txn of appendInfo.startedTxns) this.ongoingTxns.put(txn);
  }

  /**
   * Kafka's lastStableOffset(completedTxn): the value an aborted transaction's
   * `.txnindex` entry records — the first offset of the earliest transaction
   * still open from another producer, else the marker offset + 1. Call after
   * update() and before completeTxn().
   */
  lastStableOffsetForAbort(completed: CompletedTxn): number {
    for (const txn of this.ongoingTxns.values()) {
      if (txn.producerId !== completed.producerId) return txn.firstOffset;
    }
    return completed.lastOffset + 1;
  }

  /** Moves a transaction closed by a committed marker from open to unreplicated. */
  completeTxn(completed: CompletedTxn): void {
    const txn = this.ongoingTxns.remove(completed.firstOffset);
    assert(txn !== undefined, 'completeTxn: no open transaction begins at this offset');
    assert(txn.producerId === completed.producerId, 'completeTxn: the open transaction belongs to another producer');
    txn.lastOffset = completed.lastOffset;
    this.unreplicatedTxns.put(txn);
  }

  /**
   * Replays one batch that is already in the log (recovery, REPLICATION
   * origin), as Kafka's LogSegment.recover does: update, then complete the
   * transaction a marker closes, then advance the map end offset. Returns the
   * completed transaction and its LSO (to append to `.txnindex` if aborted).
   */
  replayBatch(batch: RecordBatch): ReplayedTxn | null {
    let replayed: ReplayedTxn | null = null;
    if (batch.hasProducerId) {
      const appendInfo = this.prepareUpdate(batch.producerId, 'replication');
      const completed = appendInfo.append(batch);
      this.update(appendInfo);
      if (completed !== null) {
        replayed = { txn: completed, lastStableOffset: this.lastStableOffsetForAbort(completed) };
        this.completeTxn(completed);
      }
    }
    this.updateMapEndOffset(batch.lastOffset + 1);
    return replayed;
  }

  get mapEndOffset(): number {
    return this.lastMapOffset;
  }

  /** The state now covers every offset below `offset` (the log calls it with lastOffset + 1 after each append). */
  updateMapEndOffset(offset: number): void {
    assert(Number.isSafeInteger(offset) && offset >= 0, 'updateMapEndOffset: offset must be a safe integer >= 0');
    this.lastMapOffset = offset;
  }

  // ------------------------------------------------------ stability (LSO)

  /** Unreplicated completed transactions whose marker is now below the high watermark stop holding the LSO. */
  onHighWatermarkUpdated(highWatermark: number): void {
    this.removeUnreplicatedTransactions(highWatermark);
  }

  /** The first offset of the earliest open or not-yet-replicated transaction, or null. */
  firstUnstableOffset(): number | null {
    const ongoing = this.ongoingTxns.first()?.firstOffset;
    const unreplicated = this.unreplicatedTxns.first()?.firstOffset;
    if (ongoing === undefined) return unreplicated ?? null;
    if (unreplicated === undefined) return ongoing;
    return Math.min(ongoing, unreplicated);
  }

  /** LSO = the first unstable offset if it is below the high watermark, else the high watermark. */
  lastStableOffset(highWatermark: number): number {
    const firstUnstable = this.firstUnstableOffset();
    return firstUnstable !== null && firstUnstable < highWatermark ? firstUnstable : highWatermark;
  }

  // ------------------------------------------------------------- queries

  /** The committed entries by producer id (read-only; do not mutate). */
  activeProducers(): ReadonlyMap<number, ProducerStateEntry> {
    return this.producers;
  }

  lastEntry(producerId: number): ProducerStateEntry | undefined {
    return this.producers.get(producerId);
  }

  /** Open transactions in first-offset order. */
  ongoingTransactions(): readonly TxnMetadata[] {
    return this.ongoingTxns.values().slice();
  }

  /** Completed transactions still at or above the high watermark, in first-offset order. */
  unreplicatedTransactions(): readonly TxnMetadata[] {
    return this.unreplicatedTxns.values().slice();
  }

  get isEmpty(): boolean {
    return this.producers.size === 0 && this.unreplicatedTxns.size === 0;
  }

  // ---------------------------------------------------------- expiration

  private isProducerExpired(nowMs: number, entry: ProducerStateEntry): boolean {
    return entry.currentTxnFirstOffset === null && nowMs - entry.lastTimestamp >= this.producerIdExpirationMs;
  }

  /** Removes producers idle for producerIdExpirationMs without an open transaction; returns their ids. */
  removeExpiredProducers(nowMs: number): number[] {
    const removed: number[] = [];
    for (const [producerId, entry] of this.producers) {
      if (this.isProducerExpired(nowMs, entry)) removed.push(producerId);
    }
    for (const producerId of removed) this.producers.delete(producerId);
    return removed;
  }

  /** The log start offset moved forward (retention, deleteRecords): producer entries stay (Kafka keeps them). */
  onLogStartOffsetIncremented(logStartOffset: number): void {
    this.removeUnreplicatedTransactions(logStartOffset);
    if (this.lastMapOffset < logStartOffset) this.lastMapOffset = logStartOffset;
    this.lastSnapOffset = this.latestSnapshotOffset() ?? logStartOffset;
  }

  private removeUnreplicatedTransactions(offset: number): void {
    this.unreplicatedTxns.removeWhere((txn) => txn.lastOffset !== null && txn.lastOffset < offset);
  }

  // ------------------------------------------------------------ snapshots

  /** Snapshot file offsets known in the directory, ascending. */
  snapshotOffsets(): readonly number[] {
    return this.snapshots.slice();
  }

  latestSnapshotOffset(): number | null {
    return this.snapshots[this.snapshots.length - 1] ?? null;
  }

  oldestSnapshotOffset(): number | null {
    return this.snapshots[0] ?? null;
  }

  /** The partition directory moved (rename on delete/move); later snapshot files go there. */
  updateParentDir(dir: string): void {
    this.dir = dir;
  }

  /** The committed state as snapshot entries (only each producer's last batch survives). */
  snapshotEntries(): ProducerSnapshotEntry[] {
    const entries: ProducerSnapshotEntry[] = [];
    for (const entry of this.producers.values()) {
      entries.push({
        producerId: entry.producerId,
        producerEpoch: entry.producerEpoch,
        lastSequence: entry.lastSeq,
        lastOffset: entry.lastDataOffset,
        offsetDelta: entry.lastOffsetDelta,
        timestamp: entry.lastTimestamp,
        coordinatorEpoch: entry.coordinatorEpoch,
        currentTxnFirstOffset: entry.currentTxnFirstOffset ?? -1,
      });
    }
    return entries;
  }

  /**
   * Writes a snapshot at the map end offset, unless one at or past it exists
   * already (Kafka's testSkipSnapshotIfOffsetUnchanged). The state is encoded
   * now, synchronously; the write (tmp, fdatasync, rename, directory fsync)
   * runs after earlier disk operations. Resolves with the offset written, or
   * null when skipped. A failed write rejects (the log directory fails).
   */
  takeSnapshot(): Promise<number | null> {
    const offset = this.lastMapOffset;
    if (offset <= this.lastSnapOffset) return Promise.resolve(null);
    const bytes = encodeSnapshot(this.snapshotEntries());
    const previousSnapOffset = this.lastSnapOffset;
    this.lastSnapOffset = offset;
    return this.runDisk(async () => {
      try {
        await writeSnapshotFile(this.disk(), this.dir, offset, bytes);
      } catch (error) {
        if (this.lastSnapOffset === offset) this.lastSnapOffset = previousSnapOffset;
        throw error;
      }
      this.addSnapshotOffset(offset);
      return offset;
    });
  }

  /** Deletes the snapshot files with offset < `offset` (Kafka's deleteSnapshotsBefore). */
  deleteSnapshotsBelow(offset: number): Promise<void> {
    return this.deleteSnapshotsWhere((snapshot) => snapshot < offset);
  }

  /** Deletes the snapshot files with offset > `offset`. */
  deleteSnapshotsAbove(offset: number): Promise<void> {
    return this.deleteSnapshotsWhere((snapshot) => snapshot > offset);
  }

  /** Deletes the snapshot file at `offset`, if any (a segment with this base offset was deleted). */
  deleteSnapshot(offset: number): Promise<void> {
    return this.deleteSnapshotsWhere((snapshot) => snapshot === offset);
  }

  /**
   * Kafka's LogLoader stray-snapshot rule (§8): deletes every snapshot whose
   * offset is not the base offset of a segment, except the largest stray if it
   * lies above the highest segment base (a clean shutdown wrote it at the LEO).
   */
  removeStraySnapshots(segmentBaseOffsets: readonly number[]): Promise<void> {
    const bases = new Set(segmentBaseOffsets);
    let highestBase = -1;
    for (const base of segmentBaseOffsets) highestBase = Math.max(highestBase, base);
    const strays = this.snapshots.filter((offset) => !bases.has(offset));
    const largestStray = strays[strays.length - 1];
    const keep = largestStray !== undefined && largestStray > highestBase ? largestStray : -1;
    return this.deleteSnapshotsWhere((offset) => !bases.has(offset) && offset !== keep);
  }

  /**
   * Kafka's truncateAndReload: deletes snapshots above `logEndOffset` or at or
   * below `logStartOffset`; then, unless the state already ends at
   * `logEndOffset`, clears it and loads the newest valid snapshot (deleting
   * corrupt ones, dropping expired producers without an open transaction), or
   * starts empty at `logStartOffset`. The caller replays the log from
   * `mapEndOffset` to `logEndOffset` afterwards. No append may run meanwhile.
   */
  truncateAndReload(logStartOffset: number, logEndOffset: number, nowMs: number): Promise<void> {
    assert(Number.isSafeInteger(logStartOffset) && logStartOffset >= 0, 'truncateAndReload: bad logStartOffset');
    assert(Number.isSafeInteger(logEndOffset) && logEndOffset >= logStartOffset, 'truncateAndReload: bad logEndOffset');
    return this.runDisk(async () => {
      await this.deleteSnapshotFiles((offset) => offset > logEndOffset || offset <= logStartOffset);
      if (logEndOffset !== this.lastMapOffset) {
        this.clearState();
        await this.loadFromSnapshot(logStartOffset, nowMs);
      } else {
        this.onLogStartOffsetIncremented(logStartOffset);
      }
    });
  }

  /** Clears all state and deletes every snapshot; the state then starts at `offset`. */
  truncateFullyAndStartAt(offset: number): Promise<void> {
    assert(Number.isSafeInteger(offset) && offset >= 0, 'truncateFullyAndStartAt: offset must be a safe integer >= 0');
    this.clearState();
    this.lastMapOffset = offset;
    return this.runDisk(() => this.deleteSnapshotFiles(() => true));
  }

  private clearState(): void {
    this.producers.clear();
    this.ongoingTxns.clear();
    this.unreplicatedTxns.clear();
    this.lastMapOffset = 0;
    this.lastSnapOffset = 0;
  }

  private async loadFromSnapshot(logStartOffset: number, nowMs: number): Promise<void> {
    const { found, corruptOffsets } = await latestValidSnapshot(this.disk(), this.dir, this.snapshots);
    if (corruptOffsets.length > 0) {
      const corrupt = new Set(corruptOffsets);
      await this.deleteSnapshotFiles((offset) => corrupt.has(offset));
    }
    if (found === null) {
      this.lastSnapOffset = logStartOffset;
      this.lastMapOffset = logStartOffset;
      return;
    }
    for (const snapshotEntry of found.entries) {
      const entry = entryFromSnapshot(snapshotEntry);
      if (this.isProducerExpired(nowMs, entry)) continue;
      this.loadProducerEntry(entry);
    }
    this.lastSnapOffset = found.offset;
    this.lastMapOffset = found.offset;
  }

  private loadProducerEntry(entry: ProducerStateEntry): void {
    this.producers.set(entry.producerId, entry);
    if (entry.currentTxnFirstOffset !== null) {
      this.ongoingTxns.put({ producerId: entry.producerId, firstOffset: entry.currentTxnFirstOffset, lastOffset: null });
    }
  }

  private deleteSnapshotsWhere(predicate: (offset: number) => boolean): Promise<void> {
    return this.runDisk(() => this.deleteSnapshotFiles(predicate));
  }

  /** Unlinks matching snapshot files, then fsyncs the directory so that a deleted snapshot cannot return after a crash. */
  private async deleteSnapshotFiles(predicate: (offset: number) => boolean): Promise<void> {
    const doomed = this.snapshots.filter(predicate);
    if (doomed.length === 0) return;
    this.snapshots = this.snapshots.filter((offset) => !predicate(offset));
    const io = this.disk();
    for (const offset of doomed) await unlinkIfPresent(io, snapshotPath(this.dir, offset));
    await io.fsyncDir(this.dir);
  }

  private addSnapshotOffset(offset: number): void {
    if (this.snapshots.includes(offset)) return;
    this.snapshots.push(offset);
    this.snapshots.sort((a, b) => a - b);
  }

  private disk(): Io {
    assert(this.io !== null, 'ProducerStateManager: an in-memory manager has no snapshot files');
    return this.io;
  }

  private runDisk<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.diskTail.then(operation);
    this.diskTail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

/** A snapshot entry as a committed entry: its one batch (if any) with the entry's timestamp (Kafka's readSnapshot). */
function entryFromSnapshot(entry: ProducerSnapshotEntry): ProducerStateEntry {
  const batches = entry.lastOffset >= 0 ? [batchMetadata(entry.lastSequence, entry.lastOffset, entry.offsetDelta, entry.timestamp)] : [];
  const currentTxnFirstOffset = entry.currentTxnFirstOffset >= 0 ? entry.currentTxnFirstOffset : null;
  return new ProducerStateEntry(entry.producerId, entry.producerEpoch, entry.coordinatorEpoch, entry.timestamp, currentTxnFirstOffset, batches);
}

async function unlinkIfPresent(io: Io, path: string): Promise<void> {
  try {
    await io.unlink(path);
  } catch (error) {
    if (!(error instanceof SeglogError && error.code === 'SEGLOG_ERR_IO_NOT_FOUND')) throw error;
  }
}
