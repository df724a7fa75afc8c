// ListGroups → listGroups (group-admin.ts); v4 filters by state (Kafka's
// state names, matched case-insensitively).

import type { ListGroupsRequest, ListGroupsResponse } from '@seglog/protocol';
import { kafkaErrorCode } from '../../protocol/index.js';
import type { BrokerContext } from '../broker-context.js';
import { listGroups } from '../group/group-admin.js';

export function handleListGroups(ctx: BrokerContext, request: ListGroupsRequest): ListGroupsResponse {
  const result = listGroups(ctx.groups, request.statesFilter);
  return {
    throttleTimeMs: 0, errorCode: kafkaErrorCode(result.error),
    groups: result.groups.map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, groupState: g.state })),
  };
}
