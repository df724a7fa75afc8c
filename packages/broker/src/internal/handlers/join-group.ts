// JoinGroup → GroupCoordinator.join (the answer waits for the rebalance's
// join phase). v4+ require a known member id (MEMBER_ID_REQUIRED first);
// before v1 the rebalance timeout is the session timeout (Kafka's rule).
// protocolName is nullable only from v7: before, an absent one is ''.

import type { JoinGroupRequest, JoinGroupResponse } from '@seglog/protocol';
import { kafkaErrorCode } from '../../protocol/index.js';
import type { BrokerContext } from '../broker-context.js';

export async function handleJoinGroup(
  ctx: BrokerContext, request: JoinGroupRequest, version: number, client: { clientId: string | null; host: string },
): Promise<JoinGroupResponse> {
  const result = await ctx.groups.join({
    groupId: request.groupId, memberId: request.memberId, groupInstanceId: request.groupInstanceId,
    clientId: client.clientId ?? '', clientHost: client.host, sessionTimeoutMs: request.sessionTimeoutMs,
    rebalanceTimeoutMs: version >= 1 ? request.rebalanceTimeoutMs : request.sessionTimeoutMs,
    protocolType: request.protocolType, protocols: request.protocols, requireKnownMemberId: version >= 4,
  });
  return {
    throttleTimeMs: 0, errorCode: kafkaErrorCode(result.error), generationId: result.generationId,
    protocolType: result.protocolType, protocolName: result.protocolName ?? (version >= 7 ? null : ''),
    leader: result.leaderId, skipAssignment: false, memberId: result.memberId, members: result.members,
  };
}
