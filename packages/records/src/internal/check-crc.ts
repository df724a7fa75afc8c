import * as L from './layout.js';
import type { RecordBatch } from '../record-batch.js';
import { RecordsError } from '../records-error.js';

/** Throws CRC_MISMATCH unless the stored CRC equals the CRC-32C of bytes [21, end). */
export function checkCrc(batch: RecordBatch): void {
  const computed = batch.computeCrc();
  if (batch.crc !== computed) throw crcMismatch(batch, computed);
}

/** The CRC_MISMATCH error for `batch`, whose bytes [21, end) have the CRC `computed`. */
export function crcMismatch(batch: RecordBatch, computed: number): RecordsError {
  const stored = batch.crc;
  return new RecordsError('SEGLOG_ERR_RECORDS_CRC_MISMATCH', 'crc',
    `stored CRC ${hex32(stored)} differs from computed ${hex32(computed)}`,
    { position: batch.start + L.CRC_OFFSET, expected: computed, actual: stored });
}

function hex32(n: number): string {
  return n.toString(16).padStart(8, '0');
}
