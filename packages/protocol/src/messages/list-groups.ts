// ListGroups (key 16), versions 0–4: descriptions transcribed from Kafka's
// ListGroupsRequest.json / ListGroupsResponse.json (apache/kafka 1eb7644), restricted to the versions the broker supports.
// v5 (the group-type filter of KIP-848) is not offered.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const LIST_GROUPS_REQUEST = {
  name: 'ListGroupsRequest', kind: 'request', apiKey: 16,
  validVersions: '0-4', flexibleVersions: '3+',
  fields: [
    { name: 'statesFilter', type: '[]string', versions: '4+' },
  ],
} as const satisfies MessageDescription;

export const LIST_GROUPS_RESPONSE = {
  name: 'ListGroupsResponse', kind: 'response', apiKey: 16,
  validVersions: '0-4', flexibleVersions: '3+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '1+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'groups', type: '[]ListedGroup', versions: '0+', fields: [
      { name: 'groupId', type: 'string', versions: '0+' },
      { name: 'protocolType', type: 'string', versions: '0+' },
      { name: 'groupState', type: 'string', versions: '4+' },
    ] },
  ],
} as const satisfies MessageDescription;

export type ListGroupsRequest = MessageOf<typeof LIST_GROUPS_REQUEST>;
export type ListGroupsResponse = MessageOf<typeof LIST_GROUPS_RESPONSE>;
