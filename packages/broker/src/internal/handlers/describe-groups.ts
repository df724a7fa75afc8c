// DescribeGroups → describeGroup (group-admin.ts) per group: Kafka's summary
// (member metadata and assignments only while Stable; an unknown group reads
// as Dead with no error). Authorized operations are not computed (no ACLs):
// Kafka's "not requested" value, INT32_MIN.

import type { DescribeGroupsRequest, DescribeGroupsResponse } from '@seglog/protocol';
import { kafkaErrorCode } from '../../protocol/index.js';
import type { BrokerContext } from '../broker-context.js';
import { describeGroup } from '../group/group-admin.js';

const AUTHORIZED_OPERATIONS_NONE = -2147483648;

export function handleDescribeGroups(ctx: BrokerContext, request: DescribeGroupsRequest): DescribeGroupsResponse {
  return {
    throttleTimeMs: 0,
    groups: request.groups.map((groupId) => {
      const summary = describeGroup(ctx.groups, groupId);
      return {
        errorCode: kafkaErrorCode(summary.error), groupId, groupState: summary.state, protocolType: summary.protocolType,
        protocolData: summary.protocolData, authorizedOperations: AUTHORIZED_OPERATIONS_NONE,
        members: summary.members.map((m) => ({
          memberId: m.memberId, groupInstanceId: m.groupInstanceId, clientId: m.clientId, clientHost: m.clientHost,
          memberMetadata: m.metadata, memberAssignment: m.assignment,
        })),
      };
    }),
  };
}
