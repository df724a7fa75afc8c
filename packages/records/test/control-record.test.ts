// Control records and transaction markers (reference/kafka-storage.md §4).
import { describe, expect, it } from 'vitest';
import {
  buildBatch, buildControlBatch, ControlRecordType, readControlRecordType, readEndTxnMarkerCoordinatorEpoch, readTxnMarker,
  RecordBatch, validateBatch,
} from '../src/index.js';
import { expectRecordsError, rawBatch, rawRecord, T0 } from './helpers.js';

const INVALID = ['SEGLOG_ERR_RECORDS_INVALID_RECORD', 'INVALID_RECORD'] as const;
const key = (version: number, type: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt16BE(version, 0);
  b.writeInt16BE(type, 2);
  return b;
};

describe('control record key', () => {
  it('reads every Kafka type and maps others to UNKNOWN', () => {
    for (let t = 0; t <= 6; t++) expect(readControlRecordType(key(0, t))).toBe(t);
    expect(readControlRecordType(key(0, 7))).toBe(ControlRecordType.UNKNOWN);
    expect(readControlRecordType(key(0, -3))).toBe(ControlRecordType.UNKNOWN);
  });
  it('reads a higher version as version 0, with trailing bytes', () => {
    expect(readControlRecordType(Buffer.concat([key(3, 1), Buffer.from([9, 9])]))).toBe(ControlRecordType.COMMIT);
  });
  it('rejects a short, null or negative-version key', () => {
    expectRecordsError(() => readControlRecordType(Buffer.from([0, 0, 0])), ...INVALID, 'control-key');
    expectRecordsError(() => readControlRecordType(null), ...INVALID, 'control-key');
    expectRecordsError(() => readControlRecordType(key(-1, 0)), ...INVALID, 'control-key-version');
  });
});

describe('end transaction marker value', () => {
  const value = (version: number, epoch: number): Buffer => {
    const b = Buffer.alloc(6);
    b.writeInt16BE(version, 0);
    b.writeInt32BE(epoch, 2);
    return b;
  };
  it('reads the coordinator epoch (higher versions as version 0)', () => {
    expect(readEndTxnMarkerCoordinatorEpoch(value(0, 7))).toBe(7);
    expect(readEndTxnMarkerCoordinatorEpoch(value(0, -1))).toBe(-1);
    expect(readEndTxnMarkerCoordinatorEpoch(Buffer.concat([value(1, 0x7fffffff), Buffer.alloc(8)]))).toBe(0x7fffffff);
  });
  it('rejects a short, null or negative-version value', () => {
    expectRecordsError(() => readEndTxnMarkerCoordinatorEpoch(Buffer.alloc(5)), ...INVALID, 'end-txn-marker');
    expectRecordsError(() => readEndTxnMarkerCoordinatorEpoch(null), ...INVALID, 'end-txn-marker');
    expectRecordsError(() => readEndTxnMarkerCoordinatorEpoch(value(-2, 1)), ...INVALID, 'end-txn-marker-version');
  });
});

describe('buildControlBatch and readTxnMarker', () => {
  it('builds ABORT and COMMIT markers of 78 bytes', () => {
    for (const type of ['ABORT', 'COMMIT'] as const) {
      const buf = buildControlBatch({ type, producerId: 2 ** 40, producerEpoch: 32767, coordinatorEpoch: -5, timestamp: T0 });
      const b = new RecordBatch(buf);
      expect([buf.length, b.attributes, b.baseOffset, b.partitionLeaderEpoch, b.baseSequence, b.producerId, b.producerEpoch, b.isValid()])
        .toEqual([78, 0x30, 0, -1, -1, 2 ** 40, 32767, true]);
      expect(readTxnMarker(b)).toEqual({ type, coordinatorEpoch: -5 });
    }
  });
  it('returns null for data batches and other control types', () => {
    expect(readTxnMarker(new RecordBatch(buildBatch({ records: [{ value: 'a', timestamp: T0 }] })))).toBeNull();
    const leaderChange = rawBatch(Buffer.from(rawRecord({ key: [...key(0, 2)], value: [0, 0] })), { attributes: 0x20 });
    expect(readTxnMarker(new RecordBatch(leaderChange))).toBeNull();
    const empty = rawBatch(Buffer.alloc(0), { attributes: 0x30, recordsCount: 0 });
    expect(readTxnMarker(new RecordBatch(empty))).toBeNull();
  });
  it('rejects a marker with a malformed value', () => {
    const bad = rawBatch(Buffer.from(rawRecord({ key: [...key(0, 0)], value: [0, 0, 0] })), { attributes: 0x30 });
    expectRecordsError(() => readTxnMarker(new RecordBatch(bad)), ...INVALID, 'end-txn-marker');
  });
  it('is refused from producers', () => {
    const marker = buildControlBatch({ type: 'COMMIT', producerId: 1, producerEpoch: 0, coordinatorEpoch: 0, timestamp: T0 });
    expectRecordsError(() => validateBatch(marker, { maxMessageBytes: 1000 }), ...INVALID, 'control-batch');
  });
});

describe('buildBatch options', () => {
  it('resolves timestamps from absolute values or deltas, with an explicit base', () => {
    const b = new RecordBatch(buildBatch({
      baseTimestamp: T0, records: [{ value: 'a', timestampDelta: -7 }, { value: 'b', timestamp: T0 + 3 }, { value: 'c' }],
    }));
    expect([b.baseTimestamp, b.maxTimestamp]).toEqual([T0, T0 + 3]);
    expect(b.toRecords().map((r) => r.timestamp)).toEqual([T0 - 7, T0 + 3, T0]);
  });
  it('builds LogAppendTime batches with the given append time', () => {
    const b = new RecordBatch(buildBatch({ timestampType: 'LogAppendTime', maxTimestamp: T0 + 500, records: [{ value: 'a', timestamp: T0 }] }));
    expect([b.timestampType, b.maxTimestamp, b.baseTimestamp]).toEqual(['LogAppendTime', T0 + 500, T0]);
    expect(b.toRecords()[0]!.timestamp).toBe(T0 + 500);
  });
  it('builds empty (compacted-style) batches and explicit offset deltas', () => {
    const empty = new RecordBatch(buildBatch({ records: [], lastOffsetDelta: 9, producerId: 5, producerEpoch: 1, baseSequence: 3 }));
    expect([empty.sizeInBytes, empty.recordsCount, empty.lastOffsetDelta, empty.baseTimestamp, empty.lastSequence, empty.isValid()])
      .toEqual([61, 0, 9, -1, 12, true]);
    expect(empty.toRecords()).toEqual([]);
    const gaps = new RecordBatch(buildBatch({ baseOffset: 10, baseTimestamp: T0, records: [{ value: 'a', offsetDelta: 2 }, { value: 'b', offsetDelta: 5 }] }));
    expect(gaps.lastOffset).toBe(15);
    expect(gaps.toRecords().map((r) => r.offset)).toEqual([12, 15]);
  });
  it('writes string and byte keys, values and headers identically', () => {
    const a = buildBatch({ records: [{ key: 'ключ', value: 'v', headers: [{ key: 'h', value: 'x' }, { key: 'n' }], timestamp: T0 }] });
    const b = buildBatch({
      records: [{ key: Buffer.from('ключ'), value: new Uint8Array([0x76]), headers: [{ key: 'h', value: Buffer.from('x') }, { key: 'n', value: null }], timestamp: T0 }],
    });
    expect(a.equals(b)).toBe(true);
    const [r] = new RecordBatch(a).toRecords();
    expect(r!.key!.toString()).toBe('ключ');
    expect(r!.headers.map((h) => [h.key, h.value?.toString() ?? null])).toEqual([['h', 'x'], ['n', null]]);
  });
});
