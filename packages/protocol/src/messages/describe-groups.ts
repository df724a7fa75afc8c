// DescribeGroups (key 15), versions 0–5: descriptions transcribed from Kafka's
// DescribeGroupsRequest.json / DescribeGroupsResponse.json (apache/kafka 1eb7644), restricted to the versions the broker supports.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const DESCRIBE_GROUPS_REQUEST = {
  name: 'DescribeGroupsRequest', kind: 'request', apiKey: 15,
  validVersions: '0-5', flexibleVersions: '5+',
  fields: [
    { name: 'groups', type: '[]string', versions: '0+' },
    { name: 'includeAuthorizedOperations', type: 'bool', versions: '3+' },
  ],
} as const satisfies MessageDescription;

export const DESCRIBE_GROUPS_RESPONSE = {
  name: 'DescribeGroupsResponse', kind: 'response', apiKey: 15,
  validVersions: '0-5', flexibleVersions: '5+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '1+' },
    { name: 'groups', type: '[]DescribedGroup', versions: '0+', fields: [
      { name: 'errorCode', type: 'int16', versions: '0+' },
      { name: 'groupId', type: 'string', versions: '0+' },
      { name: 'groupState', type: 'string', versions: '0+' },
      { name: 'protocolType', type: 'string', versions: '0+' },
      { name: 'protocolData', type: 'string', versions: '0+' },
      { name: 'members', type: '[]DescribedGroupMember', versions: '0+', fields: [
        { name: 'memberId', type: 'string', versions: '0+' },
        { name: 'groupInstanceId', type: 'string', versions: '4+', nullableVersions: '4+', default: null },
        { name: 'clientId', type: 'string', versions: '0+' },
        { name: 'clientHost', type: 'string', versions: '0+' },
        { name: 'memberMetadata', type: 'bytes', versions: '0+' },
        { name: 'memberAssignment', type: 'bytes', versions: '0+' },
      ] },
      { name: 'authorizedOperations', type: 'int32', versions: '3+', default: -2147483648 },
    ] },
  ],
} as const satisfies MessageDescription;

export type DescribeGroupsRequest = MessageOf<typeof DESCRIBE_GROUPS_REQUEST>;
export type DescribeGroupsResponse = MessageOf<typeof DESCRIBE_GROUPS_RESPONSE>;
