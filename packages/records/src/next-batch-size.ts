// Frame scanning: where does the batch at `position` end? The rules are
// Kafka's (reference/kafka-storage.md §2 "Reading batches"), and they differ
// between a file (recovery, reads) and a request buffer in memory:
//
// file:   <= 17 bytes left → end of data; batchLength < 14 → CORRUPT;
//         a partial trailing batch → end of data (not an error); magic != 2 → error.
// memory: < 12 bytes left → end; batchLength < 14 → CORRUPT;
//         batchLength > maxBatchBytes → CORRUPT; < 17 bytes left → end;
//         magic outside 0..2 → CORRUPT; a partial final batch → end.
//
// Legacy batches (magic 0 or 1) are UNSUPPORTED_MAGIC in both modes: seglog
// stores v2 only. The size returned is framing only: a batch may still be
// smaller than the 61-byte v2 header or fail its CRC (see RecordBatch and
// validateFollowerBatch).
import { assert } from '@seglog/common';
import * as L from './internal/layout.js';
import { RecordsError } from './records-error.js';

export type FrameMode = 'file' | 'memory';

export interface FrameOptions {
  /** Default 'file'. */
  readonly mode?: FrameMode;
  /** memory mode: batchLength above this is CORRUPT. Default: no limit. */
  readonly maxBatchBytes?: number;
  /**
   * file mode: a header whose first 17 bytes are all zero is the end of data
   * (preallocated, never-written space) rather than CORRUPT. Default false
   * (Kafka: batchLength 0 < 14 is corrupt).
   */
  readonly zeroHeaderIsEnd?: boolean;
}

const DEFAULT_OPTIONS: FrameOptions = {};

/**
 * Size in bytes of the complete batch starting at `position`, or 0 when the
 * data ends there (per the mode's rules). Throws RecordsError CORRUPT or
 * UNSUPPORTED_MAGIC for corrupt framing. Allocates nothing.
 */
export function nextBatchSize(buf: Uint8Array, position: number, options: FrameOptions = DEFAULT_OPTIONS): number {
  assert(Number.isInteger(position) && position >= 0, 'position must be a non-negative integer');
  assert(position <= buf.length, 'position beyond the buffer');
  const remaining = buf.length - position;
  const memory = options.mode === 'memory';
  if (memory ? remaining < L.LOG_OVERHEAD : remaining <= L.HEADER_SIZE_UP_TO_MAGIC) return 0;
  if (!memory && options.zeroHeaderIsEnd === true && isZeroHeader(buf, position)) return 0;
  const batchLength = readInt32(buf, position + L.BATCH_LENGTH_OFFSET);
  if (batchLength < L.MIN_BATCH_LENGTH) {
    throw new RecordsError('SEGLOG_ERR_RECORDS_CORRUPT', 'batch-length',
      `batchLength ${batchLength} is below the minimum ${L.MIN_BATCH_LENGTH}`,
      { position, expected: L.MIN_BATCH_LENGTH, actual: batchLength });
  }
  if (memory) {
    const max = options.maxBatchBytes;
    if (max !== undefined && batchLength > max) {
      throw new RecordsError('SEGLOG_ERR_RECORDS_CORRUPT', 'batch-length',
        `batchLength ${batchLength} exceeds the limit ${max}`, { position, expected: max, actual: batchLength });
    }
    if (remaining < L.HEADER_SIZE_UP_TO_MAGIC) return 0;
    checkFrameMagic(buf, position);
  }
  const size = batchLength + L.LOG_OVERHEAD;
  if (size > remaining) return 0;
  if (!memory) checkFrameMagic(buf, position);
  return size;
}

function checkFrameMagic(buf: Uint8Array, position: number): void {
  const magic = (buf[position + L.MAGIC_OFFSET]! << 24) >> 24;
  if (magic === L.MAGIC_V2) return;
  const context = { position: position + L.MAGIC_OFFSET, expected: L.MAGIC_V2, actual: magic };
  if (magic === 0 || magic === 1) {
    throw new RecordsError('SEGLOG_ERR_RECORDS_UNSUPPORTED_MAGIC', 'magic',
      `legacy message format (magic ${magic}) is not supported`, context);
  }
  throw new RecordsError('SEGLOG_ERR_RECORDS_CORRUPT', 'magic', `invalid magic ${magic}`, context);
}

function readInt32(buf: Uint8Array, p: number): number {
  return (buf[p]! << 24) | (buf[p + 1]! << 16) | (buf[p + 2]! << 8) | buf[p + 3]!;
}

function isZeroHeader(buf: Uint8Array, position: number): boolean {
  for (let i = 0; i < L.HEADER_SIZE_UP_TO_MAGIC; i++) if (buf[position + i] !== 0) return false;
  return true;
}
