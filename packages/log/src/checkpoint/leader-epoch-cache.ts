// LeaderEpochCache: the partition's epoch → start offset map, persisted in
// `leader-epoch-checkpoint` (reference/kafka-storage.md §23; file format in
// leader-epoch-checkpoint.ts).
//
// Invariants:
// - Entries are ordered by epoch; epochs strictly increase and so do start
//   offsets. Every epoch and start offset is ≥ 0.
// - assign() changes the map and resolves only when the checkpoint holding
//   the change is durable (Kafka writes it synchronously): the caller must not
//   acknowledge the append that started an epoch before that.
// - truncateFromEnd() / truncateFromStart() change the map at once and write
//   the checkpoint in the background (Kafka schedules that write too; stale
//   epochs restored after a crash are truncated again during loading).
//   flush() must be awaited before a clean close.
// - Checkpoint writes run one at a time; a write that has not started yet
//   takes every change made before it starts (so concurrent assigns share one
//   write). The first write failure is kept and rethrown by every later
//   assign/flush/clear, and reported at once to the failure listener (the
//   owning Log goes offline when a background rewrite fails, not at the next
//   flush): a log directory that failed a write is fail-stop.
// - Except out of descriptors or space (EMFILE/ENFILE/ENOSPC, issue 23 item 8):
//   the write is atomic (tmp, fsync, rename), so the previous checkpoint is
//   intact and describes every acknowledged batch; the change stays unwritten
//   (hasUnwrittenChanges) and the write rejects with the retriable
//   SEGLOG_ERR_LOG_RESOURCE_UNAVAILABLE, nothing kept: the append that needed
//   it is refused, and the next one writes it again.

import { dirname } from 'node:path/posix';
import { assert } from '@seglog/common';
import type { Io } from '@seglog/io';
import { isTransientResourceError, logResourceUnavailable } from '../internal/log-errors.js';
import { LeaderEpochCheckpoint } from './leader-epoch-checkpoint.js';
import type { EpochEntry } from './leader-epoch-checkpoint.js';

export type { EpochEntry } from './leader-epoch-checkpoint.js';

/** Kafka's UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET. */
export const UNDEFINED_EPOCH = -1;
export const UNDEFINED_EPOCH_OFFSET = -1;

export interface EpochEndOffset {
  readonly epoch: number;
  readonly endOffset: number;
}

const INT32_MAX = 0x7fffffff;

export class LeaderEpochCache {
  private readonly checkpoint: LeaderEpochCheckpoint;
  /** Ordered by epoch; see the invariants above. */
  private entries: EpochEntry[];
  /** True when the map has changes no started write includes. */
  private dirty: boolean;
  /** A write that is queued but has not taken its snapshot yet. */
  private pendingWrite: Promise<void> | null;
  private tail: Promise<void>;
  private failure: unknown;
  private failureListener: ((error: unknown) => void) | null;
  /** Checkpoint writes queued or running. */
  private unsettled: number;

  private constructor(checkpoint: LeaderEpochCheckpoint, entries: EpochEntry[]) {
    this.checkpoint = checkpoint;
    this.entries = entries;
    this.dirty = false;
    this.pendingWrite = null;
    this.tail = Promise.resolve();
    this.failure = undefined;
    this.failureListener = null;
    this.unsettled = 0;
  }

  /**
   * Whether the in-memory map may differ from the durable checkpoint (a
   * change not yet written, or a write queued or running). An append that
   * would be acknowledged on top of such a map waits for flush() first
   * (Log's conservative epoch rule).
   */
  get hasUnwrittenChanges(): boolean {
    return this.dirty || this.unsettled > 0;
  }

  /**
   * Loads the cache from the checkpoint at `path` (missing = empty). Entries
   * are re-applied with assign's rules, as Kafka does, so a file with
   * non-monotonic entries loads as the map those assigns produce; the file
   * is not rewritten until the next change.
   */
  static async load(io: Io, path: string): Promise<LeaderEpochCache> {
    const checkpoint = new LeaderEpochCheckpoint(io, path);
    const cache = new LeaderEpochCache(checkpoint, []);
    for (const entry of await checkpoint.read()) cache.assignInMemory(entry.epoch, entry.startOffset);
    // What was read is what the file holds: loading alone writes nothing (every open of a log used to rewrite and sync it).
    cache.dirty = false;
    return cache;
  }

  get path(): string {
    return this.checkpoint.path;
  }

  /**
   * Calls `listener` (synchronously, once) with the first failed checkpoint
   * write, background rewrites nobody awaits included (the Log's fail-stop).
   * A failure already kept is reported at once.
   */
  setFailureListener(listener: (error: unknown) => void): void {
    this.failureListener = listener;
    if (this.failure !== undefined) listener(this.failure);
  }

  /** A copy of the entries, in epoch order. */
  epochEntries(): EpochEntry[] {
    return this.entries.slice();
  }

  isEmpty(): boolean {
    return this.entries.length === 0;
  }

  latestEntry(): EpochEntry | undefined {
    return this.entries[this.entries.length - 1];
  }

  earliestEntry(): EpochEntry | undefined {
    return this.entries[0];
  }

  latestEpoch(): number | undefined {
    return this.latestEntry()?.epoch;
  }

  /**
   * Whether assign(epoch, startOffset) would change the map (and write the
   * checkpoint): false when the latest entry has this epoch and a start
   * offset ≤ startOffset. Lets an append decide where to run without assigning.
   */
  isUpdateNeeded(epoch: number, startOffset: number): boolean {
    const latest = this.latestEntry();
    return latest === undefined || epoch !== latest.epoch || startOffset < latest.startOffset;
  }

  /**
   * Records that `epoch` starts at `startOffset`: removes, from the newest
   * end, every entry with epoch ≥ `epoch` or start offset ≥ `startOffset`,
   * then adds the entry. Resolves true once the checkpoint with the change is
   * durable, false (at once) when nothing changed.
   */
  async assign(epoch: number, startOffset: number): Promise<boolean> {
    if (this.failure !== undefined) throw this.failure;
    if (!this.assignInMemory(epoch, startOffset)) return false;
    await this.requestWrite();
    return true;
  }

  /**
   * Removes the entries with start offset ≥ endOffset (after a truncation of
   * the log to endOffset). No-op for a negative endOffset. The checkpoint is
   * written in the background.
   */
  truncateFromEnd(endOffset: number): void {
    assert(Number.isSafeInteger(endOffset), 'LeaderEpochCache.truncateFromEnd: endOffset must be a safe integer');
    const latest = this.latestEntry();
    if (endOffset < 0 || latest === undefined || latest.startOffset < endOffset) return;
    let keep = this.entries.length;
    while (keep > 0 && (this.entries[keep - 1] as EpochEntry).startOffset >= endOffset) keep--;
    this.entries = this.entries.slice(0, keep);
    this.writeInBackground();
  }

  /**
   * Removes the entries with start offset ≤ startOffset (the log start moved
   * to startOffset) and re-inserts the last removed epoch starting at
   * startOffset. The checkpoint is written in the background.
   */
  truncateFromStart(startOffset: number): void {
    assert(Number.isSafeInteger(startOffset), 'LeaderEpochCache.truncateFromStart: startOffset must be a safe integer');
    let removed = 0;
    while (removed < this.entries.length && (this.entries[removed] as EpochEntry).startOffset <= startOffset) removed++;
    if (removed === 0) return;
    const lastRemoved = this.entries[removed - 1] as EpochEntry;
    // The first entry already starts exactly there (every open of a log whose start is its first epoch's): nothing changes, nothing is written.
    if (removed === 1 && lastRemoved.startOffset === startOffset) return;
    this.entries = [{ epoch: lastRemoved.epoch, startOffset }, ...this.entries.slice(removed)];
    this.writeInBackground();
  }

  /** Removes every entry and resolves when the empty checkpoint is durable (truncateFullyAndStartAt). */
  async clear(): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    this.entries = [];
    this.dirty = true;
    await this.requestWrite();
  }

  /**
   * The end offset of `requestedEpoch` (OffsetsForLeaderEpoch):
   * - UNDEFINED_EPOCH, or an epoch above every known one → (-1, -1);
   * - the latest epoch → (epoch, logEndOffset);
   * - an epoch below the first entry → (requestedEpoch, first entry's start);
   * - otherwise → (largest epoch ≤ requested, start of the next higher epoch).
   */
  endOffsetFor(requestedEpoch: number, logEndOffset: number): EpochEndOffset {
    if (requestedEpoch === UNDEFINED_EPOCH) return { epoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };
    const latest = this.latestEntry();
    if (latest !== undefined && latest.epoch === requestedEpoch) return { epoch: requestedEpoch, endOffset: logEndOffset };
    const higherSlot = this.entries.findIndex((entry) => entry.epoch > requestedEpoch);
    if (higherSlot === -1) return { epoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };
    const higher = this.entries[higherSlot] as EpochEntry;
    if (higherSlot === 0) return { epoch: requestedEpoch, endOffset: higher.startOffset };
    const floor = this.entries[higherSlot - 1] as EpochEntry;
    return { epoch: floor.epoch, endOffset: higher.startOffset };
  }

  /**
   * The epoch of the entry starting exactly at `offset`, else of the last
   * entry starting before it; undefined when every entry starts after it.
   */
  epochForOffset(offset: number): number | undefined {
    let previous: number | undefined;
    for (const entry of this.entries) {
      if (entry.startOffset === offset) return entry.epoch;
      if (entry.startOffset > offset) return previous;
      previous = entry.epoch;
    }
    return previous;
  }

  /** Writes pending changes and waits until every write has finished; rethrows a kept failure. */
  async flush(): Promise<void> {
    if (this.dirty) await this.requestWrite();
    await this.tail;
    if (this.failure !== undefined) throw this.failure;
  }

  /** Changes the map by assign's rules; true when it changed. */
  private assignInMemory(epoch: number, startOffset: number): boolean {
    assert(Number.isInteger(epoch) && epoch >= 0 && epoch <= INT32_MAX, 'LeaderEpochCache.assign: epoch must be a non-negative int32');
    assert(Number.isSafeInteger(startOffset) && startOffset >= 0, 'LeaderEpochCache.assign: startOffset must be a non-negative safe integer');
    if (!this.isUpdateNeeded(epoch, startOffset)) return false;
    let keep = this.entries.length;
    while (keep > 0) {
      const entry = this.entries[keep - 1] as EpochEntry;
      if (entry.epoch < epoch && entry.startOffset < startOffset) break;
      keep--;
    }
    this.entries = this.entries.slice(0, keep);
    this.entries.push({ epoch, startOffset });
    this.dirty = true;
    return true;
  }

  private writeInBackground(): void {
    this.dirty = true;
    if (this.failure !== undefined) return;
    // A failure is kept by requestWrite's chain and rethrown by flush/assign/clear.
    this.requestWrite().catch(() => undefined);
  }

  /** Joins the queued write, or queues one behind the running one. */
  private requestWrite(): Promise<void> {
    if (this.pendingWrite !== null) return this.pendingWrite;
    const write = this.tail.then(async () => {
      this.pendingWrite = null;
      if (this.failure !== undefined) throw this.failure;
      this.dirty = false;
      try {
        await this.checkpoint.write(this.entries.slice());
      } catch (error) {
        if (!isTransientResourceError(error)) throw error;
        this.dirty = true;
        throw logResourceUnavailable(dirname(this.checkpoint.path), 'writing the leader-epoch checkpoint', error);
      }
    });
    this.pendingWrite = write;
    this.unsettled++;
    this.tail = write.then(() => {
      this.unsettled--;
    }, (error: unknown) => {
      this.unsettled--;
      if (this.failure !== undefined || (error as { code?: unknown }).code === 'SEGLOG_ERR_LOG_RESOURCE_UNAVAILABLE') return;
      this.failure = error;
      this.failureListener?.(error);
    });
    return write;
  }
}
