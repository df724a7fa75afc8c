// The fixture vectors (reference/kafka-storage.md §6): the builder reproduces
// every batch byte for byte, and parsing gives back the described fields.
import { describe, expect, it } from 'vitest';
import {
  buildBatch, buildControlBatch, ControlRecordType, readControlRecordType, readTxnMarker, RecordBatch,
  validateFollowerBatch,
} from '../src/index.js';
import { loadVectors, T0, vector } from './helpers.js';

const hex = (b: Buffer): string => b.toString('hex');
const str = (b: Buffer | null): string | null => (b === null ? null : b.toString('utf8'));

describe('fixture file', () => {
  it('holds the five batch vectors with their sizes and CRCs', () => {
    const { batches } = loadVectors();
    expect(batches.map((b) => b.name)).toEqual([
      'single-record', 'three-records-with-header', 'idempotent', 'commit-marker', 'single-record-log-append-time',
    ]);
    for (const b of batches) {
      const bytes = Buffer.from(b.hex, 'hex');
      const batch = validateFollowerBatch(bytes);
      expect(batch.sizeInBytes).toBe(b.size);
      expect(bytes.length).toBe(b.size);
      expect(batch.crc.toString(16).padStart(8, '0')).toBe(b.crc);
      expect(batch.isValid()).toBe(true);
    }
  });
});

describe('vector 1: single record', () => {
  const expected = vector('single-record');
  it('is built byte for byte', () => {
    const built = buildBatch({ baseOffset: 0, partitionLeaderEpoch: 0, records: [{ key: null, value: 'test', timestamp: T0 }] });
    expect(hex(built)).toBe(hex(expected));
  });
  it('parses back to its fields', () => {
    const b = new RecordBatch(expected);
    expect({
      baseOffset: b.baseOffset, batchLength: b.batchLength, sizeInBytes: b.sizeInBytes, ple: b.partitionLeaderEpoch,
      magic: b.magic, crc: b.crc, attributes: b.attributes, compression: b.compression, timestampType: b.timestampType,
      txn: b.isTransactional, control: b.isControl, horizon: b.hasDeleteHorizon, lastOffsetDelta: b.lastOffsetDelta,
      lastOffset: b.lastOffset, nextOffset: b.nextOffset, baseTimestamp: b.baseTimestamp, maxTimestamp: b.maxTimestamp,
      producerId: b.producerId, producerEpoch: b.producerEpoch, baseSequence: b.baseSequence, lastSequence: b.lastSequence,
      count: b.recordsCount,
    }).toEqual({
      baseOffset: 0, batchLength: 60, sizeInBytes: 72, ple: 0, magic: 2, crc: 0xce68b28d, attributes: 0, compression: 0,
      timestampType: 'CreateTime', txn: false, control: false, horizon: false, lastOffsetDelta: 0, lastOffset: 0,
      nextOffset: 1, baseTimestamp: T0, maxTimestamp: T0, producerId: -1, producerEpoch: -1, baseSequence: -1,
      lastSequence: -1, count: 1,
    });
    const records = b.toRecords();
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ offset: 0, timestamp: T0, sequence: -1, key: null, headers: [] });
    expect(str(records[0]!.value)).toBe('test');
  });
});

describe('vector 2: three records with a header', () => {
  const expected = vector('three-records-with-header');
  it('is built byte for byte', () => {
    const built = buildBatch({
      partitionLeaderEpoch: 5,
      records: [
        { key: 'k0', value: 'v0', timestamp: T0 },
        { key: 'k1', value: 'v1', timestamp: T0 + 10, headers: [{ key: 'h', value: 'x' }] },
        { key: null, value: null, timestamp: T0 + 20 },
      ],
    });
    expect(hex(built)).toBe(hex(expected));
  });
  it('parses back to its fields', () => {
    const b = new RecordBatch(expected);
    expect([b.partitionLeaderEpoch, b.lastOffsetDelta, b.recordsCount, b.baseTimestamp, b.maxTimestamp, b.crc])
      .toEqual([5, 2, 3, T0, T0 + 20, 0xc48dda1d]);
    const records = b.toRecords().map((r) => ({
      offset: r.offset, timestamp: r.timestamp, key: str(r.key), value: str(r.value),
      headers: r.headers.map((h) => [h.key, str(h.value)]),
    }));
    expect(records).toEqual([
      { offset: 0, timestamp: T0, key: 'k0', value: 'v0', headers: [] },
      { offset: 1, timestamp: T0 + 10, key: 'k1', value: 'v1', headers: [['h', 'x']] },
      { offset: 2, timestamp: T0 + 20, key: null, value: null, headers: [] },
    ]);
  });
});

describe('vector 3: idempotent', () => {
  const expected = vector('idempotent');
  it('is built byte for byte', () => {
    const built = buildBatch({
      partitionLeaderEpoch: 0, producerId: 1000, producerEpoch: 0, baseSequence: 0,
      records: [{ value: 'a', timestamp: T0 }, { value: 'b', timestamp: T0 }],
    });
    expect(hex(built)).toBe(hex(expected));
  });
  it('parses back to its fields', () => {
    const b = new RecordBatch(expected);
    expect([b.producerId, b.producerEpoch, b.baseSequence, b.lastSequence, b.hasProducerId, b.recordsCount, b.sizeInBytes])
      .toEqual([1000, 0, 0, 1, true, 2, 77]);
    expect(b.toRecords().map((r) => [r.offset, r.sequence, str(r.value)])).toEqual([[0, 0, 'a'], [1, 1, 'b']]);
  });
});

describe('vector 4: COMMIT marker', () => {
  const expected = vector('commit-marker');
  it('is built byte for byte', () => {
    const built = buildControlBatch({
      type: 'COMMIT', producerId: 1000, producerEpoch: 0, coordinatorEpoch: 7, baseOffset: 10, partitionLeaderEpoch: 3, timestamp: T0,
    });
    expect(hex(built)).toBe(hex(expected));
  });
  it('parses back to its fields', () => {
    const b = new RecordBatch(expected);
    expect([b.baseOffset, b.attributes, b.isControl, b.isTransactional, b.partitionLeaderEpoch, b.baseSequence, b.sizeInBytes])
      .toEqual([10, 0x30, true, true, 3, -1, 78]);
    const cursor = b.records();
    expect(cursor.next()).toBe(true);
    expect(readControlRecordType(cursor.key)).toBe(ControlRecordType.COMMIT);
    expect(cursor.offset).toBe(10);
    expect(cursor.next()).toBe(false);
    expect(readTxnMarker(b)).toEqual({ type: 'COMMIT', coordinatorEpoch: 7 });
  });
});

describe('vector 5: vector 1 restamped to LogAppendTime', () => {
  const expected = vector('single-record-log-append-time');
  it('is vector 1 after setMaxTimestamp(LogAppendTime, T0 + 5)', () => {
    const bytes = Buffer.from(vector('single-record'));
    new RecordBatch(bytes).setMaxTimestamp('LogAppendTime', T0 + 5);
    expect(hex(bytes)).toBe(hex(expected));
  });
  it('reads every record timestamp as maxTimestamp and keeps baseTimestamp', () => {
    const b = new RecordBatch(expected);
    expect([b.attributes, b.timestampType, b.baseTimestamp, b.maxTimestamp, b.crc])
      .toEqual([0x08, 'LogAppendTime', T0, T0 + 5, 0x9b5c053f]);
    expect(b.toRecords().map((r) => r.timestamp)).toEqual([T0 + 5]);
  });
});
