// TxnOffsetCommit (key 28), versions 0–4: descriptions transcribed from Kafka's
// TxnOffsetCommitRequest.json / TxnOffsetCommitResponse.json (apache/kafka 1eb7644).

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const TXN_OFFSET_COMMIT_REQUEST = {
  name: 'TxnOffsetCommitRequest', kind: 'request', apiKey: 28,
  validVersions: '0-4', flexibleVersions: '3+',
  fields: [
    { name: 'transactionalId', type: 'string', versions: '0+' },
    { name: 'groupId', type: 'string', versions: '0+' },
    { name: 'producerId', type: 'int64', versions: '0+' },
    { name: 'producerEpoch', type: 'int16', versions: '0+' },
    { name: 'generationId', type: 'int32', versions: '3+', default: -1 },
    { name: 'memberId', type: 'string', versions: '3+', default: '' },
    { name: 'groupInstanceId', type: 'string', versions: '3+', nullableVersions: '3+', default: null },
    { name: 'topics', type: '[]TxnOffsetCommitRequestTopic', versions: '0+', fields: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'partitions', type: '[]TxnOffsetCommitRequestPartition', versions: '0+', fields: [
        { name: 'partitionIndex', type: 'int32', versions: '0+' },
        { name: 'committedOffset', type: 'int64', versions: '0+' },
        { name: 'committedLeaderEpoch', type: 'int32', versions: '2+', default: -1, ignorable: true },
        { name: 'committedMetadata', type: 'string', versions: '0+', nullableVersions: '0+' },
      ] },
    ] },
  ],
} as const satisfies MessageDescription;

export const TXN_OFFSET_COMMIT_RESPONSE = {
  name: 'TxnOffsetCommitResponse', kind: 'response', apiKey: 28,
  validVersions: '0-4', flexibleVersions: '3+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'topics', type: '[]TxnOffsetCommitResponseTopic', versions: '0+', fields: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'partitions', type: '[]TxnOffsetCommitResponsePartition', versions: '0+', fields: [
        { name: 'partitionIndex', type: 'int32', versions: '0+' },
        { name: 'errorCode', type: 'int16', versions: '0+' },
      ] },
    ] },
  ],
} as const satisfies MessageDescription;

export type TxnOffsetCommitRequest = MessageOf<typeof TXN_OFFSET_COMMIT_REQUEST>;
export type TxnOffsetCommitResponse = MessageOf<typeof TXN_OFFSET_COMMIT_RESPONSE>;
