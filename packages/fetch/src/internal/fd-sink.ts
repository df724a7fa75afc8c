// FdSink: a FetchSink over any writable fd (a pipe, a file, a socket fd not
// owned by a net.Socket), for benchmarks and tools. Slices are batched and
// written with fs.writev (libuv threadpool). The kernel may take fewer bytes
// than offered: the loop then drops the fully written slices and trims the
// first remaining one, and writes again. EAGAIN (a non-blocking fd that is
// full) and EINTR are retried after a short wait; a write that makes no
// progress MAX_ZERO_PROGRESS times in a row fails with
// SEGLOG_ERR_FETCH_NO_PROGRESS; EPIPE and ECONNRESET fail with
// SEGLOG_ERR_FETCH_PEER_CLOSED.

import fs from 'node:fs';
import { assert } from '@seglog/common';
import { FetchError, FetchErrorCode } from '../fetch-error.js';
import type { FetchSink } from './fetch-sink.js';
import { peerClosedError } from './socket-sink.js';

const MAX_ZERO_PROGRESS = 8;
const RETRY_DELAY_MS = 1;
const RETRIED: ReadonlySet<string> = new Set(['EAGAIN', 'EWOULDBLOCK', 'EINTR']);
const PEER_GONE: ReadonlySet<string> = new Set(['EPIPE', 'ECONNRESET', 'ENOTCONN']);

/**
 * Drops the first `written` bytes from `slices` in place: whole slices that
 * were written are removed; a partly written first slice is replaced by its
 * unwritten tail. Returns the slices left.
 */
export function advanceSlices(slices: Buffer[], written: number): number {
  assert(Number.isSafeInteger(written) && written >= 0, 'advanceSlices: written must be an integer >= 0');
  let drop = 0;
  let left = written;
  while (drop < slices.length && left >= slices[drop]!.length) {
    left -= slices[drop]!.length;
    drop++;
  }
  assert(drop < slices.length || left === 0, 'advanceSlices: written exceeds the slices');
  if (drop > 0) slices.splice(0, drop);
  if (left > 0) slices[0] = slices[0]!.subarray(left);
  return slices.length;
}

function writevOnce(fd: number, slices: readonly Buffer[]): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    fs.writev(fd, slices, null, (error, written) => (error === null ? resolve(written) : reject(error)));
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export class FdSink implements FetchSink {
  readonly fd: number;
  readonly sendfileFd: number | null;
  pushed: number;
  completed: number;
  writes: number;
  bytesWritten: number;
  bytesPushed: number;
  private readonly maxIovecs: number;
  private readonly pending: Buffer[];
  private failure: FetchError | null;
  private readonly writevFn: (fd: number, slices: readonly Buffer[]) => Promise<number>;

  /** `writev` replaces fs.writev in tests (short writes, EAGAIN, zero progress). */
  constructor(fd: number, maxIovecs: number, writev?: (fd: number, slices: readonly Buffer[]) => Promise<number>) {
    assert(Number.isInteger(fd) && fd >= 0, 'FdSink: fd must be an integer >= 0');
    this.fd = fd;
    this.sendfileFd = fd;
    this.pushed = 0;
    this.completed = 0;
    this.writes = 0;
    this.bytesWritten = 0;
    this.bytesPushed = 0;
    this.maxIovecs = maxIovecs;
    this.pending = [];
    this.failure = null;
    this.writevFn = writev ?? writevOnce;
  }

  check(): void {
    if (this.failure !== null) throw this.failure;
  }

  push(buffer: Buffer): boolean {
    assert(buffer.length > 0, 'FdSink.push: empty slice');
    this.check();
    this.pending.push(buffer);
    this.pushed++;
    this.bytesPushed += buffer.length;
    return this.pending.length >= this.maxIovecs;
  }

  async flush(): Promise<void> {
    this.check();
    let zeroProgress = 0;
    while (this.pending.length > 0) {
      let written: number;
      try {
        this.writes++;
        written = await this.writevFn(this.fd, this.pending);
      } catch (error) {
        const errno = (error as { code?: unknown }).code;
        if (typeof errno === 'string' && RETRIED.has(errno)) {
          await delay(RETRY_DELAY_MS);
          continue;
        }
        this.failure = typeof errno === 'string' && PEER_GONE.has(errno)
          ? peerClosedError('write failed', error, this.bytesWritten)
          : new FetchError(FetchErrorCode.writeFailed, `fetch: writev to fd ${this.fd} failed`, { errno: errno ?? null, bytesWritten: this.bytesWritten }, error);
        throw this.failure;
      }
      if (written === 0) {
        if (++zeroProgress >= MAX_ZERO_PROGRESS) {
          this.failure = new FetchError(FetchErrorCode.noProgress, `fetch: writev to fd ${this.fd} made no progress ${zeroProgress} times`, { bytesWritten: this.bytesWritten });
          throw this.failure;
        }
        await delay(RETRY_DELAY_MS);
        continue;
      }
      zeroProgress = 0;
      this.bytesWritten += written;
      advanceSlices(this.pending, written);
    }
    this.completed = this.pushed;
  }

  waitCompleted(sequence: number): Promise<void> {
    assert(sequence <= this.pushed, 'FdSink.waitCompleted: sequence not pushed yet');
    return this.completed >= sequence ? Promise.resolve() : this.flush();
  }

  waitEmpty(): Promise<void> {
    return this.flush();
  }
}
