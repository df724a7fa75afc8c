// Produce: each partition's records go to Log.appendAsLeader (leader epoch
// 0). The answer waits for the ack condition:
//   acks 1            → written(lastOffset) (the batch is in the file);
//   acks -1, 'sync'   → durable(lastOffset) (covered by an fdatasync);
//   acks -1, 'written'→ written(lastOffset);
//   acks 0            → written(lastOffset), and no response at all.
// Once it holds, the high watermark moves to lastOffset + 1 (a single node is
// the whole ISR) and fetches parked on the partition are woken. So a consumer
// never sees a record before the producer could have been told it is stored.
// Errors are per partition, mapped through the error's `.kafka`.
//
// A transactional batch is first verified against the transaction
// coordinator (KIP-890 part 1, below: unverifiedTransactional).

import { RECORD_BATCH_OVERHEAD, RecordBatch } from '@seglog/records';
import { kafkaErrorCode } from '../../protocol/index.js';
import type { ProducePartitionData, ProducePartitionResponse, ProduceRequest, ProduceResponse, ProduceTopicResponse } from '@seglog/protocol';
import type { BrokerContext } from '../broker-context.js';
import { LEADER_EPOCH } from '../broker-context.js';
import { errorMessageOf, partitionErrorCodeOf } from '../errors.js';
import type { PartitionLog } from '../topic-store.js';

export async function handleProduce(ctx: BrokerContext, request: ProduceRequest): Promise<ProduceResponse> {
  const acks = request.acks;
  const pending: Promise<ProducePartitionResponse>[][] = [];
  for (const topic of request.topicData) {
    pending.push(topic.partitionData.map((data) => {
      if (acks !== 0 && acks !== 1 && acks !== -1) return Promise.resolve(failed(data.index, kafkaErrorCode('INVALID_REQUIRED_ACKS'), 'acks must be 0, 1 or -1'));
      return producePartition(ctx, request.transactionalId, topic.name, data, acks);
    }));
  }
  const responses: ProduceTopicResponse[] = [];
  for (let i = 0; i < request.topicData.length; i++) {
    const topic = request.topicData[i];
    const partitions = pending[i];
    if (topic === undefined || partitions === undefined) continue;
    responses.push({ name: topic.name, partitionResponses: await Promise.all(partitions) });
  }
  return { responses, throttleTimeMs: 0 };
}

async function producePartition(
  ctx: BrokerContext, transactionalId: string | null, topic: string, data: ProducePartitionData, acks: number,
): Promise<ProducePartitionResponse> {
  const log = ctx.store.get(topic, data.index);
  if (log === undefined) return failed(data.index, kafkaErrorCode('UNKNOWN_TOPIC_OR_PARTITION'), `unknown topic-partition ${topic}-${data.index}`);
  if (data.records === null || data.records.length === 0) return failed(data.index, kafkaErrorCode('INVALID_RECORD'), 'no records');
  const unverified = unverifiedTransactional(ctx, transactionalId, topic, data.index, data.records);
  if (unverified !== null) return unverified;
  const bytes = data.records.length;
  try {
    const result = await log.appendAsLeader(data.records, { leaderEpoch: LEADER_EPOCH });
    ctx.stats.appends++;
    ctx.stats.appendedBytes += bytes;
    if (acks === -1 && ctx.options.ackMode === 'sync') await log.durable(result.lastOffset);
    else await log.written(result.lastOffset);
    advanceHighWatermark(ctx, log, result.lastOffset + 1);
    return {
      index: data.index, errorCode: 0, baseOffset: result.firstOffset, logAppendTimeMs: result.logAppendTime,
      logStartOffset: result.logStartOffset, recordErrors: [], errorMessage: null,
    };
  } catch (error) {
    return failed(data.index, partitionErrorCodeOf(ctx.store, log, error), errorMessageOf(error));
  }
}

/**
 * KIP-890 part 1, broker-side verification (Kafka's ReplicaManager.appendRecords
 * with AddPartitionsToTxnManager, facts not code): a transactional batch
 * (attributes bit 4, producerId >= 0) is appended only when its producer id
 * and epoch hold the request's transactionalId and that id's Ongoing
 * transaction contains this partition (AddPartitionsToTxn came first).
 * Why: the coordinator writes markers only to the partitions it holds, so a
 * batch on a partition never added opens a transaction there that nothing
 * ever closes; the partition's last stable offset stops for good and
 * read_committed consumers hang. Our coordinator lives in this process: the
 * check is a synchronous lookup, not Kafka's request to the coordinator.
 *
 * Answers, as Kafka translates the coordinator's: not in the transaction, no
 * transaction open, or the pair not the id's (or no transactionalId in the
 * request) → INVALID_TXN_STATE, nothing appended (Kafka passes a wrong pair
 * through as INVALID_PRODUCER_ID_MAPPING; the transaction is just as absent);
 * an old epoch → INVALID_PRODUCER_EPOCH (fenced, what the partition itself
 * says); coordinator still loading or the transaction being prepared →
 * NOT_ENOUGH_REPLICAS, which producers retry.
 *
 * Only client Produce requests pass here: the coordinators' own writes
 * (markers through Log.appendMarker, __consumer_offsets and
 * __transaction_state records through Log.appendAsLeader) never do.
 */
function unverifiedTransactional(
  ctx: BrokerContext, transactionalId: string | null, topic: string, index: number, records: Buffer,
): ProducePartitionResponse | null {
  const batch = transactionalBatchOf(records);
  if (batch === null) return null;
  const error = transactionalId === null
    ? 'INVALID_PRODUCER_ID_MAPPING'
    : ctx.txns.verifyProduce({ transactionalId, producerId: batch.producerId, producerEpoch: batch.producerEpoch }, { topic, partition: index });
  switch (error) {
    case 'NONE': return null;
    case 'PRODUCER_FENCED':
      return failed(index, kafkaErrorCode('INVALID_PRODUCER_EPOCH'), `producer epoch ${batch.producerEpoch} is not the current one of transactional id ${String(transactionalId)}`);
    case 'COORDINATOR_LOAD_IN_PROGRESS': case 'CONCURRENT_TRANSACTIONS':
      return failed(index, kafkaErrorCode('NOT_ENOUGH_REPLICAS'), `unable to verify that the partition is in the transaction: ${error}`);
    default:
      return failed(index, kafkaErrorCode('INVALID_TXN_STATE'), `${topic}-${index} was not added to an ongoing transaction of producer ${batch.producerId} (transactional id ${String(transactionalId)})`);
  }
}

/** The batch when `records` starts with a transactional producer batch; null otherwise (a malformed one is left to appendAsLeader's validation). */
function transactionalBatchOf(records: Buffer): RecordBatch | null {
  // validateBatch admits exactly one batch per partition: its header decides.
  if (records.length < RECORD_BATCH_OVERHEAD) return null;
  try {
    const batch = new RecordBatch(records);
    return batch.isTransactional && batch.producerId >= 0 ? batch : null;
  } catch {
    return null;
  }
}

/** Moves the HW forward (never back) and wakes fetches parked on the partition. */
export function advanceHighWatermark(ctx: BrokerContext, log: PartitionLog, offset: number): void {
  if (offset <= log.highWatermark) return;
  log.updateHighWatermark(offset);
  ctx.waiters.notify(log);
}

function failed(index: number, errorCode: number, message: string): ProducePartitionResponse {
  return { index, errorCode, baseOffset: -1, logAppendTimeMs: -1, logStartOffset: -1, recordErrors: [], errorMessage: message };
}
