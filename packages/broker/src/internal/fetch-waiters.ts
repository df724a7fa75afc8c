// FetchWaiters: fetch requests parked in long-poll (maxWaitMs, minBytes),
// woken when a partition they read advances its high watermark, or when
// their deadline passes, or when the broker stops.
//
// Invariants: a waiter is registered under every partition it reads and
// removed from all of them when it resolves (exactly once); the number of
// parked waiters never exceeds `max` (a fetch that finds the table full is
// answered at once, which is always correct, only less efficient); a wait
// whose partitions moved since the caller's snapshot returns at once, so an
// append racing the registration is never missed.

import { assert } from '@seglog/common';

interface Waiter {
  readonly keys: readonly object[];
  readonly resolve: () => void;
  timer: NodeJS.Timeout | null;
  done: boolean;
}

export class FetchWaiters {
  readonly max: number;
  private readonly byKey: Map<object, Set<Waiter>>;
  private parked: number;
  private stopped: boolean;

  constructor(max: number) {
    assert(Number.isInteger(max) && max >= 0, 'FetchWaiters: max must be a non-negative integer');
    this.max = max;
    this.byKey = new Map();
    this.parked = 0;
    this.stopped = false;
  }

  get size(): number {
    return this.parked;
  }

  /**
   * Waits until one of `keys` is notified or `timeoutMs` passes. `moved()`
   * is checked after registration: true means the state changed since the
   * caller last looked, and the wait ends at once.
   */
  wait(keys: readonly object[], timeoutMs: number, moved: () => boolean): Promise<void> {
    if (this.stopped || timeoutMs <= 0 || keys.length === 0 || this.parked >= this.max || moved()) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const waiter: Waiter = { keys, resolve, timer: null, done: false };
      for (const key of keys) {
        let set = this.byKey.get(key);
        if (set === undefined) {
          set = new Set();
          this.byKey.set(key, set);
        }
        set.add(waiter);
      }
      this.parked++;
      waiter.timer = setTimeout(() => this.finish(waiter), timeoutMs);
    });
  }

  /** Wakes every waiter reading `key`. */
  notify(key: object): void {
    const set = this.byKey.get(key);
    if (set === undefined || set.size === 0) return;
    for (const waiter of [...set]) this.finish(waiter);
  }

  /** Wakes everyone and refuses new waits (shutdown). */
  stop(): void {
    this.stopped = true;
    for (const set of [...this.byKey.values()]) for (const waiter of [...set]) this.finish(waiter);
  }

  private finish(waiter: Waiter): void {
    if (waiter.done) return;
    waiter.done = true;
    if (waiter.timer !== null) clearTimeout(waiter.timer);
    for (const key of waiter.keys) {
      const set = this.byKey.get(key);
      if (set === undefined) continue;
      set.delete(waiter);
      if (set.size === 0) this.byKey.delete(key);
    }
    this.parked--;
    assert(this.parked >= 0, 'FetchWaiters: parked count went negative');
    waiter.resolve();
  }
}
