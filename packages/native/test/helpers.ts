// Test helpers: temporary files, loopback TCP pairs, a byte sink and hand-made record batches.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32c } from '../src/index.js';

export function tempDir(prefix: string): { readonly path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `seglog-native-${prefix}-`));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Collects everything a socket receives; waitFor(n) resolves once n bytes arrived. */
export class Sink {
  readonly chunks: Buffer[] = [];
  bytes = 0;
  private waiter: { readonly target: number; readonly resolve: () => void } | null = null;

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.bytes += chunk.length;
      if (this.waiter !== null && this.bytes >= this.waiter.target) {
        const { resolve } = this.waiter;
        this.waiter = null;
        resolve();
      }
    });
  }

  waitFor(target: number, timeoutMs = 30_000): Promise<void> {
    if (this.bytes >= target) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`sink: ${this.bytes} of ${target} bytes after ${timeoutMs} ms`)), timeoutMs);
      this.waiter = { target, resolve: () => { clearTimeout(timer); resolve(); } };
    });
  }

  take(): Buffer {
    const all = Buffer.concat(this.chunks);
    this.chunks.length = 0;
    this.bytes = 0;
    return all;
  }
}

export interface LoopbackPair {
  /** The sending side (a net.connect socket). */
  readonly client: Socket;
  /** The accepted, receiving side. */
  readonly server: Socket;
  close(): Promise<void>;
}

export async function loopbackPair(): Promise<LoopbackPair> {
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const address = listener.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  const accepted = new Promise<Socket>((resolve) => listener.once('connection', resolve));
  const client = connect(address.port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    client.once('connect', resolve);
    client.once('error', reject);
  });
  const server = await accepted;
  // Resets and EPIPEs are expected in some tests; they are asserted where they matter.
  client.on('error', () => {});
  server.on('error', () => {});
  return {
    client,
    server,
    close: async () => {
      client.destroy();
      server.destroy();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}

/** Deterministic bytes (xorshift32), cheap for tens of MiB. */
export function patternBytes(length: number, seed: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  let x = seed >>> 0 || 1;
  let i = 0;
  for (; i + 4 <= length; i += 4) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    out.writeUInt32LE(x, i);
  }
  for (; i < length; i++) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

// ---- hand-made v2 record batches (batch-index, batch-scan), written apart from @seglog/records ----

/** Zig-zag varint bytes of n. */
export function varint(n: number): number[] {
  let u = ((n << 1) ^ (n >> 31)) >>> 0;
  const out: number[] = [];
  while (u >= 0x80) {
    out.push((u & 0x7f) | 0x80);
    u >>>= 7;
  }
  out.push(u);
  return out;
}

/** A record with a null key and timestampDelta = offsetDelta, without headers (or with `headers` raw bytes as its header part). */
export function record(offsetDelta: number, value: number[] | null, headers: number[] = [0]): number[] {
  return recordOf({ timestampDelta: offsetDelta, offsetDelta, key: null, value, headers });
}

/** A record from its parts; `timestampDelta` as raw varlong bytes when an array, `headers` raw (default [0]: none). */
export function recordOf(parts: { timestampDelta: number | number[]; offsetDelta: number; key: number[] | null; value: number[] | null; headers?: number[] }): number[] {
  const field = (bytes: number[] | null): number[] => (bytes === null ? varint(-1) : [...varint(bytes.length), ...bytes]);
  const ts = typeof parts.timestampDelta === 'number' ? varint(parts.timestampDelta) : parts.timestampDelta;
  const body = [0, ...ts, ...varint(parts.offsetDelta), ...field(parts.key), ...field(parts.value), ...(parts.headers ?? [0])];
  return [...varint(body.length), ...body];
}

/** A v2 batch of `records` (their count from the array), CRC set (the addon's crc32c); `attributes` and baseTimestamp as given. */
export function batch(records: number[][], attributes = 0, baseTimestamp = 0): Buffer {
  const payload = Buffer.from(records.flat());
  const buf = Buffer.alloc(61 + payload.length);
  buf.writeInt32BE(buf.length - 12, 8);
  buf.writeInt8(2, 16);
  buf.writeInt16BE(attributes, 21);
  buf.writeBigInt64BE(BigInt(baseTimestamp), 27);
  buf.writeInt32BE(records.length, 57);
  payload.copy(buf, 61);
  buf.writeUInt32BE(crc32c!(buf.subarray(21), 0), 17);
  return buf;
}
