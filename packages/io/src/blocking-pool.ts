// BlockingPool: where work that may block (rolls, flushes, pooled appends and
// reads, checkpoints, tail-cache evictions) waits for a turn. Over p-queue:
//
// - bounded concurrency: at most `concurrency` tasks run at once (size it with
//   the libuv threadpool in mind: node-platform.md §1.3, §5.7);
// - bounded queue: at most `maxQueued` tasks wait. Admission is decided
//   synchronously: `hasRoom(priority)` says whether `submit` would accept, and
//   `submit` throws (synchronously, never as a rejected promise)
//   SEGLOG_ERR_IO_POOL_FULL (retriable) when it would not;
// - a reserved budget: the last `reservedQueued` queue slots are only for
//   work at Priority.flush or above, so background work cannot fill the queue
//   in front of the critical path (TigerBeetle's reserved pool budget);
// - priorities: higher runs first; equal priorities run in submission order;
// - counters: queued, running, submitted, completed, failed, rejected, and
//   time spent waiting in the queue (total and max);
// - close(): new work is refused (SEGLOG_ERR_IO_POOL_CLOSED); queued and
//   running work finishes; the promise resolves when the pool is idle.

import PQueue from 'p-queue';
import { assert } from '@seglog/common';
import { IoError, IoErrorCode } from './io-error.js';

/** Task priorities: rolls and flushes above appends and reads, above checkpoints and evictions. */
export const Priority = {
  flush: 30,
  roll: 30,
  append: 20,
  read: 20,
  checkpoint: 10,
  eviction: 10,
  /** The log cleaner: runs only when nothing else waits. */
  cleaner: 0,
} as const;
export type Priority = (typeof Priority)[keyof typeof Priority];

export interface BlockingPoolOptions {
  readonly concurrency: number;
  /** Tasks that may wait (not counting running ones). */
  readonly maxQueued: number;
  /** Of maxQueued, slots only work at Priority.flush or above may take. Default 0. */
  readonly reservedQueued?: number;
}

export interface BlockingPoolCounters {
  submitted: number;
  completed: number;
  failed: number;
  /** submit calls refused (full or closed). */
  rejected: number;
  /** Sum and maximum of the time tasks waited between submit and start. */
  waitMsTotal: number;
  waitMsMax: number;
}

export class BlockingPool {
  readonly concurrency: number;
  readonly maxQueued: number;
  readonly reservedQueued: number;
  readonly counters: BlockingPoolCounters;
  private readonly queue: PQueue;
  private waiting: number;
  private active: number;
  private closing: boolean;

  constructor(options: BlockingPoolOptions) {
    const reserved = options.reservedQueued ?? 0;
    assert(Number.isSafeInteger(options.concurrency) && options.concurrency > 0, 'BlockingPool: concurrency must be positive');
    assert(Number.isSafeInteger(options.maxQueued) && options.maxQueued >= 0, 'BlockingPool: maxQueued must be >= 0');
    assert(Number.isSafeInteger(reserved) && reserved >= 0 && reserved <= options.maxQueued, 'BlockingPool: reservedQueued must be within maxQueued');
    this.concurrency = options.concurrency;
    this.maxQueued = options.maxQueued;
    this.reservedQueued = reserved;
    this.counters = { submitted: 0, completed: 0, failed: 0, rejected: 0, waitMsTotal: 0, waitMsMax: 0 };
    this.queue = new PQueue({ concurrency: options.concurrency });
    this.waiting = 0;
    this.active = 0;
    this.closing = false;
  }

  /** Tasks waiting to start. */
  get queued(): number {
    return this.waiting;
  }

  /** Tasks running now. */
  get running(): number {
    return this.active;
  }

  get closed(): boolean {
    return this.closing;
  }

  /** Whether submit(…, priority) would accept a task now. */
  hasRoom(priority: number): boolean {
    if (this.closing) return false;
    // Admitted tasks start at once while a slot is free, so they never wait.
    if (this.active + this.waiting < this.concurrency) return true;
    const limit = priority >= Priority.flush ? this.maxQueued : this.maxQueued - this.reservedQueued;
    return this.waiting < limit;
  }

  /**
   * Queues `task` at `priority` and returns its result. Throws synchronously
   * SEGLOG_ERR_IO_POOL_FULL or SEGLOG_ERR_IO_POOL_CLOSED instead of queueing.
   */
  submit<T>(task: () => Promise<T>, priority: number): Promise<T> {
    if (!this.hasRoom(priority)) {
      this.counters.rejected++;
      const code = this.closing ? IoErrorCode.poolClosed : IoErrorCode.poolFull;
      throw new IoError(code, this.closing ? 'blocking pool is closed' : 'blocking pool queue is full', {
        errno: null, syscall: 'submit', path: null,
        context: { priority, queued: this.waiting, running: this.active, maxQueued: this.maxQueued },
      });
    }
    this.counters.submitted++;
    this.waiting++;
    const submittedAt = performance.now();
    return this.queue.add(() => this.run(task, submittedAt), { priority });
  }

  private async run<T>(task: () => Promise<T>, submittedAt: number): Promise<T> {
    this.waiting--;
    this.active++;
    const waitMs = performance.now() - submittedAt;
    this.counters.waitMsTotal += waitMs;
    if (waitMs > this.counters.waitMsMax) this.counters.waitMsMax = waitMs;
    try {
      const result = await task();
      this.counters.completed++;
      return result;
    } catch (error) {
      this.counters.failed++;
      throw error;
    } finally {
      this.active--;
    }
  }

  /** Resolves when nothing is queued or running. */
  onIdle(): Promise<void> {
    return this.queue.onIdle();
  }

  /** Refuses new work and resolves once queued and running work has finished. */
  close(): Promise<void> {
    this.closing = true;
    return this.queue.onIdle();
  }
}
