// DirectSegmentWriter on SimIo (through a delaying, snapshotting Io wrapper)
// and on a real O_DIRECT file with NodeIo: byte-exact against the buffered
// writer, no mutation of memory an in-flight write reads, written position
// only over the completed prefix, backpressure on arena exhaustion.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlignedArena, NodeIo, SimIo } from '@seglog/io';
import type { AllocateMode, FileStat, FsStat, Io, IoFile, IoLock, OpenOptions } from '@seglog/io';
import { DirectSegmentWriter } from '../src/segment/direct-segment-writer.js';
import { BufferedSegmentWriter } from '../src/segment/segment-writer.js';
import type { SegmentWriterListener } from '../src/segment/segment-writer.js';

interface PendingWrite {
  readonly file: DelayFile;
  readonly buffer: Uint8Array;
  readonly snapshot: Buffer;
  readonly position: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * An IoFile whose pwrite is held until the test completes it: the bytes are
 * snapshotted when the write starts and compared when it completes (a
 * mutation of memory under an in-flight write is recorded), and the write
 * lands in the SimIo file only at completion, with the buffer's bytes at that
 * moment (as a late DMA would read them).
 */
class DelayFile implements IoFile {
  readonly inner: IoFile;
  readonly owner: DelayIo;

  constructor(inner: IoFile, owner: DelayIo) {
    this.inner = inner;
    this.owner = owner;
  }
  get path(): string { return this.inner.path; }
  get direct(): boolean { return this.inner.direct; }
  get fd(): number { return this.inner.fd; }
  pread(buffer: Uint8Array, position: number, length?: number): Promise<number> { return this.inner.pread(buffer, position, length); }
  pwrite(buffer: Uint8Array, position: number): Promise<void> {
    if (!this.owner.holding) return this.inner.pwrite(buffer, position);
    return new Promise<void>((resolve, reject) => {
      this.owner.pending.push({ file: this, buffer, snapshot: Buffer.from(buffer), position, resolve, reject });
    });
  }
  pwritev(buffers: readonly Uint8Array[], position: number): Promise<void> { return this.inner.pwritev(buffers, position); }
  preadSync(buffer: Uint8Array, position: number, length?: number): number { return this.inner.preadSync(buffer, position, length); }
  pwriteSync(buffer: Uint8Array, position: number): void { this.inner.pwriteSync(buffer, position); }
  fdatasync(): Promise<void> { return this.inner.fdatasync(); }
  /** Held like pwrite (one buffer, as the direct writer issues it); the sync follows the held write. */
  pwritevDatasync(buffers: readonly Uint8Array[], position: number): Promise<void> {
    if (!this.owner.holding || buffers.length !== 1) return this.inner.pwritevDatasync(buffers, position);
    return this.pwrite(buffers[0] as Uint8Array, position).then(() => this.inner.fdatasync());
  }
  fsync(): Promise<void> { return this.inner.fsync(); }
  truncate(size: number): Promise<void> { return this.inner.truncate(size); }
  allocate(position: number, length: number, mode: AllocateMode): Promise<void> { return this.inner.allocate(position, length, mode); }
  size(): Promise<number> { return this.inner.size(); }
  close(): Promise<void> { return this.inner.close(); }
}

class DelayIo implements Io {
  readonly sim: SimIo;
  readonly pending: PendingWrite[] = [];
  readonly mutations: string[] = [];
  holding = true;

  constructor(sim: SimIo) {
    this.sim = sim;
  }
  get directAlignment(): number { return this.sim.directAlignment; }
  async open(p: string, options?: OpenOptions): Promise<IoFile> { return new DelayFile(await this.sim.open(p, options), this); }
  mkdir(p: string, options?: { readonly recursive?: boolean }): Promise<void> { return this.sim.mkdir(p, options); }
  readdir(p: string): Promise<string[]> { return this.sim.readdir(p); }
  rename(from: string, to: string): Promise<void> { return this.sim.rename(from, to); }
  unlink(p: string): Promise<void> { return this.sim.unlink(p); }
  rmdir(p: string): Promise<void> { return this.sim.rmdir(p); }
  stat(p: string): Promise<FileStat> { return this.sim.stat(p); }
  exists(p: string): Promise<boolean> { return this.sim.exists(p); }
  fsyncDir(p: string): Promise<void> { return this.sim.fsyncDir(p); }
  statfs(p: string): Promise<FsStat> { return this.sim.statfs(p); }
  readFile(p: string): Promise<Buffer> { return this.sim.readFile(p); }
  lock(p: string): Promise<IoLock> { return this.sim.lock(p); }

  /** Completes the pending write at `index` (in start order); resolves after its promise settled. */
  async complete(index: number): Promise<void> {
    const [write] = this.pending.splice(index, 1);
    if (write === undefined) throw new Error(`no pending write ${index}`);
    const now = Buffer.from(write.buffer);
    if (!now.equals(write.snapshot)) this.mutations.push(`write at ${write.position} (${write.buffer.byteLength} B) changed while in flight`);
    try {
      await write.file.inner.pwrite(write.buffer, write.position);
      write.resolve();
    } catch (error) {
      write.reject(error);
    }
    await flushMicrotasks();
  }

  /** Completes everything, in an order chosen by `pick` (default oldest first), until nothing is pending. */
  async completeAll(pick: (count: number) => number = () => 0): Promise<void> {
    while (this.pending.length > 0) await this.complete(pick(this.pending.length));
  }
}

async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

interface Recorder extends SegmentWriterListener {
  readonly written: Array<[number, number]>;
  readonly errors: unknown[];
}

function recorder(check?: (position: number, lastOffset: number) => void): Recorder {
  const written: Array<[number, number]> = [];
  const errors: unknown[] = [];
  return {
    written,
    errors,
    onWritten(position, lastOffset) {
      check?.(position, lastOffset);
      written.push([position, lastOffset]);
    },
    onWriteError(error) {
      errors.push(error);
    },
    wantsSync: () => false,
  };
}

function batchBytes(seed: number, length: number): Buffer {
  const b = Buffer.allocUnsafe(length);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    b[i] = (x & 0xff) | 1; // never 0, so zero padding is distinguishable
  }
  return b;
}

const KiB = 1024;

describe('DirectSegmentWriter on SimIo', () => {
  it('the mutation detector fails a write whose buffer changes in flight (canary)', async () => {
    const dio = new DelayIo(new SimIo());
    const file = await dio.open('/canary', { create: true });
    const buf = Buffer.alloc(16, 1);
    const done = file.pwrite(buf, 0);
    buf[3] = 9;
    await dio.complete(0);
    await done;
    expect(dio.mutations).toHaveLength(1);
  });

  it('is byte-exact with the buffered writer, never mutates in-flight memory, reports only a completed prefix', async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.record({ size: fc.integer({ min: 1, max: 20 * KiB }), settle: fc.nat({ max: 3 }) }), { minLength: 1, maxLength: 40 }),
      fc.integer({ min: 0, max: 3 }),
      fc.integer(),
      fc.constantFrom(512, 4096),
      async (batches, startPages, orderSeed, alignment) => {
        await runProperty(batches, startPages * alignment + (startPages % 2 === 1 ? 100 : 0), orderSeed, alignment);
      },
    ), { numRuns: 60, seed: 20260501 });
  });

  it('keeps the written position at the completed prefix when a later write finishes first', async () => {
    const sim = new SimIo();
    const dio = new DelayIo(sim);
    const arena = new AlignedArena({ chunkBytes: 64 * KiB, chunkCount: 4 });
    const file = await dio.open('/seg.log', { create: true, direct: true });
    const rec = recorder();
    const writer = new DirectSegmentWriter(file, 0, rec, { arena, alignment: 4096, maxInFlight: 4, minWriteBytes: 4096 });
    // Writes are issued from a microtask after enqueue(): let each go before the next batch.
    writer.enqueue(batchBytes(1, 8192), 0, 9); // write A [0, 8192), whole pages, in flight
    await flushMicrotasks();
    writer.enqueue(batchBytes(2, 8192), 8192, 19); // whole pages: write B [8192, 16384)
    await flushMicrotasks();
    writer.enqueue(batchBytes(3, 8192), 16384, 29); // write C
    await flushMicrotasks();
    expect(dio.pending.map((w) => w.position)).toEqual([0, 8192, 16384]);
    await dio.complete(2); // C first
    await dio.complete(1); // then B
    expect(rec.written).toEqual([]);
    expect(writer.writtenPosition).toBe(0);
    await dio.complete(0); // A: the prefix A+B+C is complete
    expect(rec.written).toEqual([[24576, 29]]);
    expect(dio.mutations).toEqual([]);
    await writer.close();
  });

  it('rewrites the partial tail page from fresh memory while the old write is in flight', async () => {
    const dio = new DelayIo(new SimIo());
    const arena = new AlignedArena({ chunkBytes: 64 * KiB, chunkCount: 4 });
    const file = await dio.open('/seg.log', { create: true, direct: true });
    const rec = recorder();
    const writer = new DirectSegmentWriter(file, 0, rec, { arena, alignment: 4096 });
    writer.enqueue(batchBytes(1, 100), 0, 0); // issued after this step (a microtask): [0, 4096) padded
    await flushMicrotasks();
    writer.enqueue(batchBytes(2, 100), 100, 1); // same page, under the in-flight write
    writer.enqueue(batchBytes(3, 100), 200, 2);
    await flushMicrotasks();
    expect(dio.pending).toHaveLength(1); // the rewrite waits for the first write
    expect(writer.pageCopies).toBe(1);
    await dio.complete(0);
    expect(rec.written).toEqual([[100, 0]]);
    expect(dio.pending).toHaveLength(1);
    expect(dio.pending[0]!.position).toBe(0);
    await dio.complete(0);
    expect(rec.written).toEqual([[100, 0], [300, 2]]);
    expect(dio.mutations).toEqual([]);
    expect((await dio.sim.readFile('/seg.log')).subarray(0, 4096)).toEqual(Buffer.concat([batchBytes(1, 100), batchBytes(2, 100), batchBytes(3, 100), Buffer.alloc(4096 - 300)]));
    await writer.close();
    expect((await dio.sim.stat('/seg.log')).size).toBe(300);
  });

  it('writes a burst\'s whole pages first, so the next batch\'s write runs beside it (no partial write in the way)', async () => {
    const dio = new DelayIo(new SimIo());
    const arena = new AlignedArena({ chunkBytes: 64 * KiB, chunkCount: 4 });
    const file = await dio.open('/seg.log', { create: true, direct: true });
    const rec = recorder();
    const writer = new DirectSegmentWriter(file, 0, rec, { arena, alignment: 4096, maxInFlight: 4, minWriteBytes: 8192 });
    // A burst: 20,000 B staged with nothing in flight (>= 2 x minWriteBytes): [0, 16384) now, the tail page later.
    writer.enqueue(batchBytes(1, 20_000), 0, 9);
    await flushMicrotasks();
    expect(dio.pending.map((w) => [w.position, w.buffer.byteLength])).toEqual([[0, 16384]]);
    writer.enqueue(batchBytes(2, 20_000), 20_000, 19); // [16384, 40000): whole pages up to 36864, beside the first write
    await flushMicrotasks();
    expect(dio.pending.map((w) => [w.position, w.buffer.byteLength])).toEqual([[0, 16384], [16384, 20480]]);
    expect(rec.written).toEqual([]);
    await dio.complete(0);
    await dio.complete(0);
    // The tail [36864, 40000) goes alone once nothing is in flight; the batches are reported written at their ends.
    expect(dio.pending.map((w) => [w.position, w.buffer.byteLength])).toEqual([[36864, 4096]]);
    expect(rec.written).toEqual([[20_000, 9]]);
    await dio.complete(0);
    expect(rec.written).toEqual([[20_000, 9], [40_000, 19]]);
    expect(dio.mutations).toEqual([]);
    expect((await dio.sim.readFile('/seg.log')).subarray(0, 40_000)).toEqual(Buffer.concat([batchBytes(1, 20_000), batchBytes(2, 20_000)]));
    await writer.close();
  });

  it('applies backpressure instead of failing when the arena is exhausted', async () => {
    const dio = new DelayIo(new SimIo());
    const arena = new AlignedArena({ chunkBytes: 16 * KiB, chunkCount: 2 });
    const file = await dio.open('/seg.log', { create: true, direct: true });
    const rec = recorder();
    const writer = new DirectSegmentWriter(file, 0, rec, { arena, alignment: 4096, maxChunks: 2, minWriteBytes: 1 << 20 });
    const expected: Buffer[] = [];
    let position = 0;
    let refused = 0;
    let hasRoomFalse = 0;
    for (let i = 0; i < 12; i++) {
      const b = batchBytes(i, 5000);
      expected.push(b);
      if (!writer.hasRoom(b.length)) hasRoomFalse++;
      if (!writer.enqueue(b, position, i)) refused++;
      position += b.length;
    }
    expect(arena.available).toBe(0);
    expect(refused).toBeGreaterThan(0);
    expect(hasRoomFalse).toBeGreaterThan(0);
    expect(writer.backlogBatches).toBeGreaterThan(0);
    const room = writer.whenRoom();
    const drained = writer.drain();
    await dio.completeAll();
    await room;
    await drained;
    expect(writer.writtenPosition).toBe(position);
    expect(rec.written.at(-1)).toEqual([position, 11]);
    expect(writer.hasRoom(5000)).toBe(true);
    await writer.close();
    expect(arena.available).toBe(2);
    expect(await dio.sim.readFile('/seg.log')).toEqual(Buffer.concat(expected));
    expect(dio.mutations).toEqual([]);
  });

  it('fails once on a write error and rejects drain', async () => {
    const sim = new SimIo({ faults: { writeEio: { nth: 2 } } });
    const arena = new AlignedArena({ chunkBytes: 64 * KiB, chunkCount: 2 });
    const file = await sim.open('/seg.log', { create: true, direct: true });
    const rec = recorder();
    const writer = new DirectSegmentWriter(file, 0, rec, { arena, alignment: 4096 });
    writer.enqueue(batchBytes(1, 5000), 0, 0);
    await flushMicrotasks(); // issued (and completed by SimIo) on its own: the second write is the one that fails
    writer.enqueue(batchBytes(2, 5000), 5000, 1);
    await expect(writer.drain()).rejects.toMatchObject({ code: 'SEGLOG_ERR_IO_EIO' });
    expect(rec.errors).toHaveLength(1);
    expect(writer.writtenPosition).toBe(5000);
    await writer.close();
    expect(arena.available).toBe(2);
  });

  it('reopens at a position inside a page by reading the page back', async () => {
    const sim = new SimIo();
    const arena = new AlignedArena({ chunkBytes: 64 * KiB, chunkCount: 2 });
    const first = batchBytes(7, 6000);
    const plain = await sim.open('/seg.log', { create: true });
    await plain.pwrite(first, 0);
    await plain.close();
    const file = await sim.open('/seg.log', { direct: true });
    const writer = await DirectSegmentWriter.open(file, 6000, recorder(), { arena, alignment: 4096 });
    const second = batchBytes(8, 3000);
    writer.enqueue(second, 6000, 1);
    await writer.close();
    expect(await sim.readFile('/seg.log')).toEqual(Buffer.concat([first, second]));
  });
});

async function runProperty(batches: ReadonlyArray<{ size: number; settle: number }>, start: number, orderSeed: number, alignment: number): Promise<void> {
  const sim = new SimIo({ directAlignment: alignment });
  const dio = new DelayIo(sim);
  const prefix = batchBytes(99, start);
  if (start > 0) {
    const plain = await sim.open('/d.log', { create: true });
    await plain.pwrite(prefix, 0);
    await plain.close();
  }
  const arena = new AlignedArena({ chunkBytes: 32 * KiB, chunkCount: 3 });
  const file = await dio.open('/d.log', { create: true, direct: true });
  const expected: Buffer[] = [prefix];
  const boundaries = new Set<number>([start]);
  let position = start;
  const visibleOk = async (pos: number): Promise<void> => {
    const content = await sim.readFile('/d.log');
    const want = Buffer.concat(expected).subarray(0, pos);
    if (!content.subarray(0, pos).equals(want)) throw new Error(`reported written ${pos} but the file differs below it`);
    if (!boundaries.has(pos)) throw new Error(`written position ${pos} is not a batch boundary`);
  };
  const checks: Promise<void>[] = [];
  const rec = recorder((pos) => checks.push(visibleOk(pos)));
  const writer = await DirectSegmentWriter.open(file, start, rec, { arena, alignment, maxInFlight: 3, maxChunks: 3, minWriteBytes: alignment });
  let rng = orderSeed >>> 0 || 7;
  const pick = (n: number): number => {
    rng = (Math.imul(rng, 1103515245) + 12345) >>> 0;
    return (rng >>> 8) % n;
  };
  // The buffered reference on a second SimIo.
  const refSim = new SimIo();
  const refFile = await refSim.open('/r.log', { create: true });
  if (start > 0) await refFile.pwrite(prefix, 0);
  const ref = new BufferedSegmentWriter(refFile, start, recorder());
  for (const [i, { size, settle }] of batches.entries()) {
    const b = batchBytes(i + 1, size);
    expected.push(b);
    boundaries.add(position + size);
    if (!writer.enqueue(b, position, i)) await Promise.all([writer.whenRoom(), dio.completeAll(pick)]);
    await flushMicrotasks(); // writes are issued from a microtask after enqueue()
    ref.enqueue(Buffer.from(b), position, i);
    position += size;
    for (let k = 0; k < settle && dio.pending.length > 0; k++) await dio.complete(pick(dio.pending.length));
  }
  const drained = writer.drain();
  await dio.completeAll(pick);
  await drained;
  await ref.drain();
  await Promise.all(checks);
  expect(dio.mutations).toEqual([]);
  expect(writer.writtenPosition).toBe(position);
  expect(rec.written.at(-1)?.[1] ?? -1).toBe(batches.length - 1);
  for (let i = 1; i < rec.written.length; i++) expect(rec.written[i]![0]).toBeGreaterThan(rec.written[i - 1]![0]);
  const padded = await sim.readFile('/d.log');
  expect(padded.length % alignment).toBe(0);
  expect(padded.subarray(position).every((x) => x === 0)).toBe(true);
  await writer.close();
  const direct = await sim.readFile('/d.log');
  expect(direct.equals(await refSim.readFile('/r.log'))).toBe(true);
  expect(direct.equals(Buffer.concat(expected))).toBe(true);
  expect(arena.available).toBe(3);
}

describe('DirectSegmentWriter on a real O_DIRECT file (NodeIo)', () => {
  let dir = '';
  let alignment: number | null = null;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-direct-writer-'));
    alignment = await NodeIo.probeDirectAlignment(dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes random batches byte-exact with the buffered writer, readable through a buffered handle', async (ctx) => {
    if (alignment === null) ctx.skip(); // os.tmpdir() refuses O_DIRECT here (tmpfs?): runs on ext4/xfs
    const io = new NodeIo({ directAlignment: 4096 });
    const arena = new AlignedArena({ chunkBytes: 256 * KiB, chunkCount: 4 });
    await fc.assert(fc.asyncProperty(
      fc.array(fc.integer({ min: 1, max: 300 * KiB }), { minLength: 1, maxLength: 30 }),
      async (sizes) => {
        const name = `s${Math.random().toString(36).slice(2)}`;
        const directPath = path.join(dir, `${name}.direct`);
        const refPath = path.join(dir, `${name}.ref`);
        const file = await io.open(directPath, { create: true, direct: true });
        const refFile = await io.open(refPath, { create: true });
        const writer = new DirectSegmentWriter(file, 0, recorder(), { arena, alignment: 4096, maxInFlight: 3, maxChunks: 4, minWriteBytes: 64 * KiB });
        const ref = new BufferedSegmentWriter(refFile, 0, recorder());
        const reader = await io.open(directPath, { readOnly: true });
        const expected: Buffer[] = [];
        let position = 0;
        for (const [i, size] of sizes.entries()) {
          const b = batchBytes(i + 3, size);
          expected.push(b);
          if (!writer.enqueue(b, position, i)) await writer.whenRoom();
          ref.enqueue(b, position, i);
          position += size;
          if (i % 5 === 4) {
            await writer.drain();
            const back = Buffer.alloc(writer.writtenPosition);
            expect(await reader.pread(back, 0)).toBe(back.length);
            expect(back.equals(Buffer.concat(expected).subarray(0, back.length))).toBe(true);
          }
        }
        await Promise.all([writer.close(), ref.drain()]);
        await Promise.all([file.close(), refFile.close(), reader.close()]);
        expect(statSync(directPath).size).toBe(position);
        expect(readFileSync(directPath).equals(readFileSync(refPath))).toBe(true);
        rmSync(directPath);
        rmSync(refPath);
      },
    ), { numRuns: 8, seed: 42 });
    expect(arena.available).toBe(4);
  });
});
