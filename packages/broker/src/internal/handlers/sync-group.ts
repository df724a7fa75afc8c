// SyncGroup → GroupCoordinator.sync: the leader's assignment is stored in
// __consumer_offsets before any member is answered with its part.

import type { SyncGroupRequest, SyncGroupResponse } from '@seglog/protocol';
import { kafkaErrorCode } from '../../protocol/index.js';
import type { BrokerContext } from '../broker-context.js';

export async function handleSyncGroup(ctx: BrokerContext, request: SyncGroupRequest): Promise<SyncGroupResponse> {
  const result = await ctx.groups.sync({
    groupId: request.groupId, memberId: request.memberId, generationId: request.generationId,
    groupInstanceId: request.groupInstanceId, protocolType: request.protocolType, protocolName: request.protocolName,
    assignments: request.assignments,
  });
  return {
    throttleTimeMs: 0, errorCode: kafkaErrorCode(result.error), protocolType: result.protocolType,
    protocolName: result.protocolName, assignment: result.assignment,
  };
}
