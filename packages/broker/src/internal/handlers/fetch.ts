// Fetch: reads every requested partition up to its high watermark
// (read_committed: up to the last stable offset, with the aborted
// transactions the plan carries), bounded by partitionMaxBytes and the
// response's maxBytes (the first partition with data may exceed both by its
// first batch: Kafka's KIP-74 rule). When fewer than minBytes came back and
// no partition failed, the plans are released and the request parks in
// FetchWaiters until a read partition's high watermark moves (an acked
// produce), maxWaitMs passes (capped by maxFetchWaitMs), or the broker stops;
// then it reads again. A sealed segment whose rest holds only record-less
// batches (left by the log cleaner) is passed over for the next segment
// (ReadOptions.skipRecordless): a consumer needs nothing from them, and
// kafkajs 2.2.4, which learns its next offset only from records, would
// otherwise fetch that offset forever.
//
// The records of each partition stay a FetchPlan (file ranges or tail-cache
// slices) inside the response body; the connection writes the frame with
// @seglog/fetch's writeFetch through a CompositeFetchPlan, so record bytes
// never pass through a JS copy on the sendfile path. Every plan is released
// exactly once: by writeFetch, or by the connection when it never writes.

import type { FetchPlan } from '@seglog/log';
import { kafkaErrorCode } from '../../protocol/index.js';
import type { FetchPartition, FetchPartitionResponse, FetchRequest, FetchResponse, FetchTopicResponse } from '@seglog/protocol';
import type { BrokerContext } from '../broker-context.js';
import { errorMessageOf, partitionErrorCodeOf } from '../errors.js';
import type { PartitionLog } from '../topic-store.js';

const EMPTY = Buffer.alloc(0);
/** Damaged batches remembered as already logged. */
const MAX_REPORTED_DAMAGE = 1024;
const READ_COMMITTED = 1;

interface Round {
  readonly topics: FetchTopicResponse[];
  readonly plans: FetchPlan[];
  readonly logs: PartitionLog[];
  /** Each log's high watermark when it was read (same order as logs). */
  readonly highWatermarks: number[];
  bytes: number;
  errors: number;
}

export async function handleFetch(ctx: BrokerContext, request: FetchRequest): Promise<FetchResponse> {
  ctx.stats.fetches++;
  const waitMs = Math.max(0, Math.min(request.maxWaitMs, ctx.options.maxFetchWaitMs));
  const deadline = Date.now() + waitMs;
  for (;;) {
    const round = await readRound(ctx, request);
    const remainingMs = deadline - Date.now();
    if (round.bytes >= request.minBytes || round.errors > 0 || remainingMs <= 0 || ctx.stopping) {
      ctx.stats.fetchedBytes += round.bytes;
      return { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: round.topics };
    }
    await Promise.all(round.plans.map((plan) => plan.release()));
    await ctx.waiters.wait(round.logs, remainingMs, () => moved(round));
  }
}

function moved(round: Round): boolean {
  for (let i = 0; i < round.logs.length; i++) {
    if ((round.logs[i] as PartitionLog).highWatermark !== round.highWatermarks[i]) return true;
  }
  return false;
}

async function readRound(ctx: BrokerContext, request: FetchRequest): Promise<Round> {
  const round: Round = { topics: [], plans: [], logs: [], highWatermarks: [], bytes: 0, errors: 0 };
  try {
    for (const topic of request.topics) {
      const partitions: FetchPartitionResponse[] = [];
      for (const partition of topic.partitions) partitions.push(await readPartition(ctx, request, topic.topic, partition, round));
      round.topics.push({ topic: topic.topic, partitions });
    }
  } catch (error) {
    await Promise.all(round.plans.map((plan) => plan.release()));
    throw error;
  }
  return round;
}

async function readPartition(ctx: BrokerContext, request: FetchRequest, topic: string, p: FetchPartition, round: Round): Promise<FetchPartitionResponse> {
  const log = ctx.store.get(topic, p.partition);
  if (log === undefined) {
    round.errors++;
    return partitionError(p.partition, kafkaErrorCode('UNKNOWN_TOPIC_OR_PARTITION'), null);
  }
  round.logs.push(log);
  round.highWatermarks.push(log.highWatermark);
  const committed = request.isolationLevel === READ_COMMITTED;
  const limit = Math.max(0, Math.min(p.partitionMaxBytes, request.maxBytes - round.bytes));
  let plan: FetchPlan;
  try {
    plan = await log.read(p.fetchOffset, limit, {
      maxOffset: log.highWatermark, isolation: committed ? 'read_committed' : 'read_uncommitted', minOneMessage: round.bytes === 0, skipRecordless: true,
    });
  } catch (error) {
    round.errors++;
    const damaged = reportDamage(ctx, topic, p.partition, error);
    return partitionError(p.partition, damaged ? kafkaErrorCode('CORRUPT_MESSAGE') : partitionErrorCodeOf(ctx.store, log, error), log);
  }
  const aborted = committed ? plan.abortedTransactions.map((t) => ({ producerId: t.producerId, firstOffset: t.firstOffset })) : null;
  const base = {
    partitionIndex: p.partition, errorCode: 0, highWatermark: plan.highWatermark, lastStableOffset: plan.lastStableOffset,
    logStartOffset: plan.logStartOffset, abortedTransactions: aborted, preferredReadReplica: -1,
  };
  if (plan.isEmpty) {
    await plan.release();
    return { ...base, records: EMPTY };
  }
  round.plans.push(plan);
  round.bytes += plan.totalBytes;
  return { ...base, records: plan };
}

/**
 * Read-time damage is logged once per place with its file and position, and
 * the fetch gets CORRUPT_MESSAGE (2), Kafka's code for a corrupt batch at
 * fetch. Two kinds: SEGLOG_ERR_LOG_CORRUPT_BATCH (a batch of a segment is
 * damaged on disk; a fetch from the offset the message names reads on) and
 * SEGLOG_ERR_LOG_CORRUPTION met by a read (a sealed segment that lost bytes
 * after a clean stop, found when its index first loads: every read of that
 * segment is refused, the segments after it are served). Returns whether
 * the error was one of them.
 */
function reportDamage(ctx: BrokerContext, topic: string, partition: number, error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'SEGLOG_ERR_LOG_CORRUPT_BATCH' && code !== 'SEGLOG_ERR_LOG_CORRUPTION') return false;
  const context = (error as { context?: { path?: unknown; position?: unknown } }).context;
  const key = `${String(context?.path)}@${String(context?.position)}`;
  if (ctx.reportedDamage.has(key)) return true;
  if (ctx.reportedDamage.size < MAX_REPORTED_DAMAGE) ctx.reportedDamage.add(key); // beyond the bound: said per fetch
  const where = code === 'SEGLOG_ERR_LOG_CORRUPTION' ? ` (${String(context?.path)} at position ${String(context?.position)})` : '';
  ctx.options.log(`seglog broker: fetch ${topic}-${partition}: ${errorMessageOf(error)}${where} (answered CORRUPT_MESSAGE)`);
  return true;
}

function partitionError(partition: number, errorCode: number, log: PartitionLog | null): FetchPartitionResponse {
  return {
    partitionIndex: partition, errorCode,
    highWatermark: log?.highWatermark ?? -1, lastStableOffset: log?.lastStableOffset ?? -1, logStartOffset: log?.logStartOffset ?? -1,
    abortedTransactions: null, preferredReadReplica: -1, records: EMPTY,
  };
}
