// scanBatches: every record batch of one partition log, from its log start to
// the log end offset as it was when the scan began, in offset order; the
// internal topics' loaders (__consumer_offsets, __transaction_state) and
// tests read partitions this way.
//
// Invariants: each batch is handed over once, batches ending below the
// position reached are skipped (a read starts at the batch holding the
// offset), and each plan is released before the next read; a read that
// returns no batch ends the scan (nothing more can be read below the end).

import { RecordBatch, splitBatches } from '@seglog/records';
import type { PartitionLog } from './topic-store.js';

/** Bytes asked of one read while scanning. */
export const SCAN_READ_BYTES = 1 << 20;

/** Calls `onBatch` for every batch of `log` (see the file comment). */
export async function scanBatches(log: PartitionLog, onBatch: (batch: RecordBatch) => void): Promise<void> {
  let offset = log.logStartOffset;
  const end = log.logEndOffset;
  while (offset < end) {
    const plan = await log.read(offset, SCAN_READ_BYTES);
    let bytes: Buffer;
    try {
      bytes = await plan.toBuffer();
    } finally {
      await plan.release();
    }
    const batches = splitBatches(bytes);
    if (batches.length === 0) break;
    for (const batch of batches) {
      if (batch.lastOffset < offset) continue;
      offset = batch.lastOffset + 1;
      onBatch(batch);
    }
  }
}
