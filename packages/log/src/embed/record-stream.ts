// readRecords: the records of a Log as an async iterator, built over the
// public surface of read() and FetchPlan (no engine internals).
//
// Invariants:
// - Every batch's CRC-32C is checked before any of its records is yielded;
//   a mismatch throws SEGLOG_ERR_LOG_CORRUPT_BATCH.
// - Records below `from` in the first batch (a read starts at the batch
//   holding `from`) are skipped; control batches (transaction markers) are
//   never yielded; read_committed skips aborted transactional records,
//   using the plan's aborted transactions (Kafka's consumer rule).
// - Reads move across segments (each plan comes from one segment).
// - Read-your-writes: an offset accepted but not yet written is awaited
//   (written()), never reported as the end.
// - Not following, the iteration ends at the log end offset as it was when
//   iteration started (read_committed: the last stable offset then);
//   following, it waits for `waitForAppend` at the tail and ends when that
//   resolves false (the log closes).
// - Each plan is released before the next read; records' key and value are
//   views of a buffer owned by the plan's batch (inline tail-cache views or
//   a fresh read of the file range), valid after the iteration moves on.

import { SeglogError } from '@seglog/common';
import { RecordBatch, splitBatches } from '@seglog/records';
import type { LogRecord } from '@seglog/records';
import type { FetchPlan, IsolationLevel } from '../fetch-plan.js';
import type { Log } from '../log/log.js';
import type { AbortedTxn } from '../segment/txn-index.js';

export interface RecordsOptions {
  /** First offset to yield. Default: the log start offset. */
  readonly from?: number;
  /** Default 'read_uncommitted'. */
  readonly isolation?: IsolationLevel;
  /** Keep waiting for new records at the tail instead of ending. Default false. */
  readonly follow?: boolean;
  /** Bytes asked of one read. Default 1 MiB. */
  readonly maxBytesPerRead?: number;
}

/** How a following iteration waits at the tail: resolves true when the log end offset passed `offset`, false when the log closed. */
export type WaitForAppend = (offset: number) => Promise<boolean>;

const DEFAULT_MAX_BYTES = 1024 * 1024;

/** The batches of a plan as one buffer: a single inline part as is (zero-copy), else one exact copy. */
async function planBytes(plan: FetchPlan): Promise<Buffer> {
  const only = plan.parts.length === 1 ? plan.parts[0] : undefined;
  if (only !== undefined && only.kind === 'inline') return only.buffer;
  return plan.toBuffer();
}

function corrupt(log: Log, batch: RecordBatch): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_CORRUPT_BATCH', `batch at offset ${batch.baseOffset} of log ${log.dir} fails its CRC-32C check`, {
    kafka: 'CORRUPT_MESSAGE',
    context: { dir: log.dir, baseOffset: batch.baseOffset, crc: batch.crc, computed: batch.computeCrc() },
  });
}

/** Kafka's consumer-side abort filter: producers whose transaction was aborted, from the first offset of the abort to its marker. */
class AbortFilter {
  private readonly pending: AbortedTxn[] = [];
  private readonly aborting = new Set<number>();

  add(txns: readonly AbortedTxn[]): void {
    for (const txn of txns) if (!this.pending.some((p) => p.producerId === txn.producerId && p.firstOffset === txn.firstOffset)) this.pending.push(txn);
    this.pending.sort((a, b) => a.firstOffset - b.firstOffset);
  }

  /** True when the batch's records must be skipped. */
  skip(batch: RecordBatch): boolean {
    while (this.pending.length > 0 && (this.pending[0] as AbortedTxn).firstOffset <= batch.lastOffset) {
      this.aborting.add((this.pending.shift() as AbortedTxn).producerId);
    }
    if (batch.isControl) {
      this.aborting.delete(batch.producerId);
      return true;
    }
    return batch.isTransactional && this.aborting.has(batch.producerId);
  }
}

/** The records of `log` from `options.from`, in offset order (see the file comment). */
export async function* readRecords(log: Log, waitForAppend: WaitForAppend, options: RecordsOptions = {}): AsyncGenerator<LogRecord, void, undefined> {
  const committed = options.isolation === 'read_committed';
  const readOptions = { isolation: options.isolation ?? 'read_uncommitted' } as const;
  const maxBytes = options.maxBytesPerRead ?? DEFAULT_MAX_BYTES;
  const follow = options.follow ?? false;
  const endAtStart = committed ? log.lastStableOffset : log.logEndOffset;
  const aborts = new AbortFilter();
  let offset = options.from ?? log.logStartOffset;
  for (;;) {
    // A following iteration ends quietly when the log closes under it.
    if (follow && log.state === 'closed') return;
    const end = follow ? (committed ? log.lastStableOffset : log.logEndOffset) : endAtStart;
    if (offset >= end) {
      if (!follow) return;
      if (!(await waitForAppend(offset))) return;
      continue;
    }
    let plan: FetchPlan;
    try {
      if (offset >= log.writtenOffset) await log.written(offset);
      plan = await log.read(offset, maxBytes, readOptions);
    } catch (error) {
      if (follow && log.state === 'closed') return;
      throw error;
    }
    try {
      if (plan.isEmpty) {
        offset = nextSegmentBase(log, offset);
        continue;
      }
      if (committed) aborts.add(plan.abortedTransactions);
      const bytes = await planBytes(plan);
      for (const batch of splitBatches(bytes)) {
        if (!batch.isValid()) throw corrupt(log, batch);
        if (committed && aborts.skip(batch)) continue;
        if (batch.isControl) continue;
        for (const record of batch.toRecords()) if (record.offset >= offset) yield record;
      }
      offset = Math.max(offset, plan.nextOffset);
    } finally {
      await plan.release();
    }
  }
}

/**
 * After an empty read below the written offset (a gap at the end of a
 * segment, e.g. after compaction or a follower's gaps): the next segment's
 * base offset, else the written offset (above `offset`: it was awaited).
 */
function nextSegmentBase(log: Log, offset: number): number {
  for (const base of log.segmentBaseOffsets()) if (base > offset) return base;
  return Math.max(offset + 1, log.writtenOffset);
}
