// LeaveGroup → GroupCoordinator.leave. v0-2 name one member and answer with
// its error at the top level; v3+ name several (by member id, or by
// group.instance.id alone) and answer per member.

import type { LeaveGroupRequest, LeaveGroupResponse } from '@seglog/protocol';
import { kafkaErrorCode } from '../../protocol/index.js';
import type { BrokerContext } from '../broker-context.js';

export function handleLeaveGroup(ctx: BrokerContext, request: LeaveGroupRequest, version: number): LeaveGroupResponse {
  const leaving = version >= 3 ? request.members : [{ memberId: request.memberId, groupInstanceId: null }];
  const result = ctx.groups.leave(request.groupId, leaving);
  if (version < 3) {
    const error = result.error !== 'NONE' ? result.error : result.members[0]?.error ?? 'NONE';
    return { throttleTimeMs: 0, errorCode: kafkaErrorCode(error), members: [] };
  }
  return {
    throttleTimeMs: 0, errorCode: kafkaErrorCode(result.error),
    members: result.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: kafkaErrorCode(m.error) })),
  };
}
