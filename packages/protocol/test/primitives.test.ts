// ProtocolReader / ProtocolWriter: every primitive round-trips, and the
// reader's invariants hold (typed errors, bound before allocate, zero-copy).

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ProtocolErrorCode, ProtocolReader, ProtocolWriter } from '../src/index.js';

function bytesOf(writer: ProtocolWriter): Buffer {
  return Buffer.concat(writer.finish().parts.map((part) => part as Buffer));
}

function codeOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return (error as { code?: string }).code ?? 'untyped';
  }
  return 'no error';
}

describe('primitives', () => {
  it('round-trip every primitive in both encodings', () => {
    fc.assert(fc.property(
      fc.integer({ min: -128, max: 127 }), fc.integer({ min: -32768, max: 32767 }), fc.integer({ min: 0, max: 65535 }),
      fc.integer(), fc.maxSafeInteger().chain((n) => fc.constantFrom(n, n === 0 ? 0 : -n)), fc.double({ noNaN: true }),
      fc.option(fc.string({ unit: 'grapheme', maxLength: 20 })), fc.uint8Array({ maxLength: 40 }), fc.boolean(),
      (i8, i16, u16, i32, i64, f64, text, bytes, flexible) => {
        const writer = new ProtocolWriter(8);
        writer.int8(i8); writer.int16(i16); writer.uint16(u16); writer.int32(i32); writer.int64(i64); writer.float64(f64);
        writer.varint(i32); writer.uvarint(i32 >>> 0); writer.nullableString(text, flexible); writer.nullableBytes(Buffer.from(bytes), flexible);
        const reader = new ProtocolReader(bytesOf(writer));
        expect([reader.int8(), reader.int16(), reader.uint16(), reader.int32(), reader.int64(), reader.float64()]).toEqual([i8, i16, u16, i32, i64, f64]);
        expect([reader.varint(), reader.uvarint()]).toEqual([i32, i32 >>> 0]);
        expect(reader.nullableString(flexible)).toBe(text);
        expect(reader.nullableBytes(flexible)).toEqual(Buffer.from(bytes));
        reader.expectEnd('test');
      },
    ), { numRuns: 200 });
  });

  it('throws only typed MALFORMED errors on truncation, never RangeError', () => {
    const writer = new ProtocolWriter();
    writer.int64(123456789012); writer.uint16(7); writer.float64(1.5);
    const full = bytesOf(writer);
    for (let length = 0; length < full.length; length++) {
      const reader = new ProtocolReader(full.subarray(0, length));
      expect(codeOf(() => { reader.int64(); reader.uint16(); reader.float64(); })).toBe(ProtocolErrorCode.MALFORMED);
    }
  });

  it('bounds an array count by the bytes left before the caller allocates', () => {
    const writer = new ProtocolWriter();
    writer.int32(1000);
    writer.raw(Buffer.alloc(3999));
    expect(codeOf(() => new ProtocolReader(bytesOf(writer)).arrayLength(false, 4))).toBe(ProtocolErrorCode.MALFORMED);
  });

  it('returns bytes as a zero-copy slice of the frame', () => {
    const frame = Buffer.from([0, 0, 0, 2, 9, 8]);
    const value = new ProtocolReader(frame).bytes(false);
    frame[4] = 7;
    expect(value[0]).toBe(7);
  });
});
