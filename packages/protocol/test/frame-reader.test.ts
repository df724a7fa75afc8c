// FrameReader: any split of a stream of frames into chunks yields the same
// frames; the size limit is enforced on the prefix, before the body arrives.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSeglogError } from '@seglog/common';
import { FrameReader, MemoryPool } from '../src/index.js';

function framed(bodies: readonly Buffer[]): Buffer {
  return Buffer.concat(bodies.flatMap((body) => {
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(body.length, 0);
    return [prefix, body];
  }));
}

function split(stream: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (stream.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const p of [...points, stream.length]) {
    chunks.push(stream.subarray(from, p));
    from = p;
  }
  return chunks;
}

function codeOf(fn: () => unknown): string {
  try { fn(); } catch (error) { if (isSeglogError(error)) return error.code; throw error; }
  return 'no error';
}

describe('FrameReader', () => {
  it('yields the same frames for any chunking (model: the list of bodies)', () => {
    const body = fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b));
    fc.assert(fc.property(fc.array(body, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 30 }), (bodies, cuts) => {
      const reader = new FrameReader({ maxFrameBytes: 64 });
      const out: Buffer[] = [];
      for (const chunk of split(framed(bodies), cuts)) {
        reader.push(chunk);
        for (let frame = reader.next(); frame !== null; frame = reader.next()) out.push(frame);
      }
      expect(out).toEqual(bodies);
      expect(reader.bufferedBytes).toBe(0);
    }), { numRuns: 300 });
  });

  it('returns a zero-copy slice when a frame lies in one chunk, one exact copy when it spans chunks', () => {
    const stream = framed([Buffer.from('aaaa'), Buffer.from('bbbbbbbb')]);
    const reader = new FrameReader({ maxFrameBytes: 100 });
    reader.push(stream.subarray(0, 14));
    reader.push(stream.subarray(14));
    const first = reader.next();
    const second = reader.next();
    expect(first?.toString()).toBe('aaaa');
    expect(second?.toString()).toBe('bbbbbbbb');
    // Writing into the stream shows which frame is a view of it (pooled
    // Buffers share an ArrayBuffer, so comparing .buffer would prove nothing).
    stream.fill(0x7a);
    expect(first?.toString()).toBe('zzzz');
    expect(second?.toString()).toBe('bbbbbbbb');
  });

  it('rejects an oversized frame from its 4-byte prefix alone, before the body is buffered', () => {
    const reader = new FrameReader({ maxFrameBytes: 1024 });
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(1025, 0);
    reader.push(prefix.subarray(0, 3));
    expect(codeOf(() => reader.push(prefix.subarray(3)))).toBe('SEGLOG_ERR_PROTOCOL_FRAME_TOO_LARGE');
    expect(() => reader.next()).toThrow(/failed earlier/);
    const exact = new FrameReader({ maxFrameBytes: 1024 });
    prefix.writeInt32BE(1024, 0);
    exact.push(prefix);
    expect(exact.next()).toBeNull();
  });

  it('rejects a negative size and accepts an empty frame', () => {
    expect(codeOf(() => new FrameReader({ maxFrameBytes: 10 }).push(Buffer.from('ffffffff', 'hex')))).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
    const reader = new FrameReader({ maxFrameBytes: 10 });
    reader.push(Buffer.from('00000000', 'hex'));
    expect(reader.next()?.length).toBe(0);
    expect(reader.next()).toBeNull();
  });

  it('byte-at-a-time delivery of many frames copies each byte once (linear time)', () => {
    const bodies = Array.from({ length: 2000 }, (_, i) => Buffer.alloc(50, i & 0xff));
    const stream = framed(bodies);
    const reader = new FrameReader({ maxFrameBytes: 100 });
    let count = 0;
    for (let i = 0; i < stream.length; i++) {
      reader.push(stream.subarray(i, i + 1));
      for (let frame = reader.next(); frame !== null; frame = reader.next()) {
        expect(frame.equals(bodies[count] as Buffer)).toBe(true);
        count++;
      }
    }
    expect(count).toBe(2000);
    // ~108 000 one-byte chunks: each byte copied at most once (a concatenating
    // reader copies what it holds again at every chunk), counted, not timed.
    expect(reader.copiedBytes).toBeLessThanOrEqual(stream.length);
    expect(reader.copiedBytes).toBeGreaterThan(0);
  });

  it('copies a partial frame into one buffer of its size as chunks arrive, keeping none of them (issue 23 item 7)', () => {
    const body = Buffer.alloc(1000, 0x61);
    const stream = framed([body]);
    const reader = new FrameReader({ maxFrameBytes: 2000 });
    // One-byte chunks that are views of `stream`: a reader that kept them would
    // see the overwrite below; one that copied them into the frame does not.
    for (let i = 0; i < stream.length - 1; i++) reader.push(stream.subarray(i, i + 1));
    expect(reader.next()).toBeNull();
    expect(reader.bufferedBytes).toBe(999);
    stream.fill(0x7a, 0, stream.length - 1);
    reader.push(stream.subarray(stream.length - 1));
    expect(reader.next()?.equals(body)).toBe(true);
  });

  it('reserves each frame from the pool once its size is known and waits while the pool is spent (non-strict)', () => {
    const pool = new MemoryPool(100);
    const a = new FrameReader({ maxFrameBytes: 1000, pool });
    const b = new FrameReader({ maxFrameBytes: 1000, pool });
    const c = new FrameReader({ maxFrameBytes: 1000, pool });
    const [frameA, frameB, frameC] = [Buffer.alloc(60, 1), Buffer.alloc(60, 2), Buffer.alloc(10, 3)].map((x) => framed([x]));
    a.push((frameA as Buffer).subarray(0, 10));
    expect(pool.reservedBytes).toBe(60);
    b.push((frameB as Buffer).subarray(0, 10));
    expect(pool.reservedBytes).toBe(120); // the budget was not spent yet: it may overshoot by one frame
    c.push(frameC as Buffer);
    expect(c.waitingForMemory).toBe(true);
    expect(c.next()).toBeNull();
    let woken = 0;
    pool.waitForMemory(() => woken++);
    a.push((frameA as Buffer).subarray(10));
    const gotA = a.next() as Buffer;
    expect(gotA.length).toBe(60);
    expect(woken).toBe(0);
    pool.release(gotA.length);
    expect(woken).toBe(1);
    expect(c.next()?.equals(Buffer.alloc(10, 3))).toBe(true);
    expect(c.waitingForMemory).toBe(false);
    expect(pool.reservedBytes).toBe(70);
    b.dispose(); // a half-received frame's reservation goes back with its connection
    pool.release(10);
    expect(pool.reservedBytes).toBe(0);
  });

  it('with a pool, any chunking yields the same frames and reserves exactly the frames not yet released', () => {
    const body = fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b));
    fc.assert(fc.property(fc.array(body, { maxLength: 12 }), fc.array(fc.nat(), { maxLength: 30 }), fc.nat({ max: 3 }), (bodies, cuts, keep) => {
      const pool = new MemoryPool(1 << 20);
      const reader = new FrameReader({ maxFrameBytes: 64, pool });
      const out: Buffer[] = [];
      for (const chunk of split(framed(bodies), cuts)) {
        reader.push(chunk);
        for (let frame = reader.next(); frame !== null; frame = reader.next()) out.push(frame);
      }
      expect(out).toEqual(bodies);
      expect(pool.reservedBytes).toBe(out.reduce((n, f) => n + f.length, 0));
      for (const f of out) pool.release(f.length);
      // A trailing partial frame holds its declared size until dispose().
      const partial = framed([Buffer.alloc(keep + 5)]).subarray(0, 4 + keep);
      reader.push(partial);
      expect(pool.reservedBytes).toBe(keep + 5);
      reader.dispose();
      expect(pool.reservedBytes).toBe(0);
    }), { numRuns: 200 });
  });
});
