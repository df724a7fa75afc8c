// Fetch (key 1), versions 4–12: descriptions transcribed from Kafka's
// FetchRequest.json / FetchResponse.json, restricted to the versions the broker supports.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const FETCH_REQUEST = {
  name: 'FetchRequest', kind: 'request', apiKey: 1,
  validVersions: '4-12', flexibleVersions: '12+',
  fields: [
    { name: 'clusterId', type: 'string', versions: '12+', nullableVersions: '12+', taggedVersions: '12+', tag: 0, default: null },
    { name: 'replicaId', type: 'int32', versions: '0-14', default: -1 },
    { name: 'maxWaitMs', type: 'int32', versions: '0+' },
    { name: 'minBytes', type: 'int32', versions: '0+' },
    { name: 'maxBytes', type: 'int32', versions: '3+', default: 2147483647 },
    { name: 'isolationLevel', type: 'int8', versions: '4+', default: 0 },
    { name: 'sessionId', type: 'int32', versions: '7+', default: 0 },
    { name: 'sessionEpoch', type: 'int32', versions: '7+', default: -1 },
    { name: 'topics', type: '[]FetchTopic', versions: '0+', fields: [
      { name: 'topic', type: 'string', versions: '0-12' },
      { name: 'partitions', type: '[]FetchPartition', versions: '0+', fields: [
        { name: 'partition', type: 'int32', versions: '0+' },
        { name: 'currentLeaderEpoch', type: 'int32', versions: '9+', default: -1 },
        { name: 'fetchOffset', type: 'int64', versions: '0+', saturate: true },
        { name: 'lastFetchedEpoch', type: 'int32', versions: '12+', default: -1 },
        { name: 'logStartOffset', type: 'int64', versions: '5+', default: -1, saturate: true },
        { name: 'partitionMaxBytes', type: 'int32', versions: '0+' },
      ] },
    ] },
    { name: 'forgottenTopicsData', type: '[]ForgottenTopic', versions: '7+', fields: [
      { name: 'topic', type: 'string', versions: '7-12' },
      { name: 'partitions', type: '[]int32', versions: '7+' },
    ] },
    { name: 'rackId', type: 'string', versions: '11+', default: '' },
  ],
} as const satisfies MessageDescription;

export const FETCH_RESPONSE = {
  name: 'FetchResponse', kind: 'response', apiKey: 1,
  validVersions: '4-12', flexibleVersions: '12+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '1+' },
    { name: 'errorCode', type: 'int16', versions: '7+' },
    { name: 'sessionId', type: 'int32', versions: '7+', default: 0 },
    { name: 'responses', type: '[]FetchableTopicResponse', versions: '0+', fields: [
      { name: 'topic', type: 'string', versions: '0-12' },
      { name: 'partitions', type: '[]PartitionData', versions: '0+', fields: [
        { name: 'partitionIndex', type: 'int32', versions: '0+' },
        { name: 'errorCode', type: 'int16', versions: '0+' },
        { name: 'highWatermark', type: 'int64', versions: '0+' },
        { name: 'lastStableOffset', type: 'int64', versions: '4+', default: -1 },
        { name: 'logStartOffset', type: 'int64', versions: '5+', default: -1 },
        { name: 'abortedTransactions', type: '[]AbortedTransaction', versions: '4+', nullableVersions: '4+', fields: [
          { name: 'producerId', type: 'int64', versions: '4+' },
          { name: 'firstOffset', type: 'int64', versions: '4+' },
        ] },
        { name: 'preferredReadReplica', type: 'int32', versions: '11+', default: -1 },
        { name: 'records', type: 'records', versions: '0+', nullableVersions: '0+' },
      ] },
    ] },
  ],
} as const satisfies MessageDescription;

export type FetchRequest = MessageOf<typeof FETCH_REQUEST>;
export type FetchResponse = MessageOf<typeof FETCH_RESPONSE>;

// Struct types, by the broker's names.
export type FetchTopic = FetchRequest['topics'][number];
export type FetchPartition = FetchTopic['partitions'][number];
export type ForgottenTopic = FetchRequest['forgottenTopicsData'][number];
export type FetchTopicResponse = FetchResponse['responses'][number];
export type FetchPartitionResponse = FetchTopicResponse['partitions'][number];
export type AbortedTransaction = NonNullable<FetchPartitionResponse['abortedTransactions']>[number];
