// DeleteGroups (key 42), versions 0–2: descriptions transcribed from Kafka's
// DeleteGroupsRequest.json / DeleteGroupsResponse.json (apache/kafka 1eb7644), restricted to the versions the broker supports.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const DELETE_GROUPS_REQUEST = {
  name: 'DeleteGroupsRequest', kind: 'request', apiKey: 42,
  validVersions: '0-2', flexibleVersions: '2+',
  fields: [
    { name: 'groupsNames', type: '[]string', versions: '0+' },
  ],
} as const satisfies MessageDescription;

export const DELETE_GROUPS_RESPONSE = {
  name: 'DeleteGroupsResponse', kind: 'response', apiKey: 42,
  validVersions: '0-2', flexibleVersions: '2+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'results', type: '[]DeletableGroupResult', versions: '0+', fields: [
      { name: 'groupId', type: 'string', versions: '0+' },
      { name: 'errorCode', type: 'int16', versions: '0+' },
    ] },
  ],
} as const satisfies MessageDescription;

export type DeleteGroupsRequest = MessageOf<typeof DELETE_GROUPS_REQUEST>;
export type DeleteGroupsResponse = MessageOf<typeof DELETE_GROUPS_RESPONSE>;
