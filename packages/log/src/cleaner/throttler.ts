// Throttler: the cleaner's bytes-per-second limit (Kafka's
// log.cleaner.io.max.bytes.per.second). The cleaner charges every byte it
// reads and writes; once it is ahead of the rate, it sleeps until it is not.
// The clock and the sleep are injected, so tests need no real time.

import { assert } from '@seglog/common';

export interface ThrottlerOptions {
  /** Infinity: no limit. */
  readonly bytesPerSecond: number;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Checking the clock for every small charge costs more than it saves: sleep decisions are made per CHECK_BYTES. */
const CHECK_BYTES = 64 * 1024;

/**
 * A sleep inside a pass (the throttle, a wait for pool room): the timer holds
 * the event loop, so a pass someone awaits finishes even when nothing else
 * keeps the process alive (an unref'd one let Node exit mid-pass).
 */
export function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The idle cleaner's backoff: unref'd, so an idle cleaner never keeps a process alive. */
export function idleSleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
  });
}

export class Throttler {
  readonly bytesPerSecond: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private periodStartMs: number;
  private periodBytes: number;
  private unchecked: number;
  /** Total time slept (metrics). */
  sleptMs: number;

  constructor(options: ThrottlerOptions) {
    assert(options.bytesPerSecond > 0, 'Throttler: bytesPerSecond must be positive');
    this.bytesPerSecond = options.bytesPerSecond;
    this.now = options.now ?? (() => performance.now());
    this.sleep = options.sleep ?? sleepMs;
    this.periodStartMs = this.now();
    this.periodBytes = 0;
    this.unchecked = 0;
    this.sleptMs = 0;
  }

  async charge(bytes: number): Promise<void> {
    if (this.bytesPerSecond === Number.POSITIVE_INFINITY) return;
    this.periodBytes += bytes;
    this.unchecked += bytes;
    if (this.unchecked < CHECK_BYTES) return;
    this.unchecked = 0;
    const elapsedMs = this.now() - this.periodStartMs;
    const dueMs = (this.periodBytes / this.bytesPerSecond) * 1000;
    if (dueMs > elapsedMs) {
      const waitMs = Math.ceil(dueMs - elapsedMs);
      this.sleptMs += waitMs;
      await this.sleep(waitMs);
    }
    // A new period every second keeps an idle spell from licensing a burst.
    if (elapsedMs > 1000) {
      this.periodStartMs = this.now();
      this.periodBytes = 0;
    }
  }
}
