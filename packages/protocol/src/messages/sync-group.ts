// SyncGroup (key 14), versions 0–5: descriptions transcribed from Kafka's
// SyncGroupRequest.json / SyncGroupResponse.json (apache/kafka 1eb7644), restricted to the versions the broker supports.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const SYNC_GROUP_REQUEST = {
  name: 'SyncGroupRequest', kind: 'request', apiKey: 14,
  validVersions: '0-5', flexibleVersions: '4+',
  fields: [
    { name: 'groupId', type: 'string', versions: '0+' },
    { name: 'generationId', type: 'int32', versions: '0+' },
    { name: 'memberId', type: 'string', versions: '0+' },
    { name: 'groupInstanceId', type: 'string', versions: '3+', nullableVersions: '3+', default: null },
    { name: 'protocolType', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
    { name: 'protocolName', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
    { name: 'assignments', type: '[]SyncGroupRequestAssignment', versions: '0+', fields: [
      { name: 'memberId', type: 'string', versions: '0+' },
      { name: 'assignment', type: 'bytes', versions: '0+' },
    ] },
  ],
} as const satisfies MessageDescription;

export const SYNC_GROUP_RESPONSE = {
  name: 'SyncGroupResponse', kind: 'response', apiKey: 14,
  validVersions: '0-5', flexibleVersions: '4+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '1+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'protocolType', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
    { name: 'protocolName', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
    { name: 'assignment', type: 'bytes', versions: '0+' },
  ],
} as const satisfies MessageDescription;

export type SyncGroupRequest = MessageOf<typeof SYNC_GROUP_REQUEST>;
export type SyncGroupResponse = MessageOf<typeof SYNC_GROUP_RESPONSE>;
