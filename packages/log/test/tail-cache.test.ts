// TailCache against a trivial model (a byte array of the segment), plus the
// rules: pinning, eviction order, truncation, roll, slices that stay valid,
// and the global budget's LRU between logs.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TailCache, TailCacheBudget } from '../src/cache/tail-cache.js';

const CHUNK = 64;

function bytes(seed: number, length: number): Buffer {
  const b = Buffer.alloc(length);
  for (let i = 0; i < length; i++) b[i] = (seed * 31 + i * 7 + 1) & 0xff;
  return b;
}

function readAll(cache: TailCache, position: number, length: number): Buffer | null {
  const out: Buffer[] = [];
  return cache.read(position, length, out) ? Buffer.concat(out) : null;
}

type Op =
  | { kind: 'append'; length: number; byReference: boolean }
  | { kind: 'written'; back: number }
  | { kind: 'read'; from: number; length: number }
  | { kind: 'evict'; bytes: number }
  | { kind: 'truncate'; back: number }
  | { kind: 'roll' };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('append' as const), length: fc.integer({ min: 1, max: 200 }), byReference: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('written' as const), back: fc.nat({ max: 300 }) }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('read' as const), from: fc.nat({ max: 600 }), length: fc.nat({ max: 300 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('evict' as const), bytes: fc.nat({ max: 300 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncate' as const), back: fc.nat({ max: 300 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'roll' as const }) },
);

describe('TailCache', () => {
  it('matches a byte-array model; pinned bytes are never evicted; held slices never change', () => {
    fc.assert(fc.property(fc.array(op, { minLength: 1, maxLength: 120 }), fc.integer({ min: 1, max: 8 }), (ops, maxChunks) => {
      // A budget that never reclaims: its total must follow the cache's memory exactly (pieces and chunks).
      const budget = new TailCacheBudget({ maxBytes: Number.MAX_SAFE_INTEGER });
      const cache = new TailCache({ chunkBytes: CHUNK, maxBytes: maxChunks * CHUNK, budget });
      let model: number[] = []; // the active segment's bytes, from position 0
      let written = 0;
      let seed = 1;
      const held: Array<{ slices: Buffer[]; copy: Buffer }> = [];
      // Appended buffers the owner may reuse once they are written: scribbled over then.
      let appended: Array<{ buffer: Buffer; end: number }> = [];
      for (const o of ops) {
        if (o.kind === 'append') {
          const b = bytes(seed++, o.length);
          cache.append(model.length, b, o.byReference);
          model = model.concat([...b]);
          appended.push({ buffer: b, end: model.length });
        } else if (o.kind === 'written') {
          written = Math.max(written, Math.max(0, model.length - o.back));
          cache.markWritten(written);
          for (const a of appended) if (a.end <= written) a.buffer.fill(0xee);
          appended = appended.filter((a) => a.end > written);
        } else if (o.kind === 'read') {
          const out: Buffer[] = [];
          const hit = cache.read(o.from, o.length, out);
          const inWindow = o.from >= cache.start && o.from + o.length <= cache.end && cache.bytes > 0;
          expect(hit).toBe(inWindow);
          if (hit) {
            const got = Buffer.concat(out);
            expect([...got]).toEqual(model.slice(o.from, o.from + o.length));
            held.push({ slices: out, copy: got });
          }
        } else if (o.kind === 'evict') {
          cache.evict(o.bytes);
        } else if (o.kind === 'truncate') {
          const to = Math.max(0, model.length - o.back);
          cache.truncate(to);
          model = model.slice(0, to);
          appended = appended.filter((a) => a.end <= to);
          written = Math.min(written, to);
        } else {
          cache.roll(0);
          model = [];
          written = 0;
          appended = [];
        }
        // Window invariants: contiguous, ends at the model's end, unwritten bytes all cached.
        if (cache.bytes > 0) expect(cache.end).toBe(model.length);
        if (model.length > written) {
          expect(cache.start).toBeLessThanOrEqual(written);
          expect(cache.end).toBe(model.length);
          expect(cache.covers(written)).toBe(true);
        }
        expect(budget.bytes).toBe(cache.memoryBytes);
        // Pending pieces (caller buffers held by reference) are all unwritten: no reference outlives a write.
        expect(cache.pendingBytes).toBeLessThanOrEqual(Math.max(0, model.length - written));
        // Unwritten bytes are held as chunks (a partial one at each end) or, byte for byte, as pending pieces.
        expect(cache.memoryBytes).toBeLessThanOrEqual(Math.max(maxChunks * CHUNK, (Math.ceil((model.length - written) / CHUNK) + 2) * CHUNK));
        for (const h of held) expect(Buffer.concat(h.slices).equals(h.copy)).toBe(true);
      }
      cache.close();
      expect(budget.bytes).toBe(0);
    }), { numRuns: 300, seed: 5 });
  });

  it('pins unwritten bytes, evicts the oldest written chunks first, and counts', () => {
    const cache = new TailCache({ chunkBytes: CHUNK, maxBytes: 2 * CHUNK });
    cache.append(0, bytes(1, 4 * CHUNK)); // over the limit, but nothing is written: all pinned
    expect(cache.memoryBytes).toBe(4 * CHUNK);
    expect(cache.evict(CHUNK)).toBe(0);
    cache.markWritten(CHUNK + 10); // unpins the first chunk: over the limit, dropped at once
    expect(cache.start).toBe(CHUNK);
    expect(cache.memoryBytes).toBe(3 * CHUNK);
    expect(cache.evict(10 * CHUNK)).toBe(0); // the second chunk still holds unwritten bytes
    expect(cache.evictions).toBe(1);
    expect(readAll(cache, 0, 10)).toBeNull();
    expect(readAll(cache, CHUNK, 2 * CHUNK)?.equals(bytes(1, 4 * CHUNK).subarray(CHUNK, 3 * CHUNK))).toBe(true);
    expect(cache.hits).toBe(1);
    expect(cache.misses).toBe(1);
    cache.markWritten(4 * CHUNK);
    cache.append(4 * CHUNK, bytes(2, 1)); // per-log limit enforced on append: down to 2 chunks
    expect(cache.memoryBytes).toBe(2 * CHUNK);
    expect(cache.start).toBe(3 * CHUNK);
    expect(cache.covers(3 * CHUNK)).toBe(true);
    expect(cache.covers(3 * CHUNK - 1)).toBe(false);
  });

  it('serves a hit as views of its memory, without copying', () => {
    const cache = new TailCache({ chunkBytes: CHUNK, maxBytes: 8 * CHUNK });
    cache.append(1000, bytes(3, 100));
    const out: Buffer[] = [];
    expect(cache.read(1010, 80, out)).toBe(true);
    expect(out).toHaveLength(2); // crosses a chunk boundary at 1064
    expect(out[0]!.length + out[1]!.length).toBe(80);
    const again: Buffer[] = [];
    cache.read(1010, 5, again);
    expect(again[0]!.buffer).toBe(out[0]!.buffer);
    expect(again[0]!.byteOffset).toBe(out[0]!.byteOffset);
  });

  it('truncate invalidates exactly the bytes at and after the position; slices held stay valid', () => {
    const cache = new TailCache({ chunkBytes: CHUNK, maxBytes: 8 * CHUNK });
    const first = bytes(4, 100);
    cache.append(0, first);
    const out: Buffer[] = [];
    cache.read(50, 50, out);
    const before = Buffer.concat(out);
    cache.truncate(70);
    expect(cache.end).toBe(70);
    expect(readAll(cache, 60, 10)?.equals(first.subarray(60, 70))).toBe(true);
    expect(readAll(cache, 60, 11)).toBeNull();
    const replacement = bytes(5, 100);
    cache.append(70, replacement); // must not land in memory the reader holds
    expect(Buffer.concat(out).equals(before)).toBe(true);
    expect(readAll(cache, 0, 170)?.equals(Buffer.concat([first.subarray(0, 70), replacement]))).toBe(true);
    // Truncating below a chunk boundary drops later chunks; below start drops everything.
    cache.truncate(10);
    expect(cache.bytes).toBe(10);
    expect(Buffer.concat(out).equals(before)).toBe(true);
    cache.truncate(0);
    expect(cache.bytes).toBe(0);
    expect(cache.memoryBytes).toBe(0);
  });

  it('reuses only chunks no reader ever saw', () => {
    const cache = new TailCache({ chunkBytes: CHUNK, maxBytes: 8 * CHUNK });
    cache.append(0, bytes(6, CHUNK));
    const out: Buffer[] = [];
    cache.read(0, 10, out);
    const lent = Buffer.from(out[0]!);
    cache.markWritten(CHUNK);
    cache.evict(CHUNK); // lent: left to the GC
    cache.append(CHUNK, bytes(7, CHUNK));
    expect(out[0]!.equals(lent)).toBe(true);
    cache.markWritten(2 * CHUNK);
    cache.roll(0); // never lent: recycled
    cache.append(0, bytes(8, CHUNK));
    expect(out[0]!.equals(lent)).toBe(true);
  });

  it('roll drops everything and starts a new window', () => {
    const cache = new TailCache({ chunkBytes: CHUNK, maxBytes: 8 * CHUNK });
    cache.append(0, bytes(9, 300));
    cache.roll(0);
    expect(cache.bytes).toBe(0);
    expect(cache.memoryBytes).toBe(0);
    expect(readAll(cache, 0, 1)).toBeNull();
    cache.append(0, bytes(10, 5));
    expect(readAll(cache, 0, 5)?.equals(bytes(10, 5))).toBe(true);
    expect(cache.writtenPosition).toBe(0);
  });
});

describe('TailCache pending pieces (appended bytes held by reference until written)', () => {
  it('copies at once while the writer is close behind, holds by reference when more than maxBytes is unwritten', () => {
    const cache = new TailCache({ chunkBytes: CHUNK, maxBytes: 4 * CHUNK });
    cache.append(0, bytes(10, 100), true); // 100 unwritten <= 256: copied now (hot)
    expect(cache.pendingBytes).toBe(0);
    cache.append(100, bytes(11, 200), true); // 300 unwritten > 256: by reference
    expect(cache.pendingBytes).toBe(200);
    cache.append(300, bytes(12, 10), true); // after a piece, always a piece (the window stays in order)
    expect(cache.pendingBytes).toBe(210);
    expect(readAll(cache, 0, 310)?.equals(Buffer.concat([bytes(10, 100), bytes(11, 200), bytes(12, 10)]))).toBe(true);
    const direct = new TailCache({ chunkBytes: CHUNK, maxBytes: 4 * CHUNK });
    direct.append(0, bytes(10, 400)); // not byReference (a direct writer lets its buffer go): always copied
    expect(direct.pendingBytes).toBe(0);
  });

  it('gives up the reference when the bytes are written: the owner may reuse its buffer then', () => {
    const cache = new TailCache({ chunkBytes: CHUNK, maxBytes: 4 * CHUNK });
    cache.append(0, bytes(13, 100), true);
    const batch = bytes(14, 200);
    const original = Buffer.from(batch);
    cache.append(100, batch, true);
    expect(cache.pendingBytes).toBe(200);
    cache.markWritten(100); // the first batch's chunks go (over the limit); the piece is still unwritten
    expect(cache.pendingBytes).toBe(200);
    expect(cache.start).toBe(100);
    cache.markWritten(300); // written and within the limit: copied, the reference given up
    expect(cache.pendingBytes).toBe(0);
    batch.fill(0xee); // the log's ownership ended with the write (SegmentWriter contract)
    expect(readAll(cache, 100, 200)?.equals(original)).toBe(true);
  });

  it('never lends a view of a pending piece; peek reads through chunks and pieces alike', () => {
    const cache = new TailCache({ chunkBytes: CHUNK, maxBytes: CHUNK });
    const first = bytes(15, 40);
    const second = bytes(16, 100);
    cache.append(0, first, true); // copied, pinned
    cache.append(40, second, true); // 140 unwritten > 64: a piece
    expect(cache.pendingBytes).toBe(100);
    const target = Buffer.alloc(60);
    expect(cache.peek(20, 60, target)).toBe(true);
    expect(target.equals(Buffer.concat([first.subarray(20), second.subarray(0, 40)]))).toBe(true);
    expect(cache.pendingBytes).toBe(100); // peek copies out, nothing is moved
    const out: Buffer[] = [];
    expect(cache.read(30, 60, out)).toBe(true);
    for (const view of out) expect(view.buffer).not.toBe(second.buffer);
    expect(cache.pendingBytes).toBe(0);
    const before = Buffer.concat(out);
    cache.markWritten(140);
    second.fill(0xee);
    expect(Buffer.concat(out).equals(before)).toBe(true);
  });

  it('drops written pieces without copying them when the window must shrink anyway (a writer behind)', () => {
    const cache = new TailCache({ chunkBytes: CHUNK, maxBytes: 2 * CHUNK });
    const pieces = Array.from({ length: 10 }, (_, i) => bytes(20 + i, CHUNK));
    for (const [i, piece] of pieces.entries()) cache.append(i * CHUNK, piece, true);
    expect(cache.pendingBytes).toBe(8 * CHUNK); // the first two were copied while within the limit
    expect(cache.memoryBytes).toBe(10 * CHUNK); // all pinned: over the limit
    cache.markWritten(10 * CHUNK);
    expect(cache.evictedBytes).toBe(8 * CHUNK); // two chunks, then six pieces dropped as references
    expect(cache.start).toBe(8 * CHUNK);
    expect(cache.memoryBytes).toBe(2 * CHUNK); // the last two pieces copied into chunks
    expect(cache.pendingBytes).toBe(0);
    expect(readAll(cache, 8 * CHUNK, 2 * CHUNK)?.equals(Buffer.concat(pieces.slice(8)))).toBe(true);
    expect(readAll(cache, 7 * CHUNK, 1)).toBeNull();
  });

  it('truncates inside the pending pieces exactly', () => {
    const cache = new TailCache({ chunkBytes: CHUNK, maxBytes: CHUNK / 2 });
    const a = bytes(30, 30);
    const b = bytes(31, 30);
    cache.append(0, a, true); // copied
    cache.append(30, b, true); // 60 unwritten > 32: a piece
    cache.truncate(45); // cuts b
    expect(cache.end).toBe(45);
    expect(cache.pendingBytes).toBe(15);
    cache.append(45, bytes(32, 5), true);
    expect(readAll(cache, 0, 50)?.equals(Buffer.concat([a, b.subarray(0, 15), bytes(32, 5)]))).toBe(true);
    cache.truncate(40); // now in chunk memory
    expect(readAll(cache, 0, 40)?.equals(Buffer.concat([a, b.subarray(0, 10)]))).toBe(true);
    cache.append(40, bytes(33, 3), true); // 43 unwritten > 32: a piece
    expect(cache.pendingBytes).toBe(3);
    cache.truncate(40); // exactly at the pending start
    expect(cache.end).toBe(40);
    expect(cache.pendingBytes).toBe(0);
    expect(readAll(cache, 0, 40)?.equals(Buffer.concat([a, b.subarray(0, 10)]))).toBe(true);
  });
});

describe('TailCacheBudget', () => {
  it('asks the least-recently-used log to shrink first', () => {
    const budget = new TailCacheBudget({ maxBytes: 4 * CHUNK });
    const [a, b, c] = [0, 1, 2].map(() => new TailCache({ chunkBytes: CHUNK, maxBytes: 100 * CHUNK, budget }));
    a!.append(0, bytes(1, 2 * CHUNK));
    b!.append(0, bytes(2, 2 * CHUNK));
    for (const cache of [a!, b!]) cache.markWritten(2 * CHUNK);
    expect(budget.bytes).toBe(4 * CHUNK);
    readAll(a!, 0, 1); // a is now more recent than b
    c!.append(0, bytes(3, CHUNK)); // over budget by one chunk: taken from b (LRU), not a
    expect(budget.bytes).toBe(4 * CHUNK);
    expect(b!.memoryBytes).toBe(CHUNK);
    expect(a!.memoryBytes).toBe(2 * CHUNK);
    expect(budget.reclaims).toBe(1);
    // Pinned bytes are never reclaimed: c holds unwritten bytes only.
    b!.append(2 * CHUNK, bytes(4, 3 * CHUNK));
    expect(c!.memoryBytes).toBe(CHUNK);
    expect(a!.memoryBytes).toBe(0);
  });

  it('with onOverBudget defers the reclaim to its owner (the pool)', () => {
    let calls = 0;
    const budget = new TailCacheBudget({ maxBytes: CHUNK, onOverBudget: () => calls++ });
    const a = new TailCache({ chunkBytes: CHUNK, maxBytes: 100 * CHUNK, budget });
    a.append(0, bytes(1, 3 * CHUNK));
    a.markWritten(3 * CHUNK);
    expect(calls).toBe(1);
    expect(budget.bytes).toBe(3 * CHUNK);
    expect(budget.reclaim()).toBe(2 * CHUNK);
    expect(budget.bytes).toBe(CHUNK);
    a.close();
    expect(budget.bytes).toBe(0);
    expect(budget.logs).toBe(0);
  });
});
