// JoinGroup (key 11), versions 0–9: descriptions transcribed from Kafka's
// JoinGroupRequest.json / JoinGroupResponse.json (apache/kafka 1eb7644), restricted to the versions the broker supports.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const JOIN_GROUP_REQUEST = {
  name: 'JoinGroupRequest', kind: 'request', apiKey: 11,
  validVersions: '0-9', flexibleVersions: '6+',
  fields: [
    { name: 'groupId', type: 'string', versions: '0+' },
    { name: 'sessionTimeoutMs', type: 'int32', versions: '0+' },
    { name: 'rebalanceTimeoutMs', type: 'int32', versions: '1+', default: -1 },
    { name: 'memberId', type: 'string', versions: '0+' },
    { name: 'groupInstanceId', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
    { name: 'protocolType', type: 'string', versions: '0+' },
    { name: 'protocols', type: '[]JoinGroupRequestProtocol', versions: '0+', fields: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'metadata', type: 'bytes', versions: '0+' },
    ] },
    { name: 'reason', type: 'string', versions: '8+', nullableVersions: '8+', default: null },
  ],
} as const satisfies MessageDescription;

export const JOIN_GROUP_RESPONSE = {
  name: 'JoinGroupResponse', kind: 'response', apiKey: 11,
  validVersions: '0-9', flexibleVersions: '6+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '2+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'generationId', type: 'int32', versions: '0+', default: -1 },
    { name: 'protocolType', type: 'string', versions: '7+', nullableVersions: '7+', default: null },
    { name: 'protocolName', type: 'string', versions: '0+', nullableVersions: '7+' },
    { name: 'leader', type: 'string', versions: '0+' },
    { name: 'skipAssignment', type: 'bool', versions: '9+', default: false },
    { name: 'memberId', type: 'string', versions: '0+' },
    { name: 'members', type: '[]JoinGroupResponseMember', versions: '0+', fields: [
      { name: 'memberId', type: 'string', versions: '0+' },
      { name: 'groupInstanceId', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
      { name: 'metadata', type: 'bytes', versions: '0+' },
    ] },
  ],
} as const satisfies MessageDescription;

export type JoinGroupRequest = MessageOf<typeof JOIN_GROUP_REQUEST>;
export type JoinGroupResponse = MessageOf<typeof JOIN_GROUP_RESPONSE>;
