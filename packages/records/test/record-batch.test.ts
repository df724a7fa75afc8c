// RecordBatch views, in-place patches, framing (nextBatchSize, splitBatches)
// and CRC-32C.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildBatch, crc32c, incrementSequence, nextBatchSize, RecordBatch, splitBatches, validateFollowerBatch,
} from '../src/index.js';
import { capabilities, crc32c as nativeCrc32c } from '@seglog/native';
import { crc32cJs } from '../src/crc32c.js';
import { expectRecordsError, fixCrc, rawBatch, rawRecord, T0, vector } from './helpers.js';

const MAX = 0x7fffffff;

describe('crc32c', () => {
  it('has the CRC-32C check value', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
  });
  it('is unsigned and 0 for no bytes', () => {
    expect(crc32c(new Uint8Array(0))).toBe(0);
    expect(crc32c(Buffer.from([0xff, 0xff, 0xff, 0xff]))).toBeGreaterThan(0);
    expect(crc32c(Buffer.from('a'))).toBe(0xc1d04330);
  });
  it('continues from a seed', () => {
    const a = Buffer.from('12345');
    const b = Buffer.from('6789');
    expect(crc32c(b, crc32c(a))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(Buffer.from('123456789')))).toBe(0xe3069283);
  });
  it('the JavaScript and native implementations agree, on both sides of the size threshold', () => {
    expect(crc32cJs(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32cJs(Buffer.from('6789'), crc32cJs(Buffer.from('12345')))).toBe(0xe3069283);
    fc.assert(fc.property(fc.uint8Array({ maxLength: 600 }), fc.nat({ max: 0xffffffff }), (bytes, seed) => {
      const js = crc32cJs(bytes, seed);
      expect(crc32c(bytes, seed)).toBe(js);
      if (nativeCrc32c !== null) expect(nativeCrc32c(bytes, seed)).toBe(js);
    }), { numRuns: 300 });
    // Where the addon builds (it does in CI), this compares two implementations, not one with itself.
    if (capabilities.loaded) expect(nativeCrc32c).not.toBeNull();
  });
});

describe('RecordBatch views', () => {
  it('views a batch inside a larger buffer without copying', () => {
    const one = vector('single-record');
    const two = vector('idempotent');
    const buf = Buffer.concat([Buffer.from([9, 9, 9]), one, two]);
    const b = new RecordBatch(buf, 3 + one.length);
    expect(b.start).toBe(75);
    expect(b.buffer).toBe(buf);
    expect(b.producerId).toBe(1000);
    expect(b.bytes().equals(two)).toBe(true);
    expect(b.bytes().buffer).toBe(buf.buffer);
    expect(b.isValid()).toBe(true);
    b.reset(buf, 3);
    expect(b.sizeInBytes).toBe(72);
    expect(b.producerId).toBe(-1);
  });
  it('accepts a plain Uint8Array', () => {
    const u8 = new Uint8Array(vector('single-record'));
    expect(new RecordBatch(u8).toRecords()[0]!.value!.toString()).toBe('test');
  });
  it('rejects bytes that are not a complete v2 batch', () => {
    const v = vector('single-record');
    expectRecordsError(() => new RecordBatch(v.subarray(0, 11)), 'SEGLOG_ERR_RECORDS_CORRUPT', 'CORRUPT_MESSAGE', 'truncated');
    expectRecordsError(() => new RecordBatch(v.subarray(0, 71)), 'SEGLOG_ERR_RECORDS_CORRUPT', 'CORRUPT_MESSAGE', 'truncated');
    const short = Buffer.from(v);
    short.writeInt32BE(13, 8);
    expectRecordsError(() => new RecordBatch(short), 'SEGLOG_ERR_RECORDS_CORRUPT', 'CORRUPT_MESSAGE', 'batch-length');
    short.writeInt32BE(40, 8);
    expectRecordsError(() => new RecordBatch(short), 'SEGLOG_ERR_RECORDS_CORRUPT', 'CORRUPT_MESSAGE', 'size');
    const legacy = Buffer.from(v);
    legacy[16] = 1;
    expectRecordsError(() => new RecordBatch(legacy), 'SEGLOG_ERR_RECORDS_UNSUPPORTED_MAGIC', 'CORRUPT_MESSAGE', 'magic');
    legacy[16] = 3;
    expectRecordsError(() => new RecordBatch(legacy), 'SEGLOG_ERR_RECORDS_CORRUPT', 'CORRUPT_MESSAGE', 'magic');
  });
  it('reads int64 fields as safe integers, and rejects unsafe ones with a typed error', () => {
    const b = rawBatch(Buffer.from(rawRecord({ value: [1] })), {
      baseOffset: 2n ** 53n - 1n, producerId: -(2n ** 53n) + 1n, baseTimestamp: -1n, maxTimestamp: 2n ** 40n,
    });
    const view = new RecordBatch(b);
    expect(view.baseOffset).toBe(Number.MAX_SAFE_INTEGER);
    expect(view.producerId).toBe(Number.MIN_SAFE_INTEGER);
    expect(view.baseTimestamp).toBe(-1);
    expect(view.maxTimestamp).toBe(2 ** 40);
    const unsafe = rawBatch(Buffer.alloc(0), { baseOffset: 2n ** 53n, maxTimestamp: -(2n ** 53n), recordsCount: 0 });
    const u = new RecordBatch(unsafe);
    expectRecordsError(() => u.baseOffset, 'SEGLOG_ERR_RECORDS_INVALID_RECORD', 'INVALID_RECORD', 'unsafe-integer');
    expectRecordsError(() => u.maxTimestamp, 'SEGLOG_ERR_RECORDS_INVALID_RECORD', 'INVALID_RECORD', 'unsafe-integer');
    const edge = new RecordBatch(rawBatch(Buffer.alloc(0), { baseOffset: 2n ** 53n - 1n, lastOffsetDelta: 1, recordsCount: 0 }));
    expectRecordsError(() => edge.lastOffset, 'SEGLOG_ERR_RECORDS_INVALID_RECORD', 'INVALID_RECORD', 'unsafe-integer');
  });
  it('decodes attribute bits and the unknown codec ids', () => {
    const b = new RecordBatch(rawBatch(Buffer.alloc(0), { attributes: 0x7e, recordsCount: 0 }));
    expect([b.timestampType, b.isTransactional, b.isControl, b.hasDeleteHorizon, b.deleteHorizonMs])
      .toEqual(['LogAppendTime', true, true, true, T0]);
    expectRecordsError(() => b.compression, 'SEGLOG_ERR_RECORDS_UNSUPPORTED_CODEC', 'UNSUPPORTED_COMPRESSION_TYPE', 'codec');
    expect(new RecordBatch(rawBatch(Buffer.alloc(0), { attributes: 4, recordsCount: 0 })).compression).toBe(4);
    expect(new RecordBatch(rawBatch(Buffer.alloc(0), { recordsCount: 0 })).deleteHorizonMs).toBe(-1);
  });
  it('computes lastSequence with wrap-around (Kafka incrementSequence)', () => {
    expect(incrementSequence(MAX, 1)).toBe(0);
    expect(incrementSequence(MAX - 5, 10)).toBe(4);
    expect(incrementSequence(-1, 10)).toBe(-1);
    expect(incrementSequence(7, 3)).toBe(10);
    const b = new RecordBatch(rawBatch(Buffer.alloc(0), { baseSequence: MAX - 1, lastOffsetDelta: 3, recordsCount: 0, producerId: 5n }));
    expect(b.lastSequence).toBe(1);
  });
  it('decodes an empty (compacted) batch to no records', () => {
    const b = new RecordBatch(rawBatch(Buffer.alloc(0), { recordsCount: 0, lastOffsetDelta: 4, baseTimestamp: -1n, producerId: 3n, baseSequence: 10 }));
    expect(b.toRecords()).toEqual([]);
    expect([b.lastOffset, b.lastSequence]).toEqual([4, 14]);
  });
});

describe('in-place patches', () => {
  it('setBaseOffset and setLastOffset do not touch the CRC', () => {
    const bytes = Buffer.from(vector('three-records-with-header'));
    const b = new RecordBatch(bytes);
    const crc = b.crc;
    b.setBaseOffset(2 ** 40 + 3);
    expect([b.baseOffset, b.lastOffset, b.crc, b.isValid()]).toEqual([2 ** 40 + 3, 2 ** 40 + 5, crc, true]);
    expect(b.toRecords().map((r) => r.offset)).toEqual([2 ** 40 + 3, 2 ** 40 + 4, 2 ** 40 + 5]);
    b.setLastOffset(102);
    expect([b.baseOffset, b.lastOffset, b.nextOffset, b.crc]).toEqual([100, 102, 103, crc]);
    expect(bytes.readBigInt64BE(0)).toBe(100n);
  });
  it('setPartitionLeaderEpoch does not touch the CRC', () => {
    const bytes = Buffer.from(vector('single-record'));
    const b = new RecordBatch(bytes);
    b.setPartitionLeaderEpoch(77);
    expect([b.partitionLeaderEpoch, b.crc, b.isValid()]).toEqual([77, 0xce68b28d, true]);
    b.setPartitionLeaderEpoch(-1);
    expect(bytes.readInt32BE(12)).toBe(-1);
  });
  it('setMaxTimestamp is a no-op when nothing changes', () => {
    const bytes = Buffer.from(vector('single-record'));
    // A stale CRC proves no recompute happened.
    bytes.writeUInt32BE(0xdeadbeef, 17);
    new RecordBatch(bytes).setMaxTimestamp('CreateTime', T0);
    expect(bytes.readUInt32BE(17)).toBe(0xdeadbeef);
  });
  it('setMaxTimestamp rewrites type and timestamp and recomputes the CRC, keeping baseTimestamp', () => {
    const bytes = Buffer.from(vector('three-records-with-header'));
    const b = new RecordBatch(bytes);
    b.setMaxTimestamp('CreateTime', T0 + 99);
    expect([b.timestampType, b.maxTimestamp, b.baseTimestamp, b.isValid()]).toEqual(['CreateTime', T0 + 99, T0, true]);
    expect(b.toRecords().map((r) => r.timestamp)).toEqual([T0, T0 + 10, T0 + 20]);
    b.setMaxTimestamp('LogAppendTime', T0 + 1000);
    expect([b.attributes, b.isValid()]).toEqual([0x08, true]);
    expect(b.toRecords().map((r) => r.timestamp)).toEqual([T0 + 1000, T0 + 1000, T0 + 1000]);
    b.setMaxTimestamp('CreateTime', T0 + 20);
    expect(bytes.equals(vector('three-records-with-header'))).toBe(true);
  });
  it('setMaxTimestamp keeps the other attribute bits and clears undefined ones', () => {
    const bytes = fixCrc(Buffer.from(vector('commit-marker')));
    bytes.writeUInt16BE(0x8030, 21);
    const b = new RecordBatch(fixCrc(bytes));
    b.setMaxTimestamp('LogAppendTime', T0 + 1);
    expect(b.attributes).toBe(0x38);
    expect(b.isValid()).toBe(true);
  });
});

describe('nextBatchSize and splitBatches', () => {
  const one = vector('single-record');
  const two = vector('three-records-with-header');
  const log = Buffer.concat([one, two]);

  it('frames consecutive batches and ends at the end of data', () => {
    expect(nextBatchSize(log, 0)).toBe(72);
    expect(nextBatchSize(log, 72)).toBe(94);
    expect(nextBatchSize(log, 166)).toBe(0);
    expect(splitBatches(log).map((b) => [b.start, b.sizeInBytes])).toEqual([[0, 72], [72, 94]]);
  });
  it('file mode: <= 17 bytes left or a partial trailing batch is the end, not an error', () => {
    for (let cut = 72; cut < 166; cut++) {
      expect(nextBatchSize(log.subarray(0, cut), 72)).toBe(0);
      expect(splitBatches(log.subarray(0, cut))).toHaveLength(1);
    }
    expect(nextBatchSize(Buffer.alloc(17, 0xff), 0)).toBe(0);
  });
  it('file mode: batchLength < 14 is corrupt, even for a zero header, unless zeroHeaderIsEnd', () => {
    const zeros = Buffer.concat([one, Buffer.alloc(4096)]);
    expectRecordsError(() => nextBatchSize(zeros, 72), 'SEGLOG_ERR_RECORDS_CORRUPT', 'CORRUPT_MESSAGE', 'batch-length');
    expect(nextBatchSize(zeros, 72, { zeroHeaderIsEnd: true })).toBe(0);
    expect(splitBatches(zeros, { zeroHeaderIsEnd: true })).toHaveLength(1);
  });
  it('file mode: bad magic of a complete batch is an error', () => {
    const bad = Buffer.from(log);
    bad[72 + 16] = 7;
    expectRecordsError(() => nextBatchSize(bad, 72), 'SEGLOG_ERR_RECORDS_CORRUPT', 'CORRUPT_MESSAGE', 'magic');
    bad[72 + 16] = 0;
    expectRecordsError(() => splitBatches(bad), 'SEGLOG_ERR_RECORDS_UNSUPPORTED_MAGIC', 'CORRUPT_MESSAGE', 'magic');
    // ... but a partial one just ends the data.
    expect(nextBatchSize(bad.subarray(0, 100), 72)).toBe(0);
  });
  it('memory mode: < 12 bytes is the end; the limit and the magic are checked before completeness', () => {
    expect(nextBatchSize(log.subarray(0, 83), 72, { mode: 'memory' })).toBe(0);
    expect(nextBatchSize(log.subarray(0, 88), 72, { mode: 'memory' })).toBe(0);
    expect(nextBatchSize(log.subarray(0, 100), 72, { mode: 'memory' })).toBe(0);
    expectRecordsError(() => nextBatchSize(log.subarray(0, 100), 72, { mode: 'memory', maxBatchBytes: 81 }),
      'SEGLOG_ERR_RECORDS_CORRUPT', 'CORRUPT_MESSAGE', 'batch-length');
    expect(nextBatchSize(log, 72, { mode: 'memory', maxBatchBytes: 82 })).toBe(94);
    const bad = Buffer.from(log.subarray(0, 100));
    bad[72 + 16] = 0xff;
    expectRecordsError(() => nextBatchSize(bad, 72, { mode: 'memory' }), 'SEGLOG_ERR_RECORDS_CORRUPT', 'CORRUPT_MESSAGE', 'magic');
    // 17 bytes suffice in memory mode to see the magic (file mode would stop at <= 17).
    expectRecordsError(() => nextBatchSize(bad.subarray(0, 72 + 17), 72, { mode: 'memory' }),
      'SEGLOG_ERR_RECORDS_CORRUPT', 'CORRUPT_MESSAGE', 'magic');
    expect(nextBatchSize(bad.subarray(0, 72 + 17), 72)).toBe(0);
    const tiny = Buffer.from(log.subarray(0, 84));
    tiny.writeInt32BE(5, 72 + 8);
    expectRecordsError(() => nextBatchSize(tiny, 72, { mode: 'memory' }), 'SEGLOG_ERR_RECORDS_CORRUPT', 'CORRUPT_MESSAGE', 'batch-length');
  });
  it('splitBatches rejects a complete frame smaller than the v2 header', () => {
    const small = Buffer.alloc(40);
    small.writeInt32BE(28, 8);
    small[16] = 2;
    expect(nextBatchSize(small, 0)).toBe(40);
    expectRecordsError(() => splitBatches(small), 'SEGLOG_ERR_RECORDS_CORRUPT', 'CORRUPT_MESSAGE', 'size');
  });
});

describe('validateFollowerBatch', () => {
  it('accepts any valid batch verbatim, including control batches and non-zero offsets', () => {
    for (const name of ['single-record', 'commit-marker', 'single-record-log-append-time']) {
      const v = vector(name);
      expect(validateFollowerBatch(v).bytes().equals(v)).toBe(true);
    }
    const big = buildBatch({ baseOffset: 5000, records: [{ value: Buffer.alloc(3000) }], baseTimestamp: T0 });
    expect(validateFollowerBatch(big).baseOffset).toBe(5000);
  });
  it('checks the CRC and reuses a view', () => {
    const log = Buffer.concat([vector('single-record'), vector('idempotent')]);
    const view = new RecordBatch(log);
    expect(validateFollowerBatch(log, 72, view)).toBe(view);
    expect(view.producerId).toBe(1000);
    log[72 + 70] = log[72 + 70]! ^ 1;
    expectRecordsError(() => validateFollowerBatch(log, 72, view), 'SEGLOG_ERR_RECORDS_CRC_MISMATCH', 'CORRUPT_MESSAGE', 'crc');
  });
  it('ignores bytes outside the CRC (baseOffset, length-preserving, leader epoch)', () => {
    const v = Buffer.from(vector('single-record'));
    v.writeInt32BE(12345, 12);
    v.writeBigInt64BE(77n, 0);
    expect(validateFollowerBatch(v).partitionLeaderEpoch).toBe(12345);
  });
});
