// Strict record decoding: varints, lengths, counts, exact consumption.
import { describe, expect, it } from 'vitest';
import { buildBatch, RecordBatch, RecordCursor } from '../src/index.js';
import { varintSize, varlongSize, writeVarint, writeVarlong } from '../src/internal/varint.js';
import { expectRecordsError, rawBatch, rawRecord, T0, zz } from './helpers.js';

const INVALID = ['SEGLOG_ERR_RECORDS_INVALID_RECORD', 'INVALID_RECORD'] as const;

function parse(payload: number[], recordsCount = 1, header: Parameters<typeof rawBatch>[1] = {}): ReturnType<RecordBatch['toRecords']> {
  return new RecordBatch(rawBatch(Buffer.from(payload), { recordsCount, ...header })).toRecords();
}

function expectInvalid(payload: number[], rule: string, recordsCount = 1): void {
  expectRecordsError(() => parse(payload, recordsCount), ...INVALID, rule);
}

describe('varint encoding (reference §3 table)', () => {
  const table: [number, string][] = [
    [0, '00'], [-1, '01'], [1, '02'], [-2, '03'], [63, '7e'], [64, '8001'], [-64, '7f'], [-65, '8101'], [300, 'd804'],
    [0x7fffffff, 'feffffff0f'], [-0x80000000, 'ffffffff0f'],
  ];
  it.each(table)('varint %d = %s', (n, hex) => {
    const buf = Buffer.alloc(5);
    const end = writeVarint(buf, 0, n);
    expect(buf.subarray(0, end).toString('hex')).toBe(hex);
    expect(varintSize(n)).toBe(end);
  });
  it('varlong 1700000000000 = 80a0abfef962', () => {
    const buf = Buffer.alloc(10);
    const end = writeVarlong(buf, 0, 1_700_000_000_000);
    expect(buf.subarray(0, end).toString('hex')).toBe('80a0abfef962');
    expect(varlongSize(1_700_000_000_000)).toBe(6);
  });
  it('varlong extremes and small values match the 64-bit zig-zag definition', () => {
    for (const n of [0, -1, 1, 63, -64, 64, -65, 2 ** 31, -(2 ** 31) - 1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]) {
      const buf = Buffer.alloc(10);
      const end = writeVarlong(buf, 0, n);
      let u = (BigInt(n) << 1n) ^ (BigInt(n) >> 63n);
      u = BigInt.asUintN(64, u);
      const want: number[] = [];
      while (u >= 0x80n) { want.push(Number(u & 0x7fn) | 0x80); u >>= 7n; }
      want.push(Number(u));
      expect([...buf.subarray(0, end)], String(n)).toEqual(want);
      expect(varlongSize(n)).toBe(end);
    }
  });
});

describe('record decoding', () => {
  it('decodes timestamp deltas across the safe range, including non-minimal encodings', () => {
    const base = { baseTimestamp: 0n };
    // 2^53 - 1 as varlong: zig-zag 2^54 - 2.
    const maxSafe = [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f];
    expect(parse(rawRecord({ tsDelta: maxSafe }), 1, base)[0]!.timestamp).toBe(Number.MAX_SAFE_INTEGER);
    const minSafe = [0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f];
    expect(parse(rawRecord({ tsDelta: minSafe }), 1, base)[0]!.timestamp).toBe(Number.MIN_SAFE_INTEGER);
    // 0 encoded in 10 bytes (Kafka accepts non-minimal encodings up to 10 bytes).
    expect(parse(rawRecord({ tsDelta: [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00] }), 1, base)[0]!.timestamp).toBe(0);
    // offsetDelta 5 in 5 bytes.
  });
  it('rejects varlongs that are too long or outside the safe range', () => {
    expectInvalid(rawRecord({ tsDelta: [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00] }), 'varlong');
    // -(2^53): zig-zag 2^54 - 1.
    expectInvalid(rawRecord({ tsDelta: [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f] }), 'unsafe-integer');
    // 2^53: zig-zag 2^54.
    expectInvalid(rawRecord({ tsDelta: [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20] }), 'unsafe-integer');
    expectInvalid(rawRecord({ tsDelta: [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01] }), 'unsafe-integer');
    // A safe delta whose sum with baseTimestamp is not safe.
    expectRecordsError(() => parse(rawRecord({ tsDelta: [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f] }), 1, { baseTimestamp: 1n }),
      ...INVALID, 'unsafe-integer');
  });
  it('rejects varints longer than 5 bytes or overflowing 32 bits', () => {
    const body = (offsetDelta: number[]): number[] => {
      const b = [0, 0, ...offsetDelta, 1, 1, 0];
      return [...zz(b.length), ...b];
    };
    expect(parse(body([0x8a, 0x80, 0x80, 0x80, 0x00]))[0]!.offset).toBe(5);
    expect(parse(body([0xfe, 0xff, 0xff, 0xff, 0x0f]))[0]!.offset).toBe(0x7fffffff);
    expectInvalid(body([0x80, 0x80, 0x80, 0x80, 0x80, 0x00]), 'varint');
    expectInvalid(body([0x80, 0x80, 0x80, 0x80, 0x10]), 'varint');
  });
  it('rejects every malformed length', () => {
    expectInvalid([...zz(-1), 0, 0, 0, 0, 0, 0], 'record-length');
    expectInvalid([...zz(50), 0, 0, 0, 0, 0, 0, 0], 'record-length');
    expectInvalid(rawRecord({ key: [1, 2] }).map((b, i) => (i === 4 ? zz(-2)[0]! : b)), 'key-length');
    expectInvalid(rawRecord({ key: [1, 2] }).map((b, i) => (i === 4 ? zz(9)[0]! : b)), 'key-length');
    expectInvalid(rawRecord({ value: [1, 2] }).map((b, i) => (i === 5 ? zz(-3)[0]! : b)), 'value-length');
    expectInvalid(rawRecord({ tail: zz(-1) }), 'headers-count');
    expectInvalid(rawRecord({ tail: zz(3) }), 'headers-count');
    expectInvalid(rawRecord({ tail: [...zz(1), ...zz(-1), ...zz(-1)] }), 'header-key-length');
    expectInvalid(rawRecord({ tail: [...zz(1), ...zz(1), 0x61, ...zz(5)] }), 'header-value-length');
    expectInvalid(rawRecord({ tail: [...zz(1), ...zz(1), 0x61, ...zz(-2)] }), 'header-value-length');
  });
  it('requires the declared record length to match what its fields use', () => {
    const ok = rawRecord({ value: [1] });
    const longer = [ok[0]! + 2, ...ok.slice(1), 0];
    expectInvalid(longer, 'record-length');
    const shorter = [ok[0]! - 2, ...ok.slice(1)];
    expectInvalid(shorter, 'underflow');
  });
  it('reads headers with null values and utf-8 keys', () => {
    const key = [...Buffer.from('ключ')];
    const tail = [...zz(2), ...zz(key.length), ...key, ...zz(-1), ...zz(1), 0x6b, ...zz(2), 7, 8];
    const [r] = parse(rawRecord({ tail }));
    expect(r!.headers.map((h) => [h.key, h.value === null ? null : [...h.value]])).toEqual([['ключ', null], ['k', [7, 8]]]);
  });
  it('needs exactly recordsCount records that use the payload up', () => {
    const one = rawRecord({ value: [1] });
    expect(parse([...one, ...one], 2)).toHaveLength(2);
    expectInvalid([...one, ...one], 'records-remaining', 1);
    expectInvalid([...one, ...one, 0], 'records-remaining', 2);
    const big = rawRecord({ value: [1, 2, 3, 4, 5, 6, 7, 8] });
    expectInvalid([...big, ...big], 'premature-eof', 3);
    expectInvalid([...big, ...big, ...big.slice(0, 3)], 'record-length', 3);
    expectInvalid([...one], 'records-count', -1);
    // More records than 7-byte minimums fit in the payload: rejected before any is read.
    expectInvalid([...one], 'records-count', 2);
    expect(() => parse([], 0)).not.toThrow();
    expectInvalid([0], 'records-remaining', 0);
  });
  it('reports the record index and position in the error context', () => {
    const one = rawRecord({ value: [1] });
    const err = expectRecordsError(() => parse([...one, ...rawRecord({ tail: zz(9) })], 2), ...INVALID, 'headers-count');
    expect(err.context['recordIndex']).toBe(1);
    expect(typeof err.context['position']).toBe('number');
  });
});

describe('RecordCursor', () => {
  const bytes = buildBatch({
    baseOffset: 40, producerId: 9, producerEpoch: 1, baseSequence: 0x7ffffffe, baseTimestamp: T0,
    records: [{ key: 'a', value: 'x', timestampDelta: -5 }, { key: null, value: 'yy' }, { value: null, timestampDelta: 7 }],
  });
  it('exposes the current record without materialising it, and is reusable', () => {
    const cursor = new RecordCursor();
    const seen: unknown[] = [];
    for (let round = 0; round < 2; round++) {
      cursor.open(new RecordBatch(bytes));
      while (cursor.next()) {
        seen.push([cursor.index, cursor.offset, cursor.offsetDelta, cursor.timestamp, cursor.timestampDelta, cursor.sequence,
          cursor.keyLength, cursor.valueLength, cursor.headersCount, cursor.attributes, cursor.recordsLeft]);
      }
      expect(cursor.next()).toBe(false);
    }
    const round = [
      [0, 40, 0, T0 - 5, -5, 0x7ffffffe, 1, 1, 0, 0, 2],
      [1, 41, 1, T0, 0, 0x7fffffff, -1, 2, 0, 0, 1],
      [2, 42, 2, T0 + 7, 7, 0, -1, -1, 0, 0, 0],
    ];
    expect(seen).toEqual([...round, ...round]);
  });
  it('gives key and value as views into the batch buffer', () => {
    const cursor = new RecordBatch(bytes).records();
    cursor.next();
    expect(cursor.key!.buffer).toBe(bytes.buffer);
    expect(cursor.buffer).toBe(bytes);
    expect(bytes.subarray(cursor.valuePosition, cursor.valuePosition + cursor.valueLength).toString()).toBe('x');
    expect(cursor.sizeInBytes).toBe(1 + 8);
  });
  it('a failed cursor reads nothing more until reopened', () => {
    const bad = rawBatch(Buffer.from([...rawRecord({ value: [1, 2, 3, 4, 5, 6, 7, 8] }), ...zz(-1)]), { recordsCount: 2 });
    const cursor = new RecordBatch(bad).records();
    expect(cursor.next()).toBe(true);
    expectRecordsError(() => cursor.next(), ...INVALID, 'record-length');
    expect(cursor.next()).toBe(false);
  });
});
