// Metadata (key 3), versions 0–12: descriptions transcribed from Kafka's
// MetadataRequest.json / MetadataResponse.json, restricted to the versions the broker supports.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const METADATA_REQUEST = {
  name: 'MetadataRequest', kind: 'request', apiKey: 3,
  validVersions: '0-12', flexibleVersions: '9+',
  fields: [
    { name: 'topics', type: '[]MetadataRequestTopic', versions: '0+', nullableVersions: '1+', fields: [
      { name: 'topicId', type: 'uuid', versions: '10+' },
      { name: 'name', type: 'string', versions: '0+', nullableVersions: '10+' },
    ] },
    { name: 'allowAutoTopicCreation', type: 'bool', versions: '4+', default: true },
    { name: 'includeClusterAuthorizedOperations', type: 'bool', versions: '8-10' },
    { name: 'includeTopicAuthorizedOperations', type: 'bool', versions: '8+' },
  ],
} as const satisfies MessageDescription;

export const METADATA_RESPONSE = {
  name: 'MetadataResponse', kind: 'response', apiKey: 3,
  validVersions: '0-12', flexibleVersions: '9+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '3+' },
    { name: 'brokers', type: '[]MetadataResponseBroker', versions: '0+', fields: [
      { name: 'nodeId', type: 'int32', versions: '0+' },
      { name: 'host', type: 'string', versions: '0+' },
      { name: 'port', type: 'int32', versions: '0+' },
      { name: 'rack', type: 'string', versions: '1+', nullableVersions: '1+', default: null },
    ] },
    { name: 'clusterId', type: 'string', versions: '2+', nullableVersions: '2+', default: null },
    { name: 'controllerId', type: 'int32', versions: '1+', default: -1 },
    { name: 'topics', type: '[]MetadataResponseTopic', versions: '0+', fields: [
      { name: 'errorCode', type: 'int16', versions: '0+' },
      { name: 'name', type: 'string', versions: '0+', nullableVersions: '12+' },
      { name: 'topicId', type: 'uuid', versions: '10+' },
      { name: 'isInternal', type: 'bool', versions: '1+', default: false },
      { name: 'partitions', type: '[]MetadataResponsePartition', versions: '0+', fields: [
        { name: 'errorCode', type: 'int16', versions: '0+' },
        { name: 'partitionIndex', type: 'int32', versions: '0+' },
        { name: 'leaderId', type: 'int32', versions: '0+' },
        { name: 'leaderEpoch', type: 'int32', versions: '7+', default: -1 },
        { name: 'replicaNodes', type: '[]int32', versions: '0+' },
        { name: 'isrNodes', type: '[]int32', versions: '0+' },
        { name: 'offlineReplicas', type: '[]int32', versions: '5+' },
      ] },
      { name: 'topicAuthorizedOperations', type: 'int32', versions: '8+', default: -2147483648 },
    ] },
    { name: 'clusterAuthorizedOperations', type: 'int32', versions: '8-10', default: -2147483648 },
  ],
} as const satisfies MessageDescription;

export type MetadataRequest = MessageOf<typeof METADATA_REQUEST>;
export type MetadataResponse = MessageOf<typeof METADATA_RESPONSE>;

// Struct types, by the broker's names.
export type MetadataRequestTopic = NonNullable<MetadataRequest['topics']>[number];
export type MetadataBroker = MetadataResponse['brokers'][number];
export type MetadataTopic = MetadataResponse['topics'][number];
export type MetadataPartition = MetadataTopic['partitions'][number];
