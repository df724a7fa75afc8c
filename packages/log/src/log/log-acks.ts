// LogAcks: when a Log answers that records are written or durable
// (written(), durable()) and the full flush that flush() and close() run.
//
// Invariants: a waiter for offset O resolves only once writtenOffset > O
// (durableOffset > O for durable()). Offline, only offsets durable before
// the failure still resolve (a batch written but not durable may be one the
// failure lost; nothing is acknowledged past a failure); every other call is
// refused with the failure. An offset not yet appended (>= logEndOffset)
// is refused with SEGLOG_ERR_LOG_OFFSET_NOT_APPENDED (after the offline
// check: offline wins), never left waiting for a record nobody may append.
// durable() starts a flush round if none runs
// (group commit). Hot path: an offset already covered returns one shared
// resolved promise; otherwise one waiter promise, no closure.

import { assert } from '@seglog/common';
import { offsetNotAppended } from '../internal/log-errors.js';
import type { FailStop } from './fail-stop.js';
import type { LogFlusher } from './log-flusher.js';
import type { LogPositions } from './log-positions.js';
import type { OffsetWaiters } from './offset-waiters.js';
import type { WriteQueue } from './write-queue.js';

const RESOLVED: Promise<void> = Promise.resolve();

export interface LogAcksDeps {
  readonly positions: LogPositions;
  readonly failStop: FailStop;
  readonly flusher: LogFlusher;
  readonly writeQueue: WriteQueue;
  readonly writtenWaiters: OffsetWaiters;
  readonly durableWaiters: OffsetWaiters;
}

export class LogAcks {
  private readonly positions: LogPositions;
  private readonly failStop: FailStop;
  private readonly flusher: LogFlusher;
  private readonly writeQueue: WriteQueue;
  private readonly writtenWaiters: OffsetWaiters;
  private readonly durableWaiters: OffsetWaiters;

  constructor(deps: LogAcksDeps) {
    this.positions = deps.positions;
    this.failStop = deps.failStop;
    this.flusher = deps.flusher;
    this.writeQueue = deps.writeQueue;
    this.writtenWaiters = deps.writtenWaiters;
    this.durableWaiters = deps.durableWaiters;
  }

  /**
   * Resolves once the record at `offset` is in the file (writtenOffset >
   * offset). Offline, only records durable before the failure still answer:
   * a batch written but not durable may be one the failure lost (a failed
   * fdatasync drops its pages), and nothing is acknowledged past a failure.
   */
  written(offset: number): Promise<void> {
    assert(Number.isSafeInteger(offset), 'Log.written: offset must be a safe integer');
    if (offset < this.positions.durable) return RESOLVED;
    const refused = this.failStop.refusal();
    if (refused !== null) return Promise.reject(refused);
    if (offset < this.positions.written) return RESOLVED;
    if (offset >= this.positions.logEnd) return Promise.reject(this.notAppended(offset, 'written'));
    return this.writtenWaiters.add(offset);
  }

  /**
   * Resolves once the record at `offset` is durable (durableOffset >
   * offset); starts a flush if none runs. offset >= logEndOffset rejects
   * with SEGLOG_ERR_LOG_OFFSET_NOT_APPENDED.
   */
  durable(offset: number): Promise<void> {
    assert(Number.isSafeInteger(offset), 'Log.durable: offset must be a safe integer');
    if (offset < this.positions.durable) return RESOLVED;
    const refused = this.failStop.refusal();
    if (refused !== null) return Promise.reject(refused);
    if (offset >= this.positions.logEnd) return Promise.reject(this.notAppended(offset, 'durable'));
    const promise = this.durableWaiters.add(offset);
    // A write waiting for its microtask goes now, carrying the sync this
    // waiter wants; with many producers it then overlaps their next builds.
    this.writeQueue.issueQueued();
    this.flusher.maybeStart();
    return promise;
  }

  private notAppended(offset: number, what: string): Error {
    return offsetNotAppended(this.failStop.dir, offset, this.positions.logEnd, what);
  }

  /**
   * flush()'s body (inside a mutation): everything accepted so far made
   * durable, and the directory fsynced if a segment file was created since.
   */
  async flushAll(): Promise<void> {
    this.failStop.checkWritable();
    const end = this.positions.logEnd;
    if (end > this.positions.durable) await this.durable(end - 1);
    if (this.flusher.isDirDirty) {
      try {
        await this.flusher.syncDir();
      } catch (error) {
        throw this.failStop.failWith(error);
      }
    }
  }
}
