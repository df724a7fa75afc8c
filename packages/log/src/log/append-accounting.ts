// The pure "accept a batch" step shared by Log and BlackholeLog: validation
// beyond the record checks (segment-size guard, follower offsets), offset
// assignment, producer-state checks (duplicates, sequences, epochs,
// transactions; reference/kafka-storage.md §11 step 7, §13, §14) and the
// commit of producer state with its aborted transactions (§11 step 8, §17).
//
// Nothing here touches a file: a plan is computed from the log's positions
// and its ProducerStateManager without changing either; the caller decides
// to store the bytes (Log) or drop them (BlackholeLog) and then calls
// commitProducerState in the same synchronous step that advances its log end
// offset. A plan that is never committed leaves no trace (two-phase producer
// state, see producer-append-info.ts).

import { assert } from '@seglog/common';
import { buildControlBatch, nextBatchSize, RecordBatch, validateBatch, validateFollowerBatch } from '@seglog/records';
import type { BatchSummary } from '@seglog/records';
import type { AppendResult } from './log-types.js';
import type { LogConfig } from '../log-config.js';
import type { CompletedTxn, ProducerAppendInfo } from '../producer/producer-append-info.js';
import type { ProducerStateManager } from '../producer/producer-state-manager.js';
import type { BatchMetadata } from '../producer/producer-state-entry.js';
import type { AbortedTxn } from '../segment/txn-index.js';
import { emptyAppend, offsetsOutOfOrder, recordListTooLarge, unexpectedAppendOffset } from '../internal/log-errors.js';

/** A transaction marker written by the transaction coordinator (WriteTxnMarkers). */
export interface TxnMarkerOptions {
  readonly type: 'COMMIT' | 'ABORT';
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly coordinatorEpoch: number;
  readonly leaderEpoch: number;
  /** The marker's timestamp (CreateTime topics). Default: now. */
  readonly timestamp?: number;
}

/** What a leader append (data batch or marker) will do once accepted. */
export interface LeaderPlan {
  /** The batch, with offsets, leader epoch and timestamps patched (null for a duplicate). */
  readonly batch: RecordBatch | null;
  readonly sizeInBytes: number;
  readonly firstOffset: number;
  readonly lastOffset: number;
  readonly maxTimestamp: number;
  readonly logAppendTime: number;
  readonly recordsCount: number;
  /** The retained batch this one duplicates: nothing is written, its offsets are answered. */
  readonly duplicate: BatchMetadata | null;
  readonly appendInfos: readonly ProducerAppendInfo[];
  readonly completedTxns: readonly CompletedTxn[];
}

/** Producer-state changes of a verbatim (follower) append. */
export interface FollowerPlan {
  readonly batches: readonly RecordBatch[];
  readonly sizeInBytes: number;
  readonly firstOffset: number;
  readonly lastOffset: number;
  readonly maxTimestamp: number;
  readonly offsetOfMaxTimestamp: number;
  readonly recordsCount: number;
  readonly appendInfos: readonly ProducerAppendInfo[];
  readonly completedTxns: readonly CompletedTxn[];
}

export interface PlanContext {
  readonly dir: string;
  readonly config: LogConfig;
  readonly logEndOffset: number;
  readonly nowMs: number;
}

const NONE: readonly never[] = [];

/** The record checks of a producer batch (Kafka's order, §11 steps 1–3). */
export function validateLeaderBatch(buffer: Buffer, config: LogConfig, nowMs: number): BatchSummary {
  return validateBatch(buffer, {
    maxMessageBytes: config.maxMessageBytes,
    messageTimestampType: config.messageTimestampType,
    now: nowMs,
    timestampBeforeMaxMs: config.messageTimestampBeforeMaxMs,
    timestampAfterMaxMs: config.messageTimestampAfterMaxMs,
    compacted: config.compacted,
  });
}

/**
 * Plans a producer batch at the log end offset: segment-size guard, then
 * the duplicate check (an idempotent retry of one of the producer's last
 * five batches is answered with its original offsets and writes nothing),
 * then the sequence/epoch/transaction checks (client origin). Throws the
 * typed error of the first failed check, with nothing changed. Patches the
 * batch only once every check has passed.
 */
export function planLeaderBatch(psm: ProducerStateManager, summary: BatchSummary, leaderEpoch: number, ctx: PlanContext): LeaderPlan {
  const size = summary.sizeInBytes;
  if (size > ctx.config.segmentBytes) throw recordListTooLarge(ctx.dir, size, ctx.config.segmentBytes);
  const hasProducer = summary.producerId >= 0;
  if (hasProducer) {
    const duplicate = psm.findDuplicateBatch(summary);
    if (duplicate !== null) return duplicatePlan(duplicate, summary.recordsCount);
  }
  const firstOffset = ctx.logEndOffset;
  const lastOffset = firstOffset + summary.lastOffsetDelta;
  assert(Number.isSafeInteger(lastOffset), 'planLeaderBatch: offset overflow');
  const logAppendTime = ctx.config.messageTimestampType === 'LogAppendTime' ? ctx.nowMs : -1;
  const maxTimestamp = logAppendTime >= 0 ? logAppendTime : summary.maxTimestamp;
  let appendInfos: readonly ProducerAppendInfo[] = NONE;
  if (hasProducer) {
    const info = psm.prepareUpdate(summary.producerId, 'client');
    info.appendDataBatch({
      producerId: summary.producerId, producerEpoch: summary.producerEpoch, baseSequence: summary.baseSequence,
      lastSequence: summary.lastSequence, firstOffset, lastOffset, maxTimestamp, isTransactional: summary.isTransactional,
    });
    appendInfos = [info];
  }
  const batch = summary.batch;
  batch.setLastOffset(lastOffset);
  batch.setPartitionLeaderEpoch(leaderEpoch);
  if (logAppendTime >= 0) batch.setMaxTimestamp('LogAppendTime', logAppendTime);
  else if (batch.maxTimestamp !== maxTimestamp) batch.setMaxTimestamp('CreateTime', maxTimestamp);
  return {
    batch, sizeInBytes: size, firstOffset, lastOffset, maxTimestamp, logAppendTime, recordsCount: summary.recordsCount,
    duplicate: null, appendInfos, completedTxns: NONE,
  };
}

function duplicatePlan(duplicate: BatchMetadata, recordsCount: number): LeaderPlan {
  return {
    batch: null, sizeInBytes: 0, firstOffset: duplicate.firstOffset, lastOffset: duplicate.lastOffset,
    maxTimestamp: duplicate.timestamp, logAppendTime: duplicate.timestamp, recordsCount,
    duplicate, appendInfos: NONE, completedTxns: NONE,
  };
}

/**
 * Plans a COMMIT/ABORT marker at the log end offset (coordinator origin:
 * only the producer epoch and the coordinator epoch are checked). Builds the
 * 78-byte control batch (§4); LogAppendTime topics stamp it with now.
 */
export function planMarker(psm: ProducerStateManager, marker: TxnMarkerOptions, ctx: PlanContext): LeaderPlan {
  const offset = ctx.logEndOffset;
  const logAppendTime = ctx.config.messageTimestampType === 'LogAppendTime' ? ctx.nowMs : -1;
  const timestamp = logAppendTime >= 0 ? logAppendTime : (marker.timestamp ?? ctx.nowMs);
  assert(Number.isSafeInteger(timestamp), 'planMarker: timestamp must be a safe integer');
  const info = psm.prepareUpdate(marker.producerId, 'coordinator');
  const completed = info.appendEndTxnMarker(
    { type: marker.type, coordinatorEpoch: marker.coordinatorEpoch, producerEpoch: marker.producerEpoch }, offset, timestamp,
  );
  const bytes = buildControlBatch({
    type: marker.type, producerId: marker.producerId, producerEpoch: marker.producerEpoch, coordinatorEpoch: marker.coordinatorEpoch,
    timestamp, baseOffset: offset, partitionLeaderEpoch: marker.leaderEpoch,
  });
  const batch = new RecordBatch(bytes);
  if (logAppendTime >= 0) batch.setMaxTimestamp('LogAppendTime', logAppendTime);
  if (bytes.length > ctx.config.segmentBytes) throw recordListTooLarge(ctx.dir, bytes.length, ctx.config.segmentBytes);
  return {
    batch, sizeInBytes: bytes.length, firstOffset: offset, lastOffset: offset, maxTimestamp: timestamp, logAppendTime, recordsCount: 1,
    duplicate: null, appendInfos: [info], completedTxns: completed === null ? NONE : [completed],
  };
}

/**
 * Frames and CRC-checks the batches of a verbatim append (offsets must
 * increase, start at or above the log end offset, fit segment.bytes), and
 * replays their producer state with replication origin (no sequence checks,
 * no duplicate detection): one append info per producer.
 */
export function planFollowerAppend(psm: ProducerStateManager, buffer: Buffer, ctx: PlanContext): FollowerPlan {
  const batches = splitFollowerBatches(buffer, ctx.dir);
  const first = batches[0] as RecordBatch;
  const last = batches[batches.length - 1] as RecordBatch;
  const size = last.start + last.sizeInBytes;
  if (size > ctx.config.segmentBytes) throw recordListTooLarge(ctx.dir, size, ctx.config.segmentBytes);
  if (first.baseOffset < ctx.logEndOffset) throw unexpectedAppendOffset(ctx.dir, first.baseOffset, last.lastOffset, ctx.logEndOffset);
  const infos = new Map<number, ProducerAppendInfo>();
  const completedTxns: CompletedTxn[] = [];
  let maxTimestamp = -1;
  let offsetOfMaxTimestamp = first.lastOffset;
  let recordsCount = 0;
  for (const batch of batches) {
    recordsCount += batch.lastOffset - batch.baseOffset + 1;
    if (batch.maxTimestamp > maxTimestamp) {
      maxTimestamp = batch.maxTimestamp;
      offsetOfMaxTimestamp = batch.lastOffset;
    }
    if (!batch.hasProducerId) continue;
    let info = infos.get(batch.producerId);
    if (info === undefined) {
      info = psm.prepareUpdate(batch.producerId, 'replication');
      infos.set(batch.producerId, info);
    }
    const completed = info.append(batch);
    if (completed !== null) completedTxns.push(completed);
  }
  return {
    batches, sizeInBytes: size, firstOffset: first.baseOffset, lastOffset: last.lastOffset, maxTimestamp, offsetOfMaxTimestamp, recordsCount,
    appendInfos: [...infos.values()], completedTxns,
  };
}

/** Frames and CRC-checks the batches of a verbatim append; offsets must increase. */
function splitFollowerBatches(buffer: Buffer, dir: string): RecordBatch[] {
  const batches: RecordBatch[] = [];
  let position = 0;
  let previousLast = -1;
  for (;;) {
    const size = nextBatchSize(buffer, position, { mode: 'memory' });
    if (size === 0) break;
    const batch = validateFollowerBatch(buffer, position);
    if (batch.baseOffset <= previousLast) throw offsetsOutOfOrder(dir, previousLast, batch.baseOffset);
    previousLast = batch.lastOffset;
    batches.push(batch);
    position += size;
  }
  if (batches.length === 0) throw emptyAppend(dir, buffer.length);
  return batches;
}

/**
 * Commits an accepted append's producer state (§11 step 8): every append
 * info, then each completed transaction — its LSO computed, handed to
 * `onAborted` if it was aborted (the log appends it to the active segment's
 * .txnindex), then marked complete — and finally the map end offset.
 * Synchronous: call it in the step that advances the log end offset.
 */
export function commitProducerState(
  psm: ProducerStateManager,
  plan: { readonly appendInfos: readonly ProducerAppendInfo[]; readonly completedTxns: readonly CompletedTxn[] },
  nextOffset: number,
  onAborted: ((txn: AbortedTxn) => void) | null,
): void {
  for (const info of plan.appendInfos) psm.update(info);
  for (const txn of plan.completedTxns) {
    const lastStableOffset = psm.lastStableOffsetForAbort(txn);
    if (txn.isAborted && onAborted !== null) {
      onAborted({ producerId: txn.producerId, firstOffset: txn.firstOffset, lastOffset: txn.lastOffset, lastStableOffset });
    }
    psm.completeTxn(txn);
  }
  psm.updateMapEndOffset(nextOffset);
}

/** LSO = min(first unstable offset clamped to ≥ logStartOffset, high watermark) (§17). */
export function lastStableOffsetOf(psm: ProducerStateManager, highWatermark: number, logStartOffset: number): number {
  const firstUnstable = psm.firstUnstableOffset();
  if (firstUnstable === null) return highWatermark;
  return Math.min(Math.max(firstUnstable, logStartOffset), highWatermark);
}

/** The answer to a leader append (a duplicate answers its original offsets). */
export function leaderResult(plan: LeaderPlan, logStartOffset: number): AppendResult {
  return {
    firstOffset: plan.firstOffset, lastOffset: plan.lastOffset, maxTimestamp: plan.maxTimestamp, offsetOfMaxTimestamp: plan.lastOffset,
    logAppendTime: plan.logAppendTime, logStartOffset, recordsCount: plan.recordsCount, sizeInBytes: plan.sizeInBytes,
  };
}

export function followerResult(plan: FollowerPlan, logStartOffset: number): AppendResult {
  return {
    firstOffset: plan.firstOffset, lastOffset: plan.lastOffset, maxTimestamp: plan.maxTimestamp, offsetOfMaxTimestamp: plan.offsetOfMaxTimestamp,
    logAppendTime: -1, logStartOffset, recordsCount: plan.recordsCount, sizeInBytes: plan.sizeInBytes,
  };
}
