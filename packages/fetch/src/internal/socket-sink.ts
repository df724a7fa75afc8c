// SocketSink: a FetchSink over a net.Socket. Slices are written while the
// socket is corked; uncork() hands the batch to libuv as one writev
// (node-platform.md §1.5). Every write carries the same bound callback, so
// completions are counted without a closure per slice; Node completes writes
// in order, so "completed >= n" means slices 1..n reached the kernel.
//
// A dead peer is seen three ways, all ending in one FetchError
// (SEGLOG_ERR_FETCH_PEER_CLOSED): an 'error' event (EPIPE, ECONNRESET), a
// 'close' event, or a write callback with an error; and check() refuses a
// destroyed or ended socket before every push. Any wait settles on the first
// of them, so a dead peer never hangs a response.

import type { Socket } from 'node:net';
import { assert } from '@seglog/common';
import { socketFd } from '@seglog/native';
import { FetchError, FetchErrorCode } from '../fetch-error.js';
import type { FetchSink } from './fetch-sink.js';

const WAIT_NONE = 0;
const WAIT_COMPLETED = 1;
const WAIT_DRAIN = 2;

const EMPTY = Buffer.alloc(0);

export function peerClosedError(what: string, cause: unknown, bytesWritten: number): FetchError {
  const errno = (cause as { code?: unknown } | null)?.code;
  return new FetchError(FetchErrorCode.peerClosed, `fetch: peer closed the connection (${what})`, {
    errno: typeof errno === 'string' ? errno : null,
    bytesWritten,
  }, cause);
}

export class SocketSink implements FetchSink {
  readonly socket: Socket;
  readonly sendfileFd: number | null;
  pushed: number;
  completed: number;
  writes: number;
  bytesPushed: number;
  failure: FetchError | null;
  private readonly maxIovecs: number;
  private corked: boolean;
  private batch: number;
  private waitKind: number;
  private waitSequence: number;
  private resolveWait: (() => void) | null;
  private rejectWait: ((error: FetchError) => void) | null;
  private readonly onWritten: (error?: Error | null) => void;
  private readonly onDrain: () => void;
  private readonly onClose: () => void;
  private readonly onError: (error: Error) => void;

  constructor(socket: Socket, maxIovecs: number) {
    this.socket = socket;
    this.sendfileFd = socketFd(socket);
    this.pushed = 0;
    this.completed = 0;
    this.writes = 0;
    this.bytesPushed = 0;
    this.failure = null;
    this.maxIovecs = maxIovecs;
    this.corked = false;
    this.batch = 0;
    this.waitKind = WAIT_NONE;
    this.waitSequence = 0;
    this.resolveWait = null;
    this.rejectWait = null;
    this.onWritten = (error) => {
      this.completed++;
      if (error !== null && error !== undefined) this.fail(peerClosedError('write failed', error, this.bytesPushed));
      else this.wake();
    };
    this.onDrain = () => this.wake();
    this.onClose = () => this.fail(peerClosedError('socket closed', null, this.bytesPushed));
    this.onError = (error) => this.fail(peerClosedError('socket error', error, this.bytesPushed));
    socket.on('drain', this.onDrain);
    socket.on('close', this.onClose);
    socket.on('error', this.onError);
  }

  /** Removes the listeners; the sink is unusable afterwards. */
  detach(): void {
    if (this.corked) this.uncork();
    this.socket.off('drain', this.onDrain);
    this.socket.off('close', this.onClose);
    this.socket.off('error', this.onError);
  }

  check(): void {
    if (this.failure !== null) throw this.failure;
    const s = this.socket;
    if (s.destroyed || s.writableEnded || !s.writable) {
      this.failure = peerClosedError(s.destroyed ? 'socket destroyed' : 'socket ended', null, this.bytesPushed);
      throw this.failure;
    }
  }

  push(buffer: Buffer): boolean {
    assert(buffer.length > 0, 'SocketSink.push: empty slice');
    this.check();
    if (!this.corked) {
      this.socket.cork();
      this.corked = true;
    }
    this.socket.write(buffer, this.onWritten);
    this.pushed++;
    this.batch++;
    this.bytesPushed += buffer.length;
    return this.batch >= this.maxIovecs;
  }

  flush(): Promise<void> {
    this.uncork();
    if (this.failure !== null) return Promise.reject(this.failure);
    // Backpressure: write() returned false at some point → wait for 'drain'.
    if (!this.socket.writableNeedDrain) return Promise.resolve();
    return this.wait(WAIT_DRAIN, 0);
  }

  waitCompleted(sequence: number): Promise<void> {
    assert(sequence <= this.pushed, 'SocketSink.waitCompleted: sequence not pushed yet');
    this.uncork();
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.completed >= sequence) return Promise.resolve();
    return this.wait(WAIT_COMPLETED, sequence);
  }

  async waitEmpty(): Promise<void> {
    await this.waitCompleted(this.pushed);
    if (this.socket.writableLength === 0) return;
    // Bytes someone wrote before this response: a zero-length write is a
    // barrier whose callback runs after theirs.
    this.check();
    this.socket.write(EMPTY, this.onWritten);
    this.pushed++;
    await this.waitCompleted(this.pushed);
    assert(this.socket.writableLength === 0, 'SocketSink.waitEmpty: socket queue not empty after barrier');
  }

  private uncork(): void {
    if (!this.corked) return;
    this.corked = false;
    this.batch = 0;
    this.writes++;
    this.socket.uncork();
  }

  private wait(kind: number, sequence: number): Promise<void> {
    assert(this.waitKind === WAIT_NONE, 'SocketSink: one wait at a time');
    return new Promise<void>((resolve, reject) => {
      this.waitKind = kind;
      this.waitSequence = sequence;
      this.resolveWait = resolve;
      this.rejectWait = reject;
      this.wake();
    });
  }

  private fail(error: FetchError): void {
    if (this.failure === null) this.failure = error;
    this.wake();
  }

  private wake(): void {
    if (this.waitKind === WAIT_NONE) return;
    const done = this.failure !== null ||
      (this.waitKind === WAIT_COMPLETED ? this.completed >= this.waitSequence : !this.socket.writableNeedDrain);
    if (!done) return;
    const resolve = this.resolveWait!;
    const reject = this.rejectWait!;
    this.waitKind = WAIT_NONE;
    this.resolveWait = null;
    this.rejectWait = null;
    if (this.failure !== null) reject(this.failure);
    else resolve();
  }
}
