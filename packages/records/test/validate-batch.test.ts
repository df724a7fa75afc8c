// validateBatch: every leader-side rule with its code, Kafka error and rule
// name, and the order in which they apply (the earlier rule wins when a batch
// breaks two).
import { describe, expect, it } from 'vitest';
import { buildBatch, Codec, RecordBatch, validateBatch, type ValidateBatchOptions } from '../src/index.js';
import { expectRecordsError, rawBatch, rawRecord, T0, vector, zz, type RawHeader } from './helpers.js';

const MAX = 1_048_588;
const opts: ValidateBatchOptions = { maxMessageBytes: MAX };

const TOO_LARGE = ['SEGLOG_ERR_RECORDS_TOO_LARGE', 'MESSAGE_TOO_LARGE'] as const;
const CORRUPT = ['SEGLOG_ERR_RECORDS_CORRUPT', 'CORRUPT_MESSAGE'] as const;
const CRC = ['SEGLOG_ERR_RECORDS_CRC_MISMATCH', 'CORRUPT_MESSAGE'] as const;
const INVALID = ['SEGLOG_ERR_RECORDS_INVALID_RECORD', 'INVALID_RECORD'] as const;
const CODEC = ['SEGLOG_ERR_RECORDS_UNSUPPORTED_CODEC', 'UNSUPPORTED_COMPRESSION_TYPE'] as const;
const TIMESTAMP = ['SEGLOG_ERR_RECORDS_INVALID_TIMESTAMP', 'INVALID_TIMESTAMP'] as const;

const recordA = rawRecord({ key: [0x61], value: [1, 2, 3] });
const recordB = rawRecord({ key: [0x62], value: [4], tsDelta: zz(10) });
const goodPayload = [...recordA, ...recordB];

describe('validateBatch accepts', () => {
  it('a producer batch and summarises it', () => {
    const buf = buildBatch({
      producerId: 4, producerEpoch: 2, baseSequence: 0x7fffffff, transactional: true,
      records: [{ key: 'a', value: 'x', timestamp: T0 + 5 }, { key: 'b', timestamp: T0 + 9 }, { key: 'c', timestamp: T0 + 9 }],
    });
    const s = validateBatch(buf, opts);
    expect(s.batch).toBeInstanceOf(RecordBatch);
    expect(s.batch.buffer).toBe(buf);
    const { batch: _batch, ...rest } = s;
    expect(rest).toEqual({
      sizeInBytes: buf.length, recordsCount: 3, lastOffsetDelta: 2, compression: 0, recordsBytes: buf.length - 61,
      maxTimestamp: T0 + 9, maxTimestampIndex: 1, offsetDeltasConsecutive: true, timestampType: 'CreateTime',
      producerId: 4, producerEpoch: 2, baseSequence: 0x7fffffff, lastSequence: 1, isTransactional: true,
    });
  });
  it('fixture data vectors 1-3', () => {
    for (const name of ['single-record', 'three-records-with-header', 'idempotent']) {
      expect(validateBatch(vector(name), opts).recordsCount).toBeGreaterThan(0);
    }
  });
  it('records with timestamp -1 regardless of bounds, and reports max -1', () => {
    const buf = buildBatch({ baseTimestamp: -1, records: [{ value: 'a' }, { value: 'b' }] });
    const s = validateBatch(buf, { ...opts, now: T0, timestampBeforeMaxMs: 0, timestampAfterMaxMs: 0 });
    expect([s.maxTimestamp, s.maxTimestampIndex]).toEqual([-1, -1]);
  });
  it('a batch exactly at maxMessageBytes', () => {
    const buf = vector('single-record');
    expect(validateBatch(buf, { maxMessageBytes: buf.length }).sizeInBytes).toBe(72);
  });
  it('non-consecutive offset deltas (Kafka does), flagging them', () => {
    const buf = rawBatch(Buffer.from([...recordA, ...rawRecord({ offsetDelta: 7, value: [1] })]), { recordsCount: 2 });
    expect(validateBatch(buf, opts).offsetDeltasConsecutive).toBe(false);
  });
});

describe('validateBatch rules, one at a time', () => {
  it('1. size above maxMessageBytes → MESSAGE_TOO_LARGE, before anything else is checked', () => {
    const buf = vector('single-record');
    const err = expectRecordsError(() => validateBatch(buf, { maxMessageBytes: 71 }), ...TOO_LARGE, 'max-message-bytes');
    expect(err.context).toMatchObject({ expected: 71, actual: 72 });
    // The declared size counts, even when the buffer is garbage beyond the length field.
    const claim = Buffer.alloc(12);
    claim.writeInt32BE(0x7fffffff - 12, 8);
    expectRecordsError(() => validateBatch(claim, opts), ...TOO_LARGE, 'max-message-bytes');
  });
  it('2. framing → CORRUPT_MESSAGE', () => {
    const v = vector('single-record');
    expectRecordsError(() => validateBatch(Buffer.alloc(0), opts), ...CORRUPT, 'truncated');
    expectRecordsError(() => validateBatch(v.subarray(0, 11), opts), ...CORRUPT, 'truncated');
    expectRecordsError(() => validateBatch(v.subarray(0, 71), opts), ...CORRUPT, 'truncated');
    const short = Buffer.from(v);
    short.writeInt32BE(13, 8);
    expectRecordsError(() => validateBatch(short, opts), ...CORRUPT, 'batch-length');
    short.writeInt32BE(-5, 8);
    expectRecordsError(() => validateBatch(short, opts), ...CORRUPT, 'batch-length');
    const small = Buffer.from(v.subarray(0, 60));
    small.writeInt32BE(48, 8);
    expectRecordsError(() => validateBatch(small, opts), ...CORRUPT, 'size');
    const magic = Buffer.from(v);
    magic[16] = 3;
    expectRecordsError(() => validateBatch(magic, opts), ...CORRUPT, 'magic');
    magic[16] = 1;
    expectRecordsError(() => validateBatch(magic, opts), 'SEGLOG_ERR_RECORDS_UNSUPPORTED_MAGIC', 'CORRUPT_MESSAGE', 'magic');
  });
  it('3. CRC-32C mismatch → CORRUPT_MESSAGE', () => {
    const buf = Buffer.from(vector('single-record'));
    buf[71] = buf[71]! ^ 0x01;
    const err = expectRecordsError(() => validateBatch(buf, opts), ...CRC, 'crc');
    expect(err.context).toMatchObject({ position: 17, actual: 0xce68b28d });
  });
  const header: [string, RawHeader, readonly [string, string], string][] = [
    ['baseOffset != 0', { baseOffset: 1n }, INVALID, 'base-offset'],
    ['undefined attribute bits', { attributes: 0x100 }, INVALID, 'attributes'],
    ['lastOffsetDelta < 0', { lastOffsetDelta: -1 }, INVALID, 'last-offset-delta'],
    ['recordsCount 0', { recordsCount: 0, lastOffsetDelta: 1 }, INVALID, 'records-count'],
    ['lastOffsetDelta + 1 != recordsCount', { lastOffsetDelta: 2 }, INVALID, 'records-count'],
    ['codec 5', { attributes: 5 }, CODEC, 'codec'],
    ['codec 7', { attributes: 7 }, CODEC, 'codec'],
    ['control batch', { attributes: 0x30 }, INVALID, 'control-batch'],
    ['producerId >= 0 with baseSequence -1', { producerId: 0n, baseSequence: -1 }, INVALID, 'base-sequence'],
    ['unsafe baseTimestamp', { baseTimestamp: 2n ** 60n }, INVALID, 'unsafe-integer'],
    ['unsafe producerId', { producerId: 2n ** 62n, baseSequence: 0 }, INVALID, 'unsafe-integer'],
  ];
  it.each(header)('4. %s', (_name, h, [code, kafka], rule) => {
    const buf = rawBatch(Buffer.from(goodPayload), { recordsCount: 2, lastOffsetDelta: 1, ...h });
    expectRecordsError(() => validateBatch(buf, opts), code, kafka, rule);
  });
  it('4. exactly one batch: trailing bytes → INVALID_RECORD', () => {
    const one = vector('single-record');
    expectRecordsError(() => validateBatch(Buffer.concat([one, one]), opts), ...INVALID, 'batch-count');
    expectRecordsError(() => validateBatch(Buffer.concat([one, Buffer.from([0])]), opts), ...INVALID, 'batch-count');
  });
  it('5. malformed records → INVALID_RECORD', () => {
    const bad = rawBatch(Buffer.from([...recordA, ...rawRecord({ tail: zz(40) })]), { recordsCount: 2 });
    expectRecordsError(() => validateBatch(bad, opts), ...INVALID, 'headers-count');
    const leftover = rawBatch(Buffer.from([...recordA, ...recordB, ...recordB]), { recordsCount: 2 });
    expectRecordsError(() => validateBatch(leftover, opts), ...INVALID, 'records-remaining');
  });
  it('6. LogAppendTime from a producer → INVALID_TIMESTAMP', () => {
    const buf = rawBatch(Buffer.from(goodPayload), { recordsCount: 2, attributes: 0x08 });
    expectRecordsError(() => validateBatch(buf, opts), ...TIMESTAMP, 'log-append-time');
    expectRecordsError(() => validateBatch(buf, { ...opts, messageTimestampType: 'LogAppendTime' }), ...TIMESTAMP, 'log-append-time');
  });
  it('6. timestamp bounds on a CreateTime topic (before and after, inclusive limits)', () => {
    const buf = buildBatch({ records: [{ value: 'a', timestamp: T0 - 100 }, { value: 'b', timestamp: T0 + 50 }] });
    const ok = { ...opts, now: T0, timestampBeforeMaxMs: 100, timestampAfterMaxMs: 50 };
    expect(validateBatch(buf, ok).maxTimestamp).toBe(T0 + 50);
    const before = expectRecordsError(() => validateBatch(buf, { ...ok, timestampBeforeMaxMs: 99 }), ...TIMESTAMP, 'timestamp-bounds');
    expect(before.context).toMatchObject({ recordIndex: 0, actual: T0 - 100 });
    const after = expectRecordsError(() => validateBatch(buf, { ...ok, timestampAfterMaxMs: 49 }), ...TIMESTAMP, 'timestamp-bounds');
    expect(after.context).toMatchObject({ recordIndex: 1, actual: T0 + 50 });
    // A LogAppendTime topic does not bound producer timestamps (the leader restamps them).
    expect(validateBatch(buf, { ...ok, timestampBeforeMaxMs: 0, timestampAfterMaxMs: 0, messageTimestampType: 'LogAppendTime' }).recordsCount).toBe(2);
  });
  it('6. null key on a compacted topic → INVALID_RECORD', () => {
    const buf = buildBatch({ records: [{ key: 'k', value: 'a', timestamp: T0 }, { key: null, value: 'b', timestamp: T0 }] });
    expect(validateBatch(buf, opts).recordsCount).toBe(2);
    const err = expectRecordsError(() => validateBatch(buf, { ...opts, compacted: true }), ...INVALID, 'null-key');
    expect(err.context['recordIndex']).toBe(1);
  });
});

describe('validateBatch order: the earlier rule wins', () => {
  // Each violation, in the documented order; pairs touching the same field are skipped.
  interface Violation { name: string; fields: string[]; h?: RawHeader; payload?: number[]; o?: Partial<ValidateBatchOptions>; expect: readonly [string, string, string] }
  const violations: Violation[] = [
    { name: 'too large', fields: ['opts.max'], o: { maxMessageBytes: 61 }, expect: [...TOO_LARGE, 'max-message-bytes'] },
    { name: 'crc', fields: ['crc'], h: { crc: 1 }, expect: [...CRC, 'crc'] },
    { name: 'base offset', fields: ['baseOffset'], h: { baseOffset: 3n }, expect: [...INVALID, 'base-offset'] },
    { name: 'attributes', fields: ['attr'], h: { attributes: 0x200 }, expect: [...INVALID, 'attributes'] },
    { name: 'last offset delta', fields: ['lod'], h: { lastOffsetDelta: -1 }, expect: [...INVALID, 'last-offset-delta'] },
    { name: 'records count', fields: ['count', 'payload'], h: { recordsCount: 0 }, expect: [...INVALID, 'records-count'] },
    { name: 'codec', fields: ['attr.codec'], h: { attributes: 6 }, expect: [...CODEC, 'codec'] },
    { name: 'control', fields: ['attr.control'], h: { attributes: 0x20 }, expect: [...INVALID, 'control-batch'] },
    { name: 'sequence', fields: ['pid'], h: { producerId: 9n, baseSequence: -1 }, expect: [...INVALID, 'base-sequence'] },
    { name: 'malformed record', fields: ['payload'], payload: [...recordA, ...rawRecord({ tail: zz(40) })], expect: [...INVALID, 'headers-count'] },
    { name: 'log append time', fields: ['attr.lat'], h: { attributes: 0x08 }, expect: [...TIMESTAMP, 'log-append-time'] },
    { name: 'null key', fields: ['payload', 'opts.compacted'], payload: [...rawRecord({ value: [1] }), ...recordB], o: { compacted: true }, expect: [...INVALID, 'null-key'] },
  ];
  function make(vs: Violation[]): { buf: Buffer; o: ValidateBatchOptions } {
    const h: RawHeader = { recordsCount: 2, lastOffsetDelta: 1 };
    let payload = goodPayload;
    let o: ValidateBatchOptions = { ...opts };
    for (const v of vs) {
      for (const [k, val] of Object.entries(v.h ?? {})) {
        if (k === 'attributes') h.attributes = (h.attributes ?? 0) | (val as number);
        else (h as Record<string, unknown>)[k] = val;
      }
      if (v.payload !== undefined) payload = v.payload;
      o = { ...o, ...v.o };
    }
    return { buf: rawBatch(Buffer.from(payload), h), o };
  }
  const pairs: [string, string, Violation, Violation][] = [];
  for (let i = 0; i < violations.length; i++) {
    for (let j = i + 1; j < violations.length; j++) {
      const a = violations[i]!;
      const b = violations[j]!;
      if (a.fields.some((f) => b.fields.includes(f))) continue;
      pairs.push([a.name, b.name, a, b]);
    }
  }
  it('covers enough pairs', () => expect(pairs.length).toBeGreaterThan(50));
  it.each(pairs)('%s before %s', (_a, _b, a, b) => {
    const single = make([b]);
    expectRecordsError(() => validateBatch(single.buf, single.o), ...b.expect);
    const both = make([a, b]);
    expectRecordsError(() => validateBatch(both.buf, both.o), ...a.expect);
  });
  it('a timestamp error on any record beats a null key on another (Kafka collects record errors)', () => {
    const payload = [...rawRecord({ value: [1] }), ...rawRecord({ key: [1], value: [1], tsDelta: zz(1000) })];
    const buf = rawBatch(Buffer.from(payload), { recordsCount: 2, baseTimestamp: BigInt(T0) });
    const o = { ...opts, compacted: true, now: T0, timestampAfterMaxMs: 10 };
    expectRecordsError(() => validateBatch(buf, o), ...TIMESTAMP, 'timestamp-bounds');
    // On the same record the key check comes first and skips the timestamp check.
    const same = rawBatch(Buffer.from([...rawRecord({ value: [1], tsDelta: zz(1000) }), ...recordB]), { recordsCount: 2 });
    expectRecordsError(() => validateBatch(same, o), ...INVALID, 'null-key');
  });
  it('a malformed record beats a timestamp error on an earlier record', () => {
    const payload = [...rawRecord({ value: [1], tsDelta: zz(1000) }), ...rawRecord({ tail: zz(40) })];
    const buf = rawBatch(Buffer.from(payload), { recordsCount: 2 });
    expectRecordsError(() => validateBatch(buf, { ...opts, now: T0, timestampAfterMaxMs: 10 }), ...INVALID, 'headers-count');
  });
});

describe('validateBatch with compression', () => {
  it('checks maxMessageBytes against the compressed size, before decompressing', () => {
    const codecs = [Codec.gzip, Codec.snappy, Codec.lz4, Codec.zstd];
    for (const codec of codecs) {
      let buf: Buffer;
      try {
        buf = buildBatch({ compression: codec, records: [{ value: Buffer.alloc(100_000), timestamp: T0 }] });
      } catch (e) {
        if (String(e).includes('not implemented')) continue; // codecs not landed yet
        throw e;
      }
      expect(buf.length).toBeLessThan(10_000);
      expect(validateBatch(buf, { maxMessageBytes: buf.length }).recordsBytes).toBeGreaterThan(100_000);
      expectRecordsError(() => validateBatch(buf, { maxMessageBytes: buf.length - 1 }), ...TOO_LARGE, 'max-message-bytes');
      const limited = (): unknown => validateBatch(buf, { maxMessageBytes: MAX, maxDecompressedBytes: 50_000 });
      expect(limited).toThrowError(expect.objectContaining({ code: 'SEGLOG_ERR_RECORDS_DECOMPRESSION_LIMIT' }));
    }
  });
});
