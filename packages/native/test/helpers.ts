// Test helpers: temporary files, loopback TCP pairs and a byte sink.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
