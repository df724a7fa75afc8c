// MutationQueue: the one promise chain of a log's mutations (pooled
// appends, truncations, retention, flush(), close). Each runs after every
// mutation queued before it, so appends complete in call order and a
// caller-path append (which needs `pending` to be 0) never overtakes a
// pooled one. Bounded: more than maxPending waiting mutations, or a full
// pool queue, is refused at admission with the retriable
// SEGLOG_ERR_LOG_QUEUE_FULL, changing nothing; work already admitted is
// never refused later (runOnPool overflows instead).

import { Priority } from '@seglog/io';
import { logQueueFull } from '../internal/log-errors.js';
import { runOnPool } from './placement.js';
import type { PlacementReason, PoolPlacement } from './placement.js';

const RESOLVED: Promise<void> = Promise.resolve();

export class MutationQueue {
  private readonly dir: string;
  private readonly maxPending: number;
  private readonly where: PoolPlacement;
  /** Mutations queued or running on the chain (the caller path needs 0). */
  private pendingCount: number;
  private tailPromise: Promise<void>;

  constructor(dir: string, maxPending: number, where: PoolPlacement) {
    this.dir = dir;
    this.maxPending = maxPending;
    this.where = where;
    this.pendingCount = 0;
    this.tailPromise = RESOLVED;
  }

  get pending(): number {
    return this.pendingCount;
  }

  /** Settles after every mutation queued so far. */
  get tail(): Promise<void> {
    return this.tailPromise;
  }

  /** Runs `op` after every mutation queued before it. */
  run<T>(op: () => Promise<T>): Promise<T> {
    this.pendingCount++;
    const result = this.tailPromise.then(op);
    // Registered before the caller's continuation, so a caller that awaited this mutation sees it settled.
    this.tailPromise = result.then(this.done, this.done);
    return result;
  }

  /** Admits a mutation placed on the pool (or refuses it, changing nothing) and queues it on the chain. */
  runPooled<T>(reason: PlacementReason, op: () => Promise<T>): Promise<T> {
    if (this.pendingCount >= this.maxPending) {
      throw logQueueFull(this.dir, 'log', { pending: this.pendingCount, max: this.maxPending });
    }
    const pool = this.where.pool;
    if (!pool.hasRoom(Priority.append)) {
      throw logQueueFull(this.dir, 'pool', { queued: pool.queued, running: pool.running, maxQueued: pool.maxQueued });
    }
    const placement = this.where.placement;
    placement.append.pool++;
    placement.reasons[reason]++;
    return this.run(() => runOnPool(this.where, op, Priority.append));
  }

  private readonly done = (): void => {
    this.pendingCount--;
  };
}
