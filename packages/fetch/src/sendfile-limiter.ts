// SendfileLimiter: bounds native sendfile calls in flight across every
// response in the process. Each one holds a libuv threadpool thread (shared
// with node:fs) for as long as its reader makes it wait, so an unbounded
// number of slow readers could starve every pread and fsync in the process.
//
// Policy: never wait for a slot. A file part that finds no free slot is sent
// by pread + write instead (counted as a sendfile fallback): that path holds
// a pool thread only for the duration of each page-cache read, so it keeps
// making progress while slow readers sit on the sendfile slots. Waiting
// instead would queue a fast reader behind a stalled one for up to the
// sendfile idle timeout.

import { assert } from '@seglog/common';

export class SendfileLimiter {
  readonly max: number;
  private active: number;
  /** File parts that wanted sendfile and found no slot. */
  fallbacks: number;

  constructor(max: number) {
    assert(Number.isInteger(max), 'SendfileLimiter: max must be an integer >= 1');
    assert(max >= 1, 'SendfileLimiter: max must be an integer >= 1');
    this.max = max;
    this.active = 0;
    this.fallbacks = 0;
  }

  get inFlight(): number {
    return this.active;
  }

  /** Takes a slot if one is free; the caller must release() it when its sendfile settles. */
  tryAcquire(): boolean {
    if (this.active >= this.max) {
      this.fallbacks++;
      return false;
    }
    this.active++;
    return true;
  }

  release(): void {
    assert(this.active > 0, 'SendfileLimiter.release: no slot held');
    this.active--;
  }
}

/** Half the libuv threadpool (UV_THREADPOOL_SIZE, default 4), at least 1: the rest stays free for preads and fsyncs. */
export function defaultSendfileConcurrency(env: NodeJS.ProcessEnv = process.env): number {
  const size = Number(env['UV_THREADPOOL_SIZE'] ?? '4');
  return Number.isInteger(size) && size >= 1 ? Math.max(1, Math.floor(size / 2)) : 2;
}

/** The process-wide limiter every writeFetch uses unless given another. */
export const sendfileLimiter: SendfileLimiter = new SendfileLimiter(defaultSendfileConcurrency());
