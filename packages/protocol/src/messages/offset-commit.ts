// OffsetCommit (key 8), versions 0–8: descriptions transcribed from Kafka's
// OffsetCommitRequest.json / OffsetCommitResponse.json (apache/kafka 1eb7644), restricted to the versions the broker supports.
// v9 (the KIP-848 consumer protocol's member epoch) is not offered: the broker runs the classic protocol only.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const OFFSET_COMMIT_REQUEST = {
  name: 'OffsetCommitRequest', kind: 'request', apiKey: 8,
  validVersions: '0-8', flexibleVersions: '8+',
  fields: [
    { name: 'groupId', type: 'string', versions: '0+' },
    { name: 'generationIdOrMemberEpoch', type: 'int32', versions: '1+', default: -1 },
    { name: 'memberId', type: 'string', versions: '1+' },
    { name: 'groupInstanceId', type: 'string', versions: '7+', nullableVersions: '7+', default: null },
    { name: 'retentionTimeMs', type: 'int64', versions: '2-4', default: -1 },
    { name: 'topics', type: '[]OffsetCommitRequestTopic', versions: '0+', fields: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'partitions', type: '[]OffsetCommitRequestPartition', versions: '0+', fields: [
        { name: 'partitionIndex', type: 'int32', versions: '0+' },
        { name: 'committedOffset', type: 'int64', versions: '0+' },
        { name: 'committedLeaderEpoch', type: 'int32', versions: '6+', default: -1 },
        { name: 'commitTimestamp', type: 'int64', versions: '1', default: -1 },
        { name: 'committedMetadata', type: 'string', versions: '0+', nullableVersions: '0+' },
      ] },
    ] },
  ],
} as const satisfies MessageDescription;

export const OFFSET_COMMIT_RESPONSE = {
  name: 'OffsetCommitResponse', kind: 'response', apiKey: 8,
  validVersions: '0-8', flexibleVersions: '8+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '3+' },
    { name: 'topics', type: '[]OffsetCommitResponseTopic', versions: '0+', fields: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'partitions', type: '[]OffsetCommitResponsePartition', versions: '0+', fields: [
        { name: 'partitionIndex', type: 'int32', versions: '0+' },
        { name: 'errorCode', type: 'int16', versions: '0+' },
      ] },
    ] },
  ],
} as const satisfies MessageDescription;

export type OffsetCommitRequest = MessageOf<typeof OFFSET_COMMIT_REQUEST>;
export type OffsetCommitResponse = MessageOf<typeof OFFSET_COMMIT_RESPONSE>;
