// One batch of the streaming accumulator (streaming-accumulator.ts), as
// plain data so it can run on a merge worker (merge-pool.ts) or on the
// calling thread. The frozen records (values back to back, one timestamp
// each, oldest first) become one batch with the span's base sequence:
//   merge  streamed through ONE BoundedBatchBuilder bounded by maxBytes
//          COMPRESSED, until it refuses a record. The result says how many
//          records it holds (the rest were never compressed and go back to
//          the backlog), or why it failed (a codec error or a broken bound:
//          the builder demoted; the caller puts every record back, for the
//          uncompressed-bounded path);
//   plain  the uncompressed-bounded path's batch, all of them, one-shot
//          (buildBatch); uncompressed if the codec fails or the compressed
//          batch would pass maxBytes (franz-go sends those uncompressed too).

import { SeglogError } from '@seglog/common';
import { BoundedBatchBuilder, Codec, buildBatch } from '@seglog/records';
import type { CodecId, RecordInput } from '@seglog/records';

/** Test hook of a job: the worker throws inside the merge, exits (a crashed worker), or never answers (a hung one). */
export type MergeFaultKind = 'throw' | 'exit' | 'hang';

export const MERGE_FAULT_KINDS: readonly MergeFaultKind[] = ['throw', 'exit', 'hang'];

export interface MergeJob {
  readonly id: number;
  readonly kind: 'merge' | 'plain';
  readonly codec: CodecId;
  /** The whole sealed batch, header included (the broker's max.message.bytes). */
  readonly maxBytes: number;
  readonly producerId: number;
  readonly producerEpoch: number;
  /** -1 when not idempotent. */
  readonly baseSequence: number;
  readonly recordBytes: number;
  /** count × recordBytes bytes: the frozen records' values, oldest first. */
  readonly values: Uint8Array;
  /** One per frozen record. */
  readonly timestamps: Float64Array;
  readonly fault: MergeFaultKind | null;
}

export interface MergeResult {
  readonly id: number;
  /** Records in `batch`, the oldest frozen ones (0 on failure). */
  readonly accepted: number;
  readonly batch: Uint8Array | null;
  /** Why the merge failed (null: it did not). */
  readonly failure: string | null;
}

export function failedMerge(id: number, failure: string): MergeResult {
  return { id, accepted: 0, batch: null, failure };
}

export function runMergeJob(job: MergeJob): MergeResult {
  const count = job.timestamps.length;
  if (job.values.length !== count * job.recordBytes) return failedMerge(job.id, 'values and timestamps differ');
  try {
    if (job.fault === 'throw') throw new Error('injected merge failure');
    if (job.kind === 'plain') return runPlain(job);
    const builder = new BoundedBatchBuilder({ codec: job.codec, maxBytes: job.maxBytes, producerId: job.producerId, producerEpoch: job.producerEpoch });
    const size = job.recordBytes;
    let accepted = 0;
    while (accepted < count) {
      const at = accepted * size;
      const record: RecordInput = { value: job.values.subarray(at, at + size), timestamp: job.timestamps[accepted] as number };
      if (!builder.tryAppend(record)) break;
      accepted++;
    }
    if (builder.demoted) return failedMerge(job.id, `codec failure: ${String(builder.demotionCause)}`);
    if (accepted === 0) return failedMerge(job.id, 'no record fits a batch');
    const batches = builder.seal({ baseSequence: job.baseSequence });
    if (builder.demoted || batches.length !== 1) return failedMerge(job.id, `codec failure at seal: ${String(builder.demotionCause)}`);
    const batch = batches[0] as Buffer;
    if (batch.length > job.maxBytes) return failedMerge(job.id, `sealed ${batch.length} bytes > ${job.maxBytes}`);
    return { id: job.id, accepted, batch, failure: null };
  } catch (error) {
    return failedMerge(job.id, error instanceof Error ? error.message : String(error));
  }
}

function runPlain(job: MergeJob): MergeResult {
  const count = job.timestamps.length;
  const size = job.recordBytes;
  const records: RecordInput[] = new Array<RecordInput>(count);
  for (let i = 0; i < count; i++) records[i] = { value: job.values.subarray(i * size, (i + 1) * size), timestamp: job.timestamps[i] as number };
  const options = { records, compression: job.codec, producerId: job.producerId, producerEpoch: job.producerEpoch, baseSequence: job.baseSequence };
  let batch: Buffer | null = null;
  try {
    batch = buildBatch(options);
  } catch (error) {
    if (!(error instanceof SeglogError)) throw error; // a codec that fails one-shot: the records still go, uncompressed
  }
  if (batch === null || batch.length > job.maxBytes) batch = buildBatch({ ...options, compression: Codec.none });
  if (batch.length > job.maxBytes) return failedMerge(job.id, `plain batch of ${batch.length} bytes > ${job.maxBytes}`);
  return { id: job.id, accepted: count, batch, failure: null };
}
