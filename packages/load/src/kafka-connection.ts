// One TCP connection of the load client to a broker: requests are encoded
// with @seglog/protocol's client-side codecs (`encodeRequest`), written at once
// (pipelined), and their responses matched in order and checked by
// correlation id, as a Kafka client does. Every request has a deadline; a
// timeout, a decode failure or a closed socket fails every pending request
// and closes the connection (responses after a gap cannot be trusted).
// One promise per request, never per record.

import net from 'node:net';
import { assert } from '@seglog/common';
import { FrameReader, ProtocolWriter, decodeResponse, encodeRequest } from '@seglog/protocol';
import type { DecodedResponse, RequestBodies } from '@seglog/protocol';
import type { ApiName as ResponseApi, ResponseBodies } from '@seglog/protocol';
import { LoadErrorCode, loadError } from './load-error.js';

export type ClientApi = keyof RequestBodies & ResponseApi;

interface Pending {
  readonly api: ClientApi;
  readonly version: number;
  readonly correlationId: number;
  readonly deadline: number;
  readonly resolve: (body: ResponseBodies[ClientApi]) => void;
  readonly reject: (error: Error) => void;
}

export interface KafkaConnectionOptions {
  readonly host: string;
  readonly port: number;
  readonly clientId: string;
  readonly requestTimeoutMs: number;
  /** Largest response frame accepted. */
  readonly maxResponseBytes: number;
}

export class KafkaConnection {
  readonly socket: net.Socket;
  private readonly options: KafkaConnectionOptions;
  private readonly reader: FrameReader;
  private readonly writer: ProtocolWriter;
  private readonly pending: Pending[];
  private pendingHead: number;
  private nextCorrelationId: number;
  private failure: Error | null;
  private readonly timer: NodeJS.Timeout;

  private constructor(socket: net.Socket, options: KafkaConnectionOptions) {
    this.socket = socket;
    this.options = options;
    this.reader = new FrameReader({ maxFrameBytes: options.maxResponseBytes });
    this.writer = new ProtocolWriter(64 * 1024);
    this.pending = [];
    this.pendingHead = 0;
    this.nextCorrelationId = 1;
    this.failure = null;
    // One coarse timer per connection checks the deadline of the oldest request.
    this.timer = setInterval(() => this.checkDeadline(), Math.max(10, Math.min(1000, options.requestTimeoutMs / 4)));
    this.timer.unref();
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (error) => this.fail(loadError(LoadErrorCode.CONNECTION, `connection to ${options.host}:${options.port} failed: ${error.message}`, {}, error)));
    socket.on('close', () => this.fail(loadError(LoadErrorCode.CONNECTION, `connection to ${options.host}:${options.port} closed`, { pending: this.inFlight })));
  }

  static connect(options: KafkaConnectionOptions): Promise<KafkaConnection> {
    assert(Number.isInteger(options.port) && options.port > 0 && options.port <= 65535, 'KafkaConnection: port out of range');
    assert(options.requestTimeoutMs > 0, 'KafkaConnection: requestTimeoutMs must be positive');
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: options.host, port: options.port });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(loadError(LoadErrorCode.TIMEOUT, `connect to ${options.host}:${options.port} timed out`, { timeoutMs: options.requestTimeoutMs }));
      }, options.requestTimeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve(new KafkaConnection(socket, options));
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(loadError(LoadErrorCode.CONNECTION, `cannot connect to ${options.host}:${options.port}: ${error.message}`, {}, error));
      });
    });
  }

  /** The largest request frame written, size prefix included (what a broker's socket.request.max.bytes bounds). */
  largestFrameBytes = 0;

  /** Requests written and not yet answered. */
  get inFlight(): number {
    return this.pending.length - this.pendingHead;
  }

  /** Sends one request and resolves with its response body. */
  request<N extends ClientApi>(api: N, version: number, body: RequestBodies[N]): Promise<ResponseBodies[N]> {
    if (this.failure !== null) return Promise.reject(this.failure);
    const correlationId = this.write(api, version, body, undefined);
    return new Promise<ResponseBodies[N]>((resolve, reject) => {
      this.pending.push({
        api, version, correlationId, deadline: Date.now() + this.options.requestTimeoutMs,
        resolve: resolve as (b: ResponseBodies[ClientApi]) => void, reject,
      });
    });
  }

  /** Sends a request that gets no response (Produce acks=0); resolves once the socket has taken the bytes. */
  send<N extends ClientApi>(api: N, version: number, body: RequestBodies[N]): Promise<void> {
    if (this.failure !== null) return Promise.reject(this.failure);
    return new Promise<void>((resolve, reject) => {
      this.write(api, version, body, (error) => (error === undefined || error === null ? resolve() : reject(error)));
    });
  }

  close(): void {
    clearInterval(this.timer);
    this.fail(loadError(LoadErrorCode.CONNECTION, 'connection closed by the load client'));
    this.socket.destroy();
  }

  private write<N extends ClientApi>(api: N, version: number, body: RequestBodies[N], done: ((error?: Error | null) => void) | undefined): number {
    const correlationId = this.nextCorrelationId;
    this.nextCorrelationId = correlationId === 0x7fffffff ? 1 : correlationId + 1;
    const message = encodeRequest(this.writer, { api, apiVersion: version, correlationId, clientId: this.options.clientId }, body);
    const parts = message.parts as readonly Buffer[];
    const last = parts.length - 1;
    let frameBytes = 0;
    for (const part of parts) frameBytes += part.length;
    if (frameBytes > this.largestFrameBytes) this.largestFrameBytes = frameBytes;
    this.socket.cork();
    for (let i = 0; i < last; i++) this.socket.write(parts[i] as Buffer);
    this.socket.write(parts[last] as Buffer, done);
    this.socket.uncork();
    return correlationId;
  }

  private onData(chunk: Buffer): void {
    try {
      this.reader.push(chunk);
      for (let frame = this.reader.next(); frame !== null; frame = this.reader.next()) this.onFrame(frame);
    } catch (error) {
      this.fail(loadError(LoadErrorCode.CONNECTION, `bad response frame: ${(error as Error).message}`, {}, error));
      this.socket.destroy();
    }
  }

  private onFrame(frame: Buffer): void {
    const head = this.pending[this.pendingHead];
    if (head === undefined) throw new Error('a response arrived with no request pending');
    this.pending[this.pendingHead] = undefined as unknown as Pending;
    this.pendingHead++;
    if (this.pendingHead >= 1024 && this.pendingHead * 2 >= this.pending.length) {
      this.pending.splice(0, this.pendingHead);
      this.pendingHead = 0;
    }
    const decoded: DecodedResponse<ClientApi> = decodeResponse(frame, head.api, head.version);
    if (decoded.correlationId !== head.correlationId) {
      throw new Error(`correlation id ${decoded.correlationId}, expected ${head.correlationId}`);
    }
    head.resolve(decoded.body);
  }

  private checkDeadline(): void {
    const head = this.pending[this.pendingHead];
    if (head === undefined || Date.now() < head.deadline) return;
    this.fail(loadError(LoadErrorCode.TIMEOUT, `${head.api} request timed out after ${this.options.requestTimeoutMs} ms`, {
      correlationId: head.correlationId, pending: this.inFlight,
    }));
    this.socket.destroy();
  }

  private fail(error: Error): void {
    clearInterval(this.timer);
    if (this.failure === null) this.failure = error;
    const failed = this.pending.slice(this.pendingHead);
    this.pending.length = 0;
    this.pendingHead = 0;
    for (const p of failed) p.reject(this.failure);
  }
}
