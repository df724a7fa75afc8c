// The plain path of the bounded builder: rebuilds accepted records as
// uncompressed batches (buildBatch, codec none), greedily split so each is
// within maxBytes. Used when a streaming codec failed or broke its bound,
// and by mergeUnsent for a record that does not fit a compressed batch even
// alone. A record larger than maxBytes uncompressed is tried alone with the
// codec one-shot (it may have been accepted because it compresses well); if
// that does not fit either, it is TOO_LARGE and the caller still holds it.
import { assert } from '@seglog/common';
import { buildBatch, type RecordInput } from '../../build-batch.js';
import { Codec, type CodecId } from '../../compression.js';
import { RecordsError, RecordsErrorCode } from '../../records-error.js';
import * as L from '../layout.js';
import { encodedRecordSize } from './encode-record.js';
import { streamFaults } from './fault-hook.js';

export interface PlainBatchOptions {
  readonly codec: CodecId;
  readonly level: number | undefined;
  readonly maxBytes: number;
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly transactional: boolean;
}

/** `timestamps[i]` is records[i]'s absolute timestamp. Returns >= 1 batch holding every record in order. */
export function buildPlainBatches(records: readonly RecordInput[], timestamps: readonly number[], options: PlainBatchOptions): Buffer[] {
  assert(records.length > 0, 'buildPlainBatches: no records');
  assert(records.length === timestamps.length, 'buildPlainBatches: one timestamp per record');
  const out: Buffer[] = [];
  let start = 0;
  let bytes = L.RECORD_BATCH_OVERHEAD;
  for (let i = 0; i < records.length; i++) {
    const size = encodedRecordSize(records[i]!, timestamps[i]! - timestamps[start]!, i - start);
    if (bytes + size <= options.maxBytes) {
      bytes += size;
      continue;
    }
    if (i > start) out.push(build(records, timestamps, start, i, Codec.none, options));
    start = i;
    bytes = L.RECORD_BATCH_OVERHEAD + encodedRecordSize(records[i]!, 0, 0);
    if (bytes > options.maxBytes) {
      out.push(buildAlone(records, timestamps, i, options));
      start = i + 1;
      bytes = L.RECORD_BATCH_OVERHEAD;
    }
  }
  if (start < records.length) out.push(build(records, timestamps, start, records.length, Codec.none, options));
  return out;
}

function buildAlone(records: readonly RecordInput[], timestamps: readonly number[], index: number, options: PlainBatchOptions): Buffer {
  if (options.codec !== Codec.none) {
    streamFaults.hook?.(options.codec, 'one-shot');
    const batch = build(records, timestamps, index, index + 1, options.codec, options);
    if (batch.length <= options.maxBytes) return batch;
  }
  throw new RecordsError(RecordsErrorCode.TOO_LARGE, 'record-too-large', `a record does not fit a ${options.maxBytes}-byte batch, compressed or not`, {
    recordIndex: index,
    expected: options.maxBytes,
  });
}

function build(records: readonly RecordInput[], timestamps: readonly number[], start: number, end: number, codec: CodecId, options: PlainBatchOptions): Buffer {
  const slice: RecordInput[] = [];
  for (let i = start; i < end; i++) {
    const record = records[i]!;
    const normalized: { -readonly [K in keyof RecordInput]: RecordInput[K] } = { timestamp: timestamps[i]! };
    if (record.key !== undefined) normalized.key = record.key;
    if (record.value !== undefined) normalized.value = record.value;
    if (record.headers !== undefined) normalized.headers = record.headers;
    slice.push(normalized);
  }
  const batch = buildBatch({
    records: slice,
    compression: codec,
    ...(options.level === undefined || codec === Codec.none ? {} : { compressionLevel: options.level }),
    producerId: options.producerId,
    producerEpoch: options.producerEpoch,
    transactional: options.transactional,
  });
  assert(codec !== Codec.none || batch.length <= options.maxBytes, 'buildPlainBatches: plain batch above maxBytes');
  return batch;
}
