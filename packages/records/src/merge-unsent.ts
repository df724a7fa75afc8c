// Re-packs a partition's backlog of never-sent batches into as few
// compressed-size-bounded batches as the limit allows (franz-go's
// StreamingCompression, PR #1366: with compression ratio R, a backlog of
// uncompressed-bounded batches needs about R times more produce requests).
//
// Rules:
// - A batch that may have been sent (`sent: true`) is returned as the same
//   object, bytes untouched: a retry must resend exactly what the broker may
//   already hold, sequence included.
// - Each maximal run of consecutive never-sent batches is re-packed through
//   BoundedBatchBuilder, records in order. Sequences are assigned only at
//   the first send (assignBaseSequence), so a never-sent batch has none yet
//   and merging keeps idempotent and transactional semantics.
// - The per-record handles (promise resolvers, callbacks, ...) move with
//   their records; mergeUnsent never settles one. The input is never
//   mutated: the new batches are built completely first, and if re-packing a
//   run fails (a SeglogError: a record too large for any batch, a codec
//   that fails on the plain path too) that run is returned as it was, so no
//   record is lost and each handle is still held by exactly one batch.
// - A run is replaced only if the result has fewer batches.
import { AssertionError, assert } from '@seglog/common';
import type { RecordInput } from './build-batch.js';
import { BoundedBatchBuilder, type BoundedBatchBuilderOptions } from './bounded-batch-builder.js';
import * as L from './internal/layout.js';

export interface PendingBatch<T> {
  /** The sealed batch, sent (and resent) verbatim. */
  readonly batch: Buffer;
  /** Its records, in order, with absolute timestamps (or deltas from the options' baseTimestamp). */
  readonly records: readonly RecordInput[];
  /** One caller handle per record (settled by the caller when the batch is acknowledged or fails). */
  readonly handles: readonly T[];
  /** true once the batch may have reached the broker: it is never changed again. */
  readonly sent: boolean;
}

export interface MergeUnsentOptions extends BoundedBatchBuilderOptions {
  /** Told about a run that could not be re-packed (and was kept as it was). */
  readonly onError?: (error: unknown) => void;
}

export function mergeUnsent<T>(batches: readonly PendingBatch<T>[], options: MergeUnsentOptions): PendingBatch<T>[] {
  const out: PendingBatch<T>[] = [];
  let runStart = 0;
  for (let i = 0; i <= batches.length; i++) {
    const batch = batches[i];
    if (batch !== undefined && !batch.sent) continue;
    if (i > runStart) out.push(...mergeRun(batches.slice(runStart, i), options));
    if (batch !== undefined) out.push(batch);
    runStart = i + 1;
  }
  return out;
}

/**
 * Splits sealed batches (from one builder, in order) into PendingBatches,
 * giving each its records and handles by its recordsCount.
 */
export function toPendingBatches<T>(sealed: readonly Buffer[], records: readonly RecordInput[], handles: readonly T[]): PendingBatch<T>[] {
  assert(records.length === handles.length, 'toPendingBatches: one handle per record');
  const out: PendingBatch<T>[] = [];
  let start = 0;
  for (const batch of sealed) {
    const count = batch.readInt32BE(L.RECORDS_COUNT_OFFSET);
    out.push({ batch, records: records.slice(start, start + count), handles: handles.slice(start, start + count), sent: false });
    start += count;
  }
  assert(start === records.length, 'toPendingBatches: batches and records differ');
  return out;
}

function mergeRun<T>(run: readonly PendingBatch<T>[], options: MergeUnsentOptions): readonly PendingBatch<T>[] {
  if (run.length < 2) return run;
  try {
    const merged = repack(run, options);
    return merged.length < run.length ? merged : run;
  } catch (error) {
    if (error instanceof AssertionError) throw error;
    options.onError?.(error);
    return run;
  }
}

function repack<T>(run: readonly PendingBatch<T>[], options: MergeUnsentOptions): PendingBatch<T>[] {
  const records: RecordInput[] = [];
  const handles: T[] = [];
  for (const batch of run) {
    assert(batch.records.length === batch.handles.length, 'mergeUnsent: one handle per record');
    records.push(...batch.records);
    handles.push(...batch.handles);
  }
  const out: PendingBatch<T>[] = [];
  let builder = new BoundedBatchBuilder(options);
  let start = 0;
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    if (builder.tryAppend(record)) continue;
    if (builder.recordsCount > 0) {
      out.push(...toPendingBatches(builder.seal(), records.slice(start, i), handles.slice(start, i)));
      start = i;
      builder = new BoundedBatchBuilder(options);
      if (builder.tryAppend(record)) continue;
    }
    // Does not fit a compressed batch even alone: alone, uncompressed (or TOO_LARGE, which keeps the run).
    out.push(...toPendingBatches([builder.buildAlone(record)], [record], [handles[i]!]));
    start = i + 1;
    builder = new BoundedBatchBuilder(options);
  }
  if (builder.recordsCount > 0) out.push(...toPendingBatches(builder.seal(), records.slice(start), handles.slice(start)));
  return out;
}
