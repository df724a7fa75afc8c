/**
 * The public surface of the @seglog/records package.
 * @module @seglog/records
 */
// @seglog/records: Kafka record batch v2 — views, validation, iteration,
// builders, CRC-32C and codecs. See README.md for the API and error codes.
export * from './compression.js';
export { crc32c } from './crc32c.js';
export { RecordsError, RecordsErrorCode } from './records-error.js';
export type { RecordsErrorCodeName } from './records-error.js';
export { RecordBatch, incrementSequence } from './record-batch.js';
export type { TimestampType } from './record-batch.js';
export { RecordCursor, DEFAULT_MAX_DECOMPRESSED_BYTES } from './record-cursor.js';
export { BatchWindowIndex } from './batch-window-index.js';
export type { BatchWindowIndexOptions } from './batch-window-index.js';
export type { LogRecord, RecordCursorOptions, RecordHeader, RecordReadOptions } from './record-cursor.js';
export { nextBatchSize } from './next-batch-size.js';
export type { FrameMode, FrameOptions } from './next-batch-size.js';
export { splitBatches } from './split-batches.js';
export { validateBatch } from './validate-batch.js';
export type { BatchSummary, ValidateBatchOptions } from './validate-batch.js';
export { validateFollowerBatch } from './validate-follower-batch.js';
export {
  ControlRecordType, readControlRecordType, readEndTxnMarkerCoordinatorEpoch, readTxnMarker,
} from './control-record.js';
export type { ControlRecordTypeId, TxnMarker } from './control-record.js';
export { buildBatch } from './build-batch.js';
export type { BuildBatchOptions, RecordInput, RecordHeaderInput } from './build-batch.js';
export { buildControlBatch } from './build-control-batch.js';
export type { BuildControlBatchOptions } from './build-control-batch.js';
export {
  RECORD_BATCH_OVERHEAD, LOG_OVERHEAD, NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_SEQUENCE,
  NO_PARTITION_LEADER_EPOCH, NO_TIMESTAMP,
} from './internal/layout.js';
export { BoundedBatchBuilder, CODEC_BOUND_EXCEEDED } from './bounded-batch-builder.js';
export type { BoundedBatchBuilderOptions, SealOptions } from './bounded-batch-builder.js';
export { mergeUnsent, toPendingBatches } from './merge-unsent.js';
export type { MergeUnsentOptions, PendingBatch } from './merge-unsent.js';
export { assignBaseSequence } from './assign-base-sequence.js';
