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
      return producePartition(ctx, topic.name, data, acks);
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

async function producePartition(ctx: BrokerContext, topic: string, data: ProducePartitionData, acks: number): Promise<ProducePartitionResponse> {
  const log = ctx.store.get(topic, data.index);
  if (log === undefined) return failed(data.index, kafkaErrorCode('UNKNOWN_TOPIC_OR_PARTITION'), `unknown topic-partition ${topic}-${data.index}`);
  if (data.records === null || data.records.length === 0) return failed(data.index, kafkaErrorCode('INVALID_RECORD'), 'no records');
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

/** Moves the HW forward (never back) and wakes fetches parked on the partition. */
export function advanceHighWatermark(ctx: BrokerContext, log: PartitionLog, offset: number): void {
  if (offset <= log.highWatermark) return;
  log.updateHighWatermark(offset);
  ctx.waiters.notify(log);
}

function failed(index: number, errorCode: number, message: string): ProducePartitionResponse {
  return { index, errorCode, baseOffset: -1, logAppendTimeMs: -1, logStartOffset: -1, recordErrors: [], errorMessage: message };
}
