// The light check for bytes that are stored verbatim: follower appends
// (leader-assigned offsets, timestamps and CRC kept byte for byte) and
// recovery scans. Framing (complete v2 batch, size >= 61) and CRC-32C only;
// no max.message.bytes, no producer or record checks (Kafka's
// appendAsFollower, reference/kafka-storage.md §14, and segment recovery §21).
import { checkCrc } from './internal/check-crc.js';
import { RecordBatch } from './record-batch.js';

/**
 * Checks the batch starting at `start` in `buf` and returns a view of it
 * (`view`, re-pointed, when given: recovery reuses one). Throws RecordsError
 * CORRUPT, UNSUPPORTED_MAGIC or CRC_MISMATCH.
 */
export function validateFollowerBatch(buf: Uint8Array, start = 0, view?: RecordBatch): RecordBatch {
  const batch = view === undefined ? new RecordBatch(buf, start) : view.reset(buf, start);
  checkCrc(batch);
  return batch;
}
