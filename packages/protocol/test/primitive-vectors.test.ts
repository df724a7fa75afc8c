// ProtocolReader / ProtocolWriter primitives: round trips against the
// writer, hand-made byte vectors, and every rejection path (moved from the
// broker with the reader and writer; primitives.test.ts covers uint16,
// float64 and the zero-copy slices).

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSeglogError } from '@seglog/common';
import { ProtocolReader, ProtocolWriter } from '../src/index.js';
import { concatParts } from './support/bytes.js';

const int8 = fc.integer({ min: -128, max: 127 });
const int16 = fc.integer({ min: -32768, max: 32767 });
const int32 = fc.integer({ min: -2147483648, max: 2147483647 });
const int64 = fc.maxSafeInteger();
const nstr = fc.option(fc.string({ unit: 'grapheme', maxLength: 12 }), { nil: null });
const uuid = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('hex'));

function written(fill: (w: ProtocolWriter) => void): Buffer {
  const w = new ProtocolWriter(1); // capacity 1 forces every growth path
  fill(w);
  return concatParts(w.finish().parts);
}

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isSeglogError(error)) return error.code;
    throw error;
  }
  return 'no error';
}

describe('round trips', () => {
  it('fixed-width integers, bool, uuid', () => {
    fc.assert(fc.property(int8, int16, int32, int64, fc.boolean(), uuid, (a, b, c, d, e, f) => {
      const r = new ProtocolReader(written((w) => { w.int8(a); w.int16(b); w.int32(c); w.int64(d); w.bool(e); w.uuid(f); }));
      expect([r.int8(), r.int16(), r.int32(), r.int64(), r.bool(), r.uuid()]).toEqual([a, b, c, d, e, f]);
      r.expectEnd('values');
    }));
  });

  it('varints, strings and bytes in both encodings', () => {
    const u32 = fc.integer({ min: 0, max: 0xffffffff });
    fc.assert(fc.property(u32, int32, nstr, fc.boolean(), fc.option(fc.uint8Array(), { nil: null }), (u, s, text, flexible, raw) => {
      const data = raw === null ? null : Buffer.from(raw);
      const r = new ProtocolReader(written((w) => {
        w.uvarint(u); w.varint(s); w.nullableString(text, flexible); w.nullableBytes(data, flexible);
      }));
      expect(r.uvarint()).toBe(u);
      expect(r.varint()).toBe(s);
      expect(r.nullableString(flexible)).toBe(text);
      expect(r.nullableBytes(flexible)).toEqual(data);
      r.expectEnd('values');
    }));
  });

  it('int64 edges encode as two 32-bit halves', () => {
    const cases: Array<[number, string]> = [
      [-1, 'ffffffffffffffff'], [0, '0000000000000000'], [2 ** 32, '0000000100000000'],
      [Number.MAX_SAFE_INTEGER, '001fffffffffffff'], [Number.MIN_SAFE_INTEGER, 'ffe0000000000001'],
    ];
    for (const [value, hex] of cases) {
      expect(written((w) => w.int64(value)).toString('hex')).toBe(hex);
      expect(new ProtocolReader(Buffer.from(hex, 'hex')).int64()).toBe(value);
    }
  });

  it('varint vectors (zigzag, LEB128)', () => {
    expect(written((w) => w.varint(-1)).toString('hex')).toBe('01');
    expect(written((w) => w.varint(1)).toString('hex')).toBe('02');
    expect(written((w) => w.uvarint(300)).toString('hex')).toBe('ac02');
    expect(written((w) => w.uvarint(0xffffffff)).toString('hex')).toBe('ffffffff0f');
    expect(written((w) => w.varint(-2147483648)).toString('hex')).toBe('ffffffff0f');
  });
});

describe('rejections are typed', () => {
  it('int64 outside the safe range', () => {
    expect(codeOf(() => new ProtocolReader(Buffer.from('0020000000000000', 'hex')).int64())).toBe('SEGLOG_ERR_PROTOCOL_UNSAFE_INTEGER');
    expect(codeOf(() => new ProtocolReader(Buffer.from('ffe0000000000000', 'hex')).int64())).toBe('SEGLOG_ERR_PROTOCOL_UNSAFE_INTEGER');
    expect(codeOf(() => new ProtocolReader(Buffer.from('8000000000000000', 'hex')).int64())).toBe('SEGLOG_ERR_PROTOCOL_UNSAFE_INTEGER');
    // Request offsets and timestamps saturate instead (Kafka answers them); the cursor still moves 8 bytes.
    // 2^62, −2^63, ±(2^53 − 1) themselves, and 2^53 (the first unsafe value).
    const saturated = new ProtocolReader(Buffer.from('4000000000000000' + '8000000000000000' + '001fffffffffffff' + 'ffe0000000000001' + '0020000000000000', 'hex'));
    expect([saturated.int64Saturated(), saturated.int64Saturated(), saturated.int64Saturated(), saturated.int64Saturated(), saturated.int64Saturated()])
      .toEqual([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]);
    saturated.expectEnd('saturated');
    expect(codeOf(() => new ProtocolReader(Buffer.from('40000000000000', 'hex')).int64Saturated())).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
  });

  it('varints: overflow past 32 bits, longer than 5 bytes, truncated', () => {
    expect(codeOf(() => new ProtocolReader(Buffer.from('ffffffff1f', 'hex')).uvarint())).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
    expect(codeOf(() => new ProtocolReader(Buffer.from('8080808080', 'hex')).uvarint())).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
    expect(codeOf(() => new ProtocolReader(Buffer.from('80', 'hex')).uvarint())).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
  });

  it('lengths: negative, beyond the frame, null where not nullable', () => {
    expect(codeOf(() => new ProtocolReader(Buffer.from('fffe', 'hex')).nullableString(false))).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
    expect(codeOf(() => new ProtocolReader(Buffer.from('000561', 'hex')).string(false))).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
    expect(codeOf(() => new ProtocolReader(Buffer.from('ffff', 'hex')).string(false))).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
    expect(codeOf(() => new ProtocolReader(Buffer.from('00', 'hex')).string(true))).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
    expect(codeOf(() => new ProtocolReader(Buffer.from('fffffffe', 'hex')).nullableBytes(false))).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
    expect(codeOf(() => new ProtocolReader(Buffer.from('7fffffff00', 'hex')).nullableBytes(false))).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
  });

  it('an array count is bounded by the remaining bytes before anything is allocated', () => {
    // 2^31 − 1 int32 elements claimed by a 12-byte frame: rejected at the count, with context.
    const r = new ProtocolReader(Buffer.from('7fffffff0000000100000002', 'hex'));
    let caught: unknown;
    try { r.arrayLength(false, 4); } catch (error) { caught = error; }
    expect(isSeglogError(caught) && caught.code).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
    expect(isSeglogError(caught) && caught.context).toMatchObject({ count: 2147483647, remaining: 8 });
    // Exactly as many as fit is accepted.
    expect(new ProtocolReader(Buffer.from('0000000200000001 00000002'.replace(/ /g, ''), 'hex')).arrayLength(false, 4)).toBe(2);
    expect(codeOf(() => new ProtocolReader(Buffer.from('ffffffff', 'hex')).arrayLength(false, 4))).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
    expect(new ProtocolReader(Buffer.from('ffffffff', 'hex')).nullableArrayLength(false, 4)).toBe(-1);
    expect(codeOf(() => new ProtocolReader(Buffer.from('fffffffe', 'hex')).nullableArrayLength(false, 4))).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
  });

  it('tagged fields: unknown ones skipped, known ones parsed, order and sizes enforced', () => {
    // two tags: 0 → compact string "ab", 5 → 3 opaque bytes; then a trailing int8.
    const ok = Buffer.from('02' + '00' + '03' + '036162' + '05' + '03' + 'aabbcc' + '07', 'hex');
    const seen: number[] = [];
    const r = new ProtocolReader(ok);
    let text: string | null = null;
    r.taggedFields(true, (reader, tag, size) => {
      seen.push(tag);
      if (tag === 0) text = reader.nullableString(true);
      else reader.skip(size);
    });
    expect(seen).toEqual([0, 5]);
    expect(text).toBe('ab');
    expect(r.int8()).toBe(7);
    const skipping = new ProtocolReader(ok);
    skipping.taggedFields(true);
    expect(skipping.int8()).toBe(7);
    // out of order, repeated, oversized, and a handler that reads past its field
    expect(codeOf(() => new ProtocolReader(Buffer.from('02050100000100', 'hex')).taggedFields(true))).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
    expect(codeOf(() => new ProtocolReader(Buffer.from('02010100010100', 'hex')).taggedFields(true))).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
    expect(codeOf(() => new ProtocolReader(Buffer.from('010009aa', 'hex')).taggedFields(true))).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
    expect(codeOf(() => new ProtocolReader(Buffer.from('010001aabbccdd', 'hex')).taggedFields(true, (reader) => { reader.int32(); })))
      .toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
    expect(codeOf(() => new ProtocolReader(Buffer.from('010002aabb', 'hex')).taggedFields(true, (reader) => { reader.int8(); })))
      .toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
  });

  it('every truncation of a value throws MALFORMED, never RangeError', () => {
    const full = written((w) => { w.int16(1); w.int32(2); w.int64(3); w.uuid('00'.repeat(16)); w.string('héllo', false); w.string('x', true); });
    for (let n = 0; n < full.length; n++) {
      const r = new ProtocolReader(full.subarray(0, n));
      expect(codeOf(() => { r.int16(); r.int32(); r.int64(); r.uuid(); r.string(false); r.string(true); })).toBe('SEGLOG_ERR_PROTOCOL_MALFORMED');
    }
  });
});

describe('writer', () => {
  it('reset() never overwrites bytes handed out by finish()', () => {
    const w = new ProtocolWriter(64);
    w.int32(0x11111111);
    const first = w.finish().parts[0] as Buffer;
    w.int32(0x22222222);
    const second = w.finish().parts[0] as Buffer;
    expect(first.toString('hex')).toBe('11111111');
    expect(second.toString('hex')).toBe('22222222');
  });
});
