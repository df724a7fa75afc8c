// Control records (reference/kafka-storage.md §4). A control batch (attribute
// bit 5) holds control records whose key is
//   version int16 (0) | type int16
// and, for transaction markers (ABORT 0, COMMIT 1), whose value is
//   version int16 (0) | coordinatorEpoch int32.
// Kafka's reading rules: a key shorter than 4 bytes or with a negative version
// is INVALID_RECORD; a higher version is read as version 0; an unknown type is
// UNKNOWN and readers ignore it. A marker value shorter than 6 bytes or with a
// negative version is INVALID_RECORD; a higher version is read as version 0.
import type { RecordBatch } from './record-batch.js';
import type { RecordReadOptions } from './record-cursor.js';
import { RecordsError } from './records-error.js';

export const ControlRecordType = {
  ABORT: 0,
  COMMIT: 1,
  LEADER_CHANGE: 2,
  SNAPSHOT_HEADER: 3,
  SNAPSHOT_FOOTER: 4,
  KRAFT_VERSION: 5,
  KRAFT_VOTERS: 6,
  /** Any other type id: ignored by readers. */
  UNKNOWN: -1,
} as const;
export type ControlRecordTypeId = (typeof ControlRecordType)[keyof typeof ControlRecordType];

export const CONTROL_KEY_BYTES = 4;
export const END_TXN_MARKER_VALUE_BYTES = 6;

/** The type of a control record from its key; UNKNOWN (-1) for type ids Kafka does not define. */
export function readControlRecordType(key: Uint8Array | null): ControlRecordTypeId {
  if (key === null || key.length < CONTROL_KEY_BYTES) {
    throw new RecordsError('SEGLOG_ERR_RECORDS_INVALID_RECORD', 'control-key',
      `control record key of ${key === null ? 'null' : key.length} bytes, need ${CONTROL_KEY_BYTES}`,
      { expected: CONTROL_KEY_BYTES, actual: key === null ? -1 : key.length });
  }
  const version = readInt16(key, 0);
  if (version < 0) {
    throw new RecordsError('SEGLOG_ERR_RECORDS_INVALID_RECORD', 'control-key-version',
      `negative control record key version ${version}`, { actual: version });
  }
  const type = readInt16(key, 2);
  return type >= 0 && type <= 6 ? (type as ControlRecordTypeId) : ControlRecordType.UNKNOWN;
}

/** coordinatorEpoch from an end-transaction marker value. */
export function readEndTxnMarkerCoordinatorEpoch(value: Uint8Array | null): number {
  if (value === null || value.length < END_TXN_MARKER_VALUE_BYTES) {
    throw new RecordsError('SEGLOG_ERR_RECORDS_INVALID_RECORD', 'end-txn-marker',
      `end transaction marker value of ${value === null ? 'null' : value.length} bytes, need ${END_TXN_MARKER_VALUE_BYTES}`,
      { expected: END_TXN_MARKER_VALUE_BYTES, actual: value === null ? -1 : value.length });
  }
  const version = readInt16(value, 0);
  if (version < 0) {
    throw new RecordsError('SEGLOG_ERR_RECORDS_INVALID_RECORD', 'end-txn-marker-version',
      `negative end transaction marker version ${version}`, { actual: version });
  }
  return (value[2]! << 24) | (value[3]! << 16) | (value[4]! << 8) | value[5]!;
}

export interface TxnMarker {
  readonly type: 'COMMIT' | 'ABORT';
  readonly coordinatorEpoch: number;
}

/**
 * The transaction marker a control batch carries (its first record), or null
 * for a data batch, an empty control batch or a control record of another
 * type. Throws INVALID_RECORD for a malformed key or marker value.
 */
export function readTxnMarker(batch: RecordBatch, options?: RecordReadOptions): TxnMarker | null {
  if (!batch.isControl) return null;
  const cursor = batch.records(options);
  if (!cursor.next()) return null;
  const type = readControlRecordType(cursor.key);
  if (type !== ControlRecordType.ABORT && type !== ControlRecordType.COMMIT) return null;
  return {
    type: type === ControlRecordType.COMMIT ? 'COMMIT' : 'ABORT',
    coordinatorEpoch: readEndTxnMarkerCoordinatorEpoch(cursor.value),
  };
}

function readInt16(bytes: Uint8Array, p: number): number {
  return ((bytes[p]! << 24) >> 16) | bytes[p + 1]!;
}
