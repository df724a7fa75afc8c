// OffsetFetch → fetchOffsets (group-admin.ts). v0-7 ask for one group (a null
// topic list, v2+, means every committed offset), v8 for several. A partition
// without a commit answers offset -1 and no error. A group-level error goes in
// the top-level errorCode from v2 (the group's from v8) and, before v2, in
// every partition.

import type { OffsetFetchRequest, OffsetFetchResponse } from '@seglog/protocol';
import { kafkaErrorCode } from '../../protocol/index.js';
import type { BrokerContext } from '../broker-context.js';
import { fetchOffsets, type FetchedOffset } from '../group/group-admin.js';

type Topics = readonly { readonly name: string; readonly partitionIndexes: readonly number[] }[] | null;

interface FetchedTopic {
  name: string;
  partitions: { partitionIndex: number; committedOffset: number; committedLeaderEpoch: number; metadata: string; errorCode: number }[];
}

export function handleOffsetFetch(ctx: BrokerContext, request: OffsetFetchRequest, version: number): OffsetFetchResponse {
  if (version >= 8) {
    return {
      throttleTimeMs: 0, topics: [], errorCode: 0,
      groups: request.groups.map((group) => {
        const { errorCode, topics } = fetchGroup(ctx, group.groupId, group.topics, false);
        return { groupId: group.groupId, topics, errorCode };
      }),
    };
  }
  const { errorCode, topics } = fetchGroup(ctx, request.groupId, version >= 2 ? request.topics : request.topics ?? [], version < 2);
  return { throttleTimeMs: 0, topics, errorCode: version >= 2 ? errorCode : 0, groups: [] };
}

function fetchGroup(ctx: BrokerContext, groupId: string, topics: Topics, errorInPartitions: boolean): { errorCode: number; topics: FetchedTopic[] } {
  const wanted = topics === null ? null : topics.flatMap((t) => t.partitionIndexes.map((partition) => ({ topic: t.name, partition })));
  const result = fetchOffsets(ctx.groups, groupId, wanted);
  const errorCode = kafkaErrorCode(result.error);
  const offsets: FetchedOffset[] = result.error === 'NONE' ? result.offsets
    : (wanted ?? []).map(({ topic, partition }) => ({ topic, partition, offset: -1, leaderEpoch: -1, metadata: '' }));
  const partitionError = errorInPartitions ? errorCode : 0;
  const byTopic = new Map<string, FetchedTopic>();
  for (const o of offsets) {
    let entry = byTopic.get(o.topic);
    if (entry === undefined) {
      entry = { name: o.topic, partitions: [] };
      byTopic.set(o.topic, entry);
    }
    entry.partitions.push({
      partitionIndex: o.partition, committedOffset: o.offset, committedLeaderEpoch: o.leaderEpoch, metadata: o.metadata, errorCode: partitionError,
    });
  }
  return { errorCode, topics: [...byTopic.values()] };
}
