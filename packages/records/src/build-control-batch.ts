// Builds a transaction marker: a control batch (attributes transactional +
// control, uncompressed, CreateTime) with one control record — key
// (version 0, type), value (version 0, coordinatorEpoch), offsetDelta 0,
// timestampDelta 0, no headers — and baseSequence -1
// (reference/kafka-storage.md §4; a marker batch is 78 bytes).
import { assert } from '@seglog/common';
import { ControlRecordType, CONTROL_KEY_BYTES, END_TXN_MARKER_VALUE_BYTES } from './control-record.js';
import * as L from './internal/layout.js';
import { writeBatch } from './internal/write-batch.js';

export interface BuildControlBatchOptions {
  readonly type: 'COMMIT' | 'ABORT';
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly coordinatorEpoch: number;
  /** The marker's timestamp (baseTimestamp and maxTimestamp). */
  readonly timestamp: number;
  /** Default 0. */
  readonly baseOffset?: number;
  /** Default -1 (none). */
  readonly partitionLeaderEpoch?: number;
}

export function buildControlBatch(options: BuildControlBatchOptions): Buffer {
  assert(options.producerId >= 0, 'a transaction marker needs a producerId');
  assert(Number.isInteger(options.coordinatorEpoch) && options.coordinatorEpoch >= L.INT32_MIN && options.coordinatorEpoch <= L.INT32_MAX,
    'coordinatorEpoch must be an int32');
  const key = Buffer.alloc(CONTROL_KEY_BYTES);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(options.type === 'COMMIT' ? ControlRecordType.COMMIT : ControlRecordType.ABORT, 2);
  const value = Buffer.alloc(END_TXN_MARKER_VALUE_BYTES);
  value.writeInt16BE(0, 0);
  value.writeInt32BE(options.coordinatorEpoch, 2);
  return writeBatch({
    baseOffset: options.baseOffset ?? 0,
    partitionLeaderEpoch: options.partitionLeaderEpoch ?? L.NO_PARTITION_LEADER_EPOCH,
    attributes: L.TRANSACTIONAL_FLAG_MASK | L.CONTROL_FLAG_MASK,
    lastOffsetDelta: 0,
    baseTimestamp: options.timestamp,
    maxTimestamp: options.timestamp,
    producerId: options.producerId,
    producerEpoch: options.producerEpoch,
    baseSequence: L.NO_SEQUENCE,
    records: [{ timestampDelta: 0, offsetDelta: 0, key, value, headers: [] }],
    compressionLevel: undefined,
  });
}
