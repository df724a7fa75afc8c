// LeaveGroup (key 13), versions 0–5: descriptions transcribed from Kafka's
// LeaveGroupRequest.json / LeaveGroupResponse.json (apache/kafka 1eb7644), restricted to the versions the broker supports.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const LEAVE_GROUP_REQUEST = {
  name: 'LeaveGroupRequest', kind: 'request', apiKey: 13,
  validVersions: '0-5', flexibleVersions: '4+',
  fields: [
    { name: 'groupId', type: 'string', versions: '0+' },
    { name: 'memberId', type: 'string', versions: '0-2' },
    { name: 'members', type: '[]MemberIdentity', versions: '3+', fields: [
      { name: 'memberId', type: 'string', versions: '3+' },
      { name: 'groupInstanceId', type: 'string', versions: '3+', nullableVersions: '3+', default: null },
      { name: 'reason', type: 'string', versions: '5+', nullableVersions: '5+', default: null },
    ] },
  ],
} as const satisfies MessageDescription;

export const LEAVE_GROUP_RESPONSE = {
  name: 'LeaveGroupResponse', kind: 'response', apiKey: 13,
  validVersions: '0-5', flexibleVersions: '4+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '1+' },
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'members', type: '[]MemberResponse', versions: '3+', fields: [
      { name: 'memberId', type: 'string', versions: '3+' },
      { name: 'groupInstanceId', type: 'string', versions: '3+', nullableVersions: '3+' },
      { name: 'errorCode', type: 'int16', versions: '3+' },
    ] },
  ],
} as const satisfies MessageDescription;

export type LeaveGroupRequest = MessageOf<typeof LEAVE_GROUP_REQUEST>;
export type LeaveGroupResponse = MessageOf<typeof LEAVE_GROUP_RESPONSE>;
