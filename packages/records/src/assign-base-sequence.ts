// Sets the baseSequence of a sealed batch in place and recomputes the CRC
// (baseSequence, at byte 53, is inside the CRC range [21, end)). A producer
// assigns sequences when it sends a batch for the first time, never earlier:
// a batch that was never sent can still be merged (mergeUnsent) without
// leaving a gap. A retry resends the same bytes, sequence included.
import { assert } from '@seglog/common';
import { crc32c } from './crc32c.js';
import * as L from './internal/layout.js';

export function assignBaseSequence(batch: Buffer, baseSequence: number): void {
  assert(batch.length >= L.RECORD_BATCH_OVERHEAD, 'assignBaseSequence: not a batch');
  assert(batch.readInt8(L.MAGIC_OFFSET) === L.MAGIC_V2, 'assignBaseSequence: not a v2 batch');
  assert(Number.isInteger(baseSequence) && baseSequence >= 0 && baseSequence <= L.INT32_MAX, 'assignBaseSequence: baseSequence must be a non-negative int32');
  batch.writeInt32BE(baseSequence, L.BASE_SEQUENCE_OFFSET);
  batch.writeUInt32BE(crc32c(batch.subarray(L.ATTRIBUTES_OFFSET)), L.CRC_OFFSET);
}
