// DeleteGroups → deleteGroup (group-admin.ts) per group: only an Empty group
// is deleted (NON_EMPTY_GROUP otherwise), with tombstones for its record and
// offsets; an unknown one is GROUP_ID_NOT_FOUND.

import type { DeleteGroupsRequest, DeleteGroupsResponse } from '@seglog/protocol';
import { kafkaErrorCode } from '../../protocol/index.js';
import type { BrokerContext } from '../broker-context.js';
import { deleteGroup } from '../group/group-admin.js';

export async function handleDeleteGroups(ctx: BrokerContext, request: DeleteGroupsRequest): Promise<DeleteGroupsResponse> {
  const results: DeleteGroupsResponse['results'][number][] = [];
  for (const groupId of request.groupsNames) results.push({ groupId, errorCode: kafkaErrorCode(await deleteGroup(ctx.groups, groupId)) });
  return { throttleTimeMs: 0, results };
}
