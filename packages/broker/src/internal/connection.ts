// Connection: one client socket. Frames are cut by a FrameReader (size
// checked before buffering), decoded and handed to the broker's dispatch at
// once, so several requests of one connection are in flight together
// (pipelining); their responses are written strictly in request order (the
// Kafka protocol matches them by order as well as correlation id).
//
// Bounds: at most `maxInFlight` requests read and not yet answered; at the
// bound the socket is paused (TCP backpressure reaches the client) and
// resumed as responses leave. A frame that cannot be framed or decoded
// (oversized, malformed, unknown API, unsupported version) stops reading: the
// responses before it are still written, then the connection is closed (as
// Kafka does). A response that is never written (the peer left) has its fetch
// plans released.
//
// Memory: every frame is reserved from the broker's MemoryPool
// (queued.max.request.bytes) as soon as its size prefix is read, and released
// when its request has been answered (or dropped). While the pool has no
// budget the socket is paused, as Kafka mutes a channel, and resumed when a
// release wakes it.
//
// Idle close (connections.max.idle.ms): the connection is closed after
// `connectionsMaxIdleMs` without progress. Progress is a complete request
// read or a response (or acks=0 slot) finished writing; the timer does not
// run out while a request is being handled (long polls are bounded by
// maxFetchWaitMs) or while the connection waits for request memory (it holds
// no reservation then, only the last chunk read). Bytes of an incomplete request are not progress: Kafka has
// no separate request-arrival timeout, and counting each byte would let a
// client trickle one byte a minute and hold its frame buffer forever, so here
// the same limit bounds how long a request may take to arrive. A slow reader
// whose responses stop draining is closed the same way.

import type { Socket } from 'node:net';
import { writeFetch } from '@seglog/fetch';
import { FrameReader, decodeRequest } from '@seglog/protocol';
import type { DecodedRequest, FinishedMessage, MemoryPool } from '@seglog/protocol';
import { CompositeFetchPlan, releaseFrameParts } from './composite-fetch-plan.js';
import { errorMessageOf } from './errors.js';
import { isSeglogError } from '@seglog/common';
import { kafkaApiName } from '../protocol/index.js';

export interface ConnectionOptions {
  readonly maxFrameBytes: number;
  readonly maxInFlight: number;
  /** Shared budget of request frames (queued.max.request.bytes). */
  readonly pool: MemoryPool;
  /** connections.max.idle.ms; 0 = never closed for idleness. */
  readonly connectionsMaxIdleMs: number;
  /** Answers one request; null = no response (Produce with acks=0). */
  readonly dispatch: (request: DecodedRequest, client: { readonly host: string }) => Promise<FinishedMessage | null>;
  /** Notices (protocol errors, handler failures). */
  readonly notice: (line: string) => void;
  readonly onClose: (connection: Connection) => void;
}

interface Slot {
  done: boolean;
  message: FinishedMessage | null;
  /** A frame that failed: close once every earlier response is out. */
  readonly closeAfter: boolean;
}

export class Connection {
  readonly socket: Socket;
  private readonly reader: FrameReader;
  private readonly options: ConnectionOptions;
  private readonly slots: Slot[];
  private writing: boolean;
  private paused: boolean;
  /** No more requests are read (a failed frame, or the broker is stopping). */
  private readingStopped: boolean;
  private closed: boolean;
  private idleWaiters: (() => void)[];
  /** Registered with the pool, waiting for budget for the next frame. */
  private memoryWaiting: boolean;
  private readonly onMemory: () => void;
  /** connections.max.idle.ms timer, refreshed on progress; null when disabled. */
  private readonly idleTimer: NodeJS.Timeout | null;
  /** The peer, as the group coordinator records it (Kafka's clientHost). */
  private readonly client: { readonly host: string };

  constructor(socket: Socket, options: ConnectionOptions) {
    this.socket = socket;
    this.reader = new FrameReader({ maxFrameBytes: options.maxFrameBytes, pool: options.pool });
    this.options = options;
    this.slots = [];
    this.writing = false;
    this.paused = false;
    this.readingStopped = false;
    this.closed = false;
    this.idleWaiters = [];
    this.memoryWaiting = false;
    this.onMemory = () => {
      this.memoryWaiting = false;
      // The wait was the broker's, not the client's: the idle timer starts over.
      this.progress();
      if (!this.closed) this.pump();
    };
    this.client = { host: socket.remoteAddress ?? 'unknown' };
    this.idleTimer = options.connectionsMaxIdleMs > 0 ? setTimeout(() => this.onIdle(), options.connectionsMaxIdleMs).unref() : null;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => this.onSocketClose());
  }

  get inFlight(): number {
    return this.slots.length;
  }

  /** Stops reading; resolves when every request read so far is answered (or the socket closed), then ends the socket. */
  drain(): Promise<void> {
    this.readingStopped = true;
    this.socket.pause();
    return new Promise<void>((resolve) => {
      this.idleWaiters.push(resolve);
      this.maybeIdle();
    }).then(() => {
      if (!this.closed) this.socket.end();
    });
  }

  destroy(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    if (this.readingStopped || this.closed) return;
    try {
      this.reader.push(chunk);
    } catch (error) {
      this.failFrame(error);
      return;
    }
    this.pump();
  }

  /**
   * Dispatches buffered frames while under the in-flight bound; pauses the
   * socket at the bound or while the pool has no budget, resumes it otherwise.
   */
  private pump(): void {
    while (!this.readingStopped && this.slots.length < this.options.maxInFlight) {
      let frame: Buffer | null;
      try {
        frame = this.reader.next();
      } catch (error) {
        this.failFrame(error);
        return;
      }
      if (frame === null) break;
      this.progress();
      this.dispatch(frame);
    }
    if (this.readingStopped) return;
    const starved = this.reader.waitingForMemory;
    if (starved && !this.memoryWaiting) {
      this.memoryWaiting = true;
      this.options.pool.waitForMemory(this.onMemory);
    }
    const stop = starved || this.slots.length >= this.options.maxInFlight;
    if (stop && !this.paused) {
      this.paused = true;
      this.socket.pause();
    } else if (!stop && this.paused) {
      this.paused = false;
      this.socket.resume();
    }
  }

  /** A request read or a response written: the idle timer starts over. */
  private progress(): void {
    this.idleTimer?.refresh();
  }

  private onIdle(): void {
    if (this.closed) return;
    if (this.memoryWaiting || this.slots.some((slot) => !slot.done)) {
      // The broker is the one waiting (a handler, or request memory): not the client's idleness.
      this.idleTimer?.refresh();
      return;
    }
    this.destroy();
  }

  private dispatch(frame: Buffer): void {
    const bytes = frame.length;
    let request: DecodedRequest;
    try {
      request = decodeRequest(frame);
    } catch (error) {
      this.options.pool.release(bytes);
      this.failFrame(error);
      return;
    }
    const slot: Slot = { done: false, message: null, closeAfter: false };
    this.slots.push(slot);
    const handled = this.options.dispatch(request, this.client);
    // The frame's budget returns once its request is handled (produce batches are the log's by then).
    handled.then(() => this.options.pool.release(bytes), () => this.options.pool.release(bytes));
    handled.then((message) => {
      if (this.closed) {
        if (message !== null) void releaseFrameParts(message.parts);
        return;
      }
      slot.message = message;
      slot.done = true;
      void this.flush();
    }, (error: unknown) => {
      this.options.notice(`connection ${this.describe()}: ${request.api} v${request.header.apiVersion} failed, closing: ${errorMessageOf(error)}`);
      this.destroy();
    });
  }

  private failFrame(error: unknown): void {
    this.options.notice(`connection ${this.describe()}: closing after a bad request: ${this.explain(error)}`);
    this.readingStopped = true;
    this.socket.pause();
    this.slots.push({ done: true, message: null, closeAfter: true });
    void this.flush();
  }

  private async flush(): Promise<void> {
    if (this.writing) return;
    this.writing = true;
    try {
      for (;;) {
        const head = this.slots[0];
        if (head === undefined || !head.done || this.closed) break;
        this.slots.shift();
        if (head.closeAfter) {
          this.destroy();
          break;
        }
        if (head.message !== null) await this.write(head.message);
        this.progress();
      }
    } catch {
      this.destroy();
    } finally {
      this.writing = false;
    }
    if (!this.closed) this.pump();
    this.maybeIdle();
  }

  private async write(message: FinishedMessage): Promise<void> {
    if (message.parts.every((part) => Buffer.isBuffer(part))) {
      this.socket.cork();
      for (const part of message.parts) this.socket.write(part as Buffer);
      this.socket.uncork();
      if (this.socket.writableNeedDrain) await this.waitDrain();
      return;
    }
    const plan = new CompositeFetchPlan(message.parts);
    await writeFetch(this.socket, plan.header, plan);
  }

  private waitDrain(): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
  }

  private onSocketClose(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    if (this.memoryWaiting) this.options.pool.cancelWait(this.onMemory);
    this.memoryWaiting = false;
    this.reader.dispose();
    for (const slot of this.slots) if (slot.message !== null) void releaseFrameParts(slot.message.parts);
    this.slots.length = 0;
    this.maybeIdle();
    this.options.onClose(this);
  }

  private maybeIdle(): void {
    if (!this.closed && (this.slots.length > 0 || this.writing)) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /**
   * A request for an API we do not implement (or at a version we do not) is
   * named: key, Kafka's name and version, so the notice says what a client
   * wanted. Said once per connection and API: the connection closes after
   * it, and the same client's retries arrive on new connections.
   */
  private explain(error: unknown): string {
    if (!isSeglogError(error) || (error.code !== 'SEGLOG_ERR_PROTOCOL_UNKNOWN_API' && error.code !== 'SEGLOG_ERR_PROTOCOL_UNSUPPORTED_VERSION')) {
      return errorMessageOf(error);
    }
    const apiKey = Number(error.context['apiKey']);
    const version = Number(error.context['apiVersion']);
    const what = error.code === 'SEGLOG_ERR_PROTOCOL_UNKNOWN_API' ? 'not implemented' : 'not supported at this version';
    return `${errorMessageOf(error)} (API key ${apiKey} ${kafkaApiName(apiKey)} v${version}: ${what} by this broker)`;
  }

  private describe(): string {
    return `${this.socket.remoteAddress ?? '?'}:${this.socket.remotePort ?? '?'}`;
  }
}
