// ChunkRecycler and the tail caches that share it: never-lent chunks evicted
// by one cache are reused by another (the same memory), a chunk a reader got
// a view of never is (its bytes stay as read, whatever the other cache
// appends), and the recycler keeps at most maxBytes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChunkRecycler } from '../src/cache/chunk-recycler.js';
import { TailCache } from '../src/cache/tail-cache.js';

const CHUNK = 64;

function bytes(seed: number, length: number): Buffer {
  const b = Buffer.alloc(length);
  for (let i = 0; i < length; i++) b[i] = (seed * 31 + i * 7 + 1) & 0xff;
  return b;
}

describe('ChunkRecycler', () => {
  it('hands back buffers of the asked size, newest first, and keeps at most maxBytes', () => {
    const r = new ChunkRecycler(3 * CHUNK);
    const [a, b, c, d] = [Buffer.alloc(CHUNK), Buffer.alloc(CHUNK), Buffer.alloc(2 * CHUNK), Buffer.alloc(CHUNK)];
    r.give(a);
    r.give(b);
    r.give(c); // 4 chunks' worth: over the cap, dropped
    expect(r.heldBytes).toBe(2 * CHUNK);
    expect(r.dropped).toBe(1);
    r.give(d);
    expect(r.heldBytes).toBe(3 * CHUNK);
    expect(r.take(2 * CHUNK)).toBeNull();
    expect(r.take(CHUNK)).toBe(d);
    expect(r.take(CHUNK)).toBe(b);
    expect(r.take(CHUNK)).toBe(a);
    expect(r.take(CHUNK)).toBeNull();
    expect(r.heldBytes).toBe(0);
    expect(r.reused).toBe(3);
    expect(new ChunkRecycler(0).take(CHUNK)).toBeNull();
  });

  it('lets one cache reuse the chunks another evicted, never one a reader saw', () => {
    const recycler = new ChunkRecycler(64 * CHUNK);
    const a = new TailCache({ chunkBytes: CHUNK, maxBytes: CHUNK, spareChunksMax: 0, recycler });
    const b = new TailCache({ chunkBytes: CHUNK, maxBytes: CHUNK, spareChunksMax: 0, recycler });
    a.append(0, bytes(1, 4 * CHUNK));
    const lent: Buffer[] = [];
    expect(a.read(CHUNK, CHUNK, lent)).toBe(true); // chunk 1 is lent
    const seen = Buffer.concat(lent);
    a.markWritten(4 * CHUNK); // over maxBytes: chunks 0..2 dropped; 0 and 2 never lent
    expect(recycler.heldBytes).toBe(2 * CHUNK);
    b.append(0, bytes(2, 3 * CHUNK)); // two recycled chunks, then a new one
    expect(recycler.reused).toBe(2);
    expect(recycler.heldBytes).toBe(0);
    expect(lent[0]!.equals(seen)).toBe(true); // the lent chunk was not reused
    const out: Buffer[] = [];
    expect(b.read(0, 3 * CHUNK, out)).toBe(true);
    expect(Buffer.concat(out).equals(bytes(2, 3 * CHUNK))).toBe(true);
    b.close();
    a.close();
  });

  it('two caches sharing a recycler: every read matches what was appended, every held view keeps its bytes', () => {
    type Op = { cache: 0 | 1; kind: 'append' | 'written' | 'read' | 'evict' | 'roll'; n: number };
    const op = fc.record({
      cache: fc.constantFrom(0 as const, 1 as const),
      kind: fc.constantFrom('append' as const, 'append' as const, 'written' as const, 'read' as const, 'evict' as const, 'roll' as const),
      n: fc.integer({ min: 1, max: 200 }),
    });
    fc.assert(fc.property(fc.array(op, { minLength: 1, maxLength: 100 }), (ops: Op[]) => {
      const recycler = new ChunkRecycler(8 * CHUNK);
      const caches = [0, 1].map(() => new TailCache({ chunkBytes: CHUNK, maxBytes: 2 * CHUNK, spareChunksMax: 1, recycler }));
      const models: number[][] = [[], []];
      const held: Array<{ view: Buffer; copy: Buffer }> = [];
      let seed = 1;
      for (const o of ops) {
        const cache = caches[o.cache]!;
        const model = models[o.cache]!;
        if (o.kind === 'append') {
          const b = bytes(seed++, o.n);
          cache.append(model.length, b);
          model.push(...b);
        } else if (o.kind === 'written') {
          cache.markWritten(Math.max(cache.writtenPosition, model.length - (o.n % 100)));
        } else if (o.kind === 'read') {
          const from = Math.max(0, model.length - o.n);
          const out: Buffer[] = [];
          if (cache.read(from, model.length - from, out)) {
            expect([...Buffer.concat(out)]).toEqual(model.slice(from));
            for (const view of out) held.push({ view, copy: Buffer.from(view) });
          }
        } else if (o.kind === 'evict') {
          cache.evict(o.n);
        } else if (model.length === cache.writtenPosition) {
          cache.roll(0);
          models[o.cache] = [];
        }
        for (const h of held) expect(h.view.equals(h.copy)).toBe(true);
        expect(recycler.heldBytes).toBeLessThanOrEqual(8 * CHUNK);
      }
      for (const c of caches) c.close();
    }), { numRuns: 200, seed: 11 });
  });
});
