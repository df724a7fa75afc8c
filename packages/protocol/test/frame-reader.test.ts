// FrameReader: any split of a stream of frames into chunks yields the same
// frames; the size limit is enforced on the prefix, before the body arrives.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSeglogError } from '@seglog/common';
import { FrameReader } from '../src/index.js';

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
    const start = process.hrtime.bigint();
    for (let i = 0; i < stream.length; i++) {
      reader.push(stream.subarray(i, i + 1));
      for (let frame = reader.next(); frame !== null; frame = reader.next()) {
        expect(frame.equals(bodies[count] as Buffer)).toBe(true);
        count++;
      }
    }
    expect(count).toBe(2000);
    // ~108 000 one-byte chunks; a quadratic reader would take seconds.
    expect(Number(process.hrtime.bigint() - start) / 1e6).toBeLessThan(3000);
  });
});
