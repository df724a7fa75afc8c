// ListOffsets: -1 (latest) → the high watermark (read_committed: the last
// stable offset); -2 (earliest) → the log start offset; -3 (max timestamp,
// v7) → UNSUPPORTED_VERSION for the partition (the log has no max-timestamp
// lookup yet); any other timestamp → Log.offsetForTimestamp, and "none"
// (offset -1) when nothing at or after it is visible to consumers. v0 puts the
// offset in old_style_offsets.

import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP } from '@seglog/log';
import { kafkaErrorCode } from '../../protocol/index.js';
import type { ListOffsetsPartition, ListOffsetsPartitionResponse, ListOffsetsRequest, ListOffsetsResponse } from '@seglog/protocol';
import type { BrokerContext } from '../broker-context.js';
import { LEADER_EPOCH } from '../broker-context.js';
import { errorCodeOf } from '../errors.js';

const MAX_TIMESTAMP = -3;
const READ_COMMITTED = 1;

export async function handleListOffsets(ctx: BrokerContext, request: ListOffsetsRequest, version: number): Promise<ListOffsetsResponse> {
  const topics = [];
  for (const topic of request.topics) {
    const partitions: ListOffsetsPartitionResponse[] = [];
    for (const p of topic.partitions) partitions.push(await listPartition(ctx, topic.name, p, request.isolationLevel === READ_COMMITTED, version));
    topics.push({ name: topic.name, partitions });
  }
  return { throttleTimeMs: 0, topics };
}

async function listPartition(ctx: BrokerContext, topic: string, p: ListOffsetsPartition, committed: boolean, version: number): Promise<ListOffsetsPartitionResponse> {
  const log = ctx.store.get(topic, p.partitionIndex);
  if (log === undefined) return answer(p.partitionIndex, kafkaErrorCode('UNKNOWN_TOPIC_OR_PARTITION'), -1, -1, version);
  const visibleEnd = committed ? log.lastStableOffset : log.highWatermark;
  if (p.timestamp === LATEST_TIMESTAMP) return answer(p.partitionIndex, 0, -1, visibleEnd, version);
  if (p.timestamp === EARLIEST_TIMESTAMP) return answer(p.partitionIndex, 0, -1, log.logStartOffset, version);
  if (p.timestamp === MAX_TIMESTAMP || log.offsetForTimestamp === undefined) {
    return answer(p.partitionIndex, kafkaErrorCode('UNSUPPORTED_VERSION'), -1, -1, version);
  }
  if (p.timestamp < 0) return answer(p.partitionIndex, kafkaErrorCode('INVALID_REQUEST'), -1, -1, version);
  try {
    const found = await log.offsetForTimestamp(p.timestamp);
    if (found === null || found.offset >= visibleEnd) return answer(p.partitionIndex, 0, -1, -1, version);
    return { ...answer(p.partitionIndex, 0, found.timestamp, found.offset, version), leaderEpoch: found.leaderEpoch };
  } catch (error) {
    return answer(p.partitionIndex, errorCodeOf(error), -1, -1, version);
  }
}

function answer(partitionIndex: number, errorCode: number, timestamp: number, offset: number, version: number): ListOffsetsPartitionResponse {
  return {
    partitionIndex, errorCode, oldStyleOffsets: version === 0 && offset >= 0 ? [offset] : [], timestamp, offset,
    leaderEpoch: offset >= 0 ? LEADER_EPOCH : -1,
  };
}
