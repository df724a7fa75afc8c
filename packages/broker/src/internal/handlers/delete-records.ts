// DeleteRecords: Log.deleteRecords(offset) per partition (-1 = up to the high
// watermark); the answer's low watermark is the new log start offset. The
// data itself goes with the log's next retention pass.

import { kafkaErrorCode } from '../../protocol/index.js';
import type { DeleteRecordsPartitionResult, DeleteRecordsRequest, DeleteRecordsResponse } from '@seglog/protocol';
import type { BrokerContext } from '../broker-context.js';
import { errorCodeOf } from '../errors.js';

export async function handleDeleteRecords(ctx: BrokerContext, request: DeleteRecordsRequest): Promise<DeleteRecordsResponse> {
  const topics = [];
  for (const topic of request.topics) {
    const partitions: DeleteRecordsPartitionResult[] = [];
    for (const p of topic.partitions) {
      const log = ctx.store.get(topic.name, p.partitionIndex);
      if (log === undefined || log.deleteRecords === undefined) {
        const code = log === undefined ? kafkaErrorCode('UNKNOWN_TOPIC_OR_PARTITION') : kafkaErrorCode('KAFKA_STORAGE_ERROR');
        partitions.push({ partitionIndex: p.partitionIndex, lowWatermark: -1, errorCode: code });
        continue;
      }
      try {
        partitions.push({ partitionIndex: p.partitionIndex, lowWatermark: await log.deleteRecords(p.offset), errorCode: 0 });
      } catch (error) {
        partitions.push({ partitionIndex: p.partitionIndex, lowWatermark: -1, errorCode: errorCodeOf(error) });
      }
    }
    topics.push({ name: topic.name, partitions });
  }
  return { throttleTimeMs: 0, topics };
}
