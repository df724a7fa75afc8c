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

import type { Socket } from 'node:net';
import { writeFetch } from '@seglog/fetch';
import { FrameReader, decodeRequest } from '../protocol/index.js';
import type { DecodedRequest, FinishedMessage } from '../protocol/index.js';
import { CompositeFetchPlan, releaseFrameParts } from './composite-fetch-plan.js';
import { errorMessageOf } from './errors.js';

export interface ConnectionOptions {
  readonly maxFrameBytes: number;
  readonly maxInFlight: number;
  /** Answers one request; null = no response (Produce with acks=0). */
  readonly dispatch: (request: DecodedRequest) => Promise<FinishedMessage | null>;
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

  constructor(socket: Socket, options: ConnectionOptions) {
    this.socket = socket;
    this.reader = new FrameReader({ maxFrameBytes: options.maxFrameBytes });
    this.options = options;
    this.slots = [];
    this.writing = false;
    this.paused = false;
    this.readingStopped = false;
    this.closed = false;
    this.idleWaiters = [];
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
    if (this.readingStopped) return;
    try {
      this.reader.push(chunk);
    } catch (error) {
      this.failFrame(error);
      return;
    }
    this.pump();
  }

  /** Dispatches buffered frames while under the in-flight bound; pauses or resumes the socket. */
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
      this.dispatch(frame);
    }
    if (this.readingStopped) return;
    const full = this.slots.length >= this.options.maxInFlight;
    if (full && !this.paused) {
      this.paused = true;
      this.socket.pause();
    } else if (!full && this.paused) {
      this.paused = false;
      this.socket.resume();
    }
  }

  private dispatch(frame: Buffer): void {
    let request: DecodedRequest;
    try {
      request = decodeRequest(frame);
    } catch (error) {
      this.failFrame(error);
      return;
    }
    const slot: Slot = { done: false, message: null, closeAfter: false };
    this.slots.push(slot);
    this.options.dispatch(request).then((message) => {
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
    this.options.notice(`connection ${this.describe()}: closing after a bad request: ${errorMessageOf(error)}`);
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

  private describe(): string {
    return `${this.socket.remoteAddress ?? '?'}:${this.socket.remotePort ?? '?'}`;
  }
}
