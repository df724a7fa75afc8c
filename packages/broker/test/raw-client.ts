// A minimal Kafka client for the server tests: our own request encoder and
// response decoder over one socket, responses matched to requests in order
// (and checked by correlation id). Several requests may be written at once
// (pipelining) with `send`.

import net from 'node:net';
import { FrameReader, ProtocolWriter, decodeResponse, encodeRequest } from '@seglog/protocol';
import type { ApiName as ResponseApi, DecodedResponse, RequestBodies, ResponseBodies } from '@seglog/protocol';

type Api = keyof RequestBodies & ResponseApi;

interface Pending {
  readonly api: Api;
  readonly version: number;
  readonly correlationId: number;
  readonly resolve: (response: DecodedResponse<Api>) => void;
  readonly reject: (error: Error) => void;
}

export class RawClient {
  readonly socket: net.Socket;
  readonly closed: Promise<void>;
  private readonly reader: FrameReader;
  private readonly pending: Pending[];
  private nextCorrelationId: number;
  /** Frames that arrived with no pending request (must stay empty). */
  readonly unexpected: Buffer[];

  private constructor(socket: net.Socket) {
    this.socket = socket;
    this.reader = new FrameReader({ maxFrameBytes: 256 * 1024 * 1024 });
    this.pending = [];
    this.nextCorrelationId = 1;
    this.unexpected = [];
    this.closed = new Promise((resolve) => socket.on('close', () => {
      for (const p of this.pending.splice(0)) p.reject(new Error('connection closed'));
      resolve();
    }));
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      this.reader.push(chunk);
      for (let frame = this.reader.next(); frame !== null; frame = this.reader.next()) this.onFrame(frame);
    });
  }

  static connect(port: number): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  private onFrame(frame: Buffer): void {
    const head = this.pending.shift();
    if (head === undefined) {
      this.unexpected.push(frame);
      return;
    }
    try {
      const decoded = decodeResponse(frame, head.api, head.version);
      if (decoded.correlationId !== head.correlationId) throw new Error(`correlation id ${decoded.correlationId}, expected ${head.correlationId}`);
      head.resolve(decoded);
    } catch (error) {
      head.reject(error as Error);
    }
  }

  /** Encodes one request; `expectResponse: false` for Produce acks=0. Returns the frame and the response promise. */
  encode<N extends Api>(api: N, version: number, body: RequestBodies[N], expectResponse = true): { frame: Buffer; response: Promise<DecodedResponse<N>> } {
    const correlationId = this.nextCorrelationId++;
    const message = encodeRequest(new ProtocolWriter(), { api, apiVersion: version, correlationId, clientId: 'raw-client' }, body);
    const frame = Buffer.concat(message.parts as Buffer[]);
    if (!expectResponse) return { frame, response: Promise.resolve({ correlationId, body: null as unknown as ResponseBodies[N] }) };
    const response = new Promise<DecodedResponse<N>>((resolve, reject) => {
      this.pending.push({ api, version, correlationId, resolve: resolve as (r: DecodedResponse<Api>) => void, reject });
    });
    return { frame, response };
  }

  request<N extends Api>(api: N, version: number, body: RequestBodies[N]): Promise<DecodedResponse<N>> {
    const { frame, response } = this.encode(api, version, body);
    this.socket.write(frame);
    return response;
  }

  /** Writes several encoded frames with one write (pipelined). */
  send(frames: readonly Buffer[]): void {
    this.socket.write(Buffer.concat(frames));
  }

  close(): void {
    this.socket.destroy();
  }
}
