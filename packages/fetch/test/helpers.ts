// Test helpers: a loopback TCP pair whose client side collects what it
// reads, temp segment files opened through NodeIo, and FetchPlans built from
// @seglog/log's own classes.

import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { NodeIo, type IoFile } from '@seglog/io';
import { FetchPlan, SegmentFileRef } from '@seglog/log';
import type { WritableFetchPlan } from '../src/index.js';

// Compile-time: log's FetchPlan is a plan writeFetch accepts.
export const planShapeCheck: (plan: FetchPlan) => WritableFetchPlan = (plan) => plan;

export { FetchPlan, SegmentFileRef };

export type PartSpec = { kind: 'inline'; bytes: Buffer } | { kind: 'file'; file: number; position: number; length: number };

export interface Pair {
  /** The server side: what writeFetch writes to. */
  writer: net.Socket;
  /** The client side: reads into `chunks`. */
  reader: net.Socket;
  received(): number;
  bytes(): Buffer;
  /** Resolves when `n` bytes have arrived, or rejects after `ms`. */
  waitFor(n: number, ms?: number): Promise<void>;
  close(): void;
}

export async function tcpPair(): Promise<Pair> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
  const reader = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => { reader.once('connect', resolve); reader.once('error', reject); });
  const writer = await accepted;
  server.close();
  writer.on('error', () => undefined); // writeFetch reports; a later error must not crash the test
  reader.on('error', () => undefined);
  const chunks: Buffer[] = [];
  let count = 0;
  let waiter: { n: number; resolve: () => void } | null = null;
  reader.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    count += chunk.length;
    if (waiter !== null && count >= waiter.n) { const w = waiter; waiter = null; w.resolve(); }
  });
  return {
    writer,
    reader,
    received: () => count,
    bytes: () => Buffer.concat(chunks),
    waitFor: (n, ms = 20_000) => new Promise<void>((resolve, reject) => {
      if (count >= n) { resolve(); return; }
      const timer = setTimeout(() => reject(new Error(`reader got ${count} of ${n} bytes`)), ms);
      waiter = { n, resolve: () => { clearTimeout(timer); resolve(); } };
    }),
    close: () => { writer.destroy(); reader.destroy(); },
  };
}

export interface Segments {
  io: NodeIo;
  dir: string;
  /** Content of each file, for building expected bytes. */
  contents: Buffer[];
  paths: string[];
  files: IoFile[];
  refs: SegmentFileRef[];
  /** Builds a plan (retaining one reference per file part, as Log.read does). */
  plan(specs: readonly PartSpec[]): FetchPlan;
  expected(header: Buffer, specs: readonly PartSpec[]): Buffer;
  cleanup(): Promise<void>;
}

/** `count` files of `bytes` bytes with distinct pseudo-random content. */
export async function segments(count: number, bytes: number, seed = 1): Promise<Segments> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-fetch-'));
  const io = new NodeIo();
  const contents: Buffer[] = [];
  const paths: string[] = [];
  let x = seed >>> 0 || 1;
  for (let f = 0; f < count; f++) {
    const b = Buffer.allocUnsafe(bytes);
    for (let i = 0; i < bytes; i += 4) {
      x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
      b.writeUInt32LE(x >>> 0, i);
    }
    const p = path.join(dir, `${String(f).padStart(20, '0')}.log`);
    writeFileSync(p, b);
    contents.push(b);
    paths.push(p);
  }
  const files = await Promise.all(paths.map((p) => io.open(p, { readOnly: true })));
  const refs = files.map((f) => new SegmentFileRef(f));
  return {
    io, dir, contents, paths, files, refs,
    plan: (specs) => new FetchPlan({
      parts: specs.map((s) => s.kind === 'inline'
        ? { kind: 'inline' as const, buffer: s.bytes }
        : { kind: 'file' as const, file: refs[s.file]!.retain(), position: s.position, length: s.length }),
      firstOffset: 0, nextOffset: 0, highWatermark: 0, lastStableOffset: 0, logStartOffset: 0, abortedTransactions: [],
    }),
    expected: (header, specs) => Buffer.concat([header, ...specs.map((s) => s.kind === 'inline' ? s.bytes : contents[s.file]!.subarray(s.position, s.position + s.length))]),
    cleanup: async () => {
      for (const r of refs) if (!r.isClosed) await r.release();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function totalOf(specs: readonly PartSpec[]): number {
  let t = 0;
  for (const s of specs) t += s.kind === 'inline' ? s.bytes.length : s.length;
  return t;
}
