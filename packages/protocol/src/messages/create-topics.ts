// CreateTopics (key 19), versions 0–7: descriptions transcribed from Kafka's
// CreateTopicsRequest.json / CreateTopicsResponse.json, restricted to the versions the broker supports.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const CREATE_TOPICS_REQUEST = {
  name: 'CreateTopicsRequest', kind: 'request', apiKey: 19,
  validVersions: '0-7', flexibleVersions: '5+',
  fields: [
    { name: 'topics', type: '[]CreatableTopic', versions: '0+', fields: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'numPartitions', type: 'int32', versions: '0+' },
      { name: 'replicationFactor', type: 'int16', versions: '0+' },
      { name: 'assignments', type: '[]CreatableReplicaAssignment', versions: '0+', fields: [
        { name: 'partitionIndex', type: 'int32', versions: '0+' },
        { name: 'brokerIds', type: '[]int32', versions: '0+' },
      ] },
      { name: 'configs', type: '[]CreatableTopicConfig', versions: '0+', fields: [
        { name: 'name', type: 'string', versions: '0+' },
        { name: 'value', type: 'string', versions: '0+', nullableVersions: '0+' },
      ] },
    ] },
    { name: 'timeoutMs', type: 'int32', versions: '0+', default: 60000 },
    { name: 'validateOnly', type: 'bool', versions: '1+', default: false },
  ],
} as const satisfies MessageDescription;

export const CREATE_TOPICS_RESPONSE = {
  name: 'CreateTopicsResponse', kind: 'response', apiKey: 19,
  validVersions: '0-7', flexibleVersions: '5+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '2+' },
    { name: 'topics', type: '[]CreatableTopicResult', versions: '0+', fields: [
      { name: 'name', type: 'string', versions: '0+' },
      { name: 'topicId', type: 'uuid', versions: '7+' },
      { name: 'errorCode', type: 'int16', versions: '0+' },
      // Defaults null (not Kafka's implicit ""): the broker's objects carry null before v1 and v5.
      { name: 'errorMessage', type: 'string', versions: '1+', nullableVersions: '0+', default: null },
      { name: 'numPartitions', type: 'int32', versions: '5+', default: -1 },
      { name: 'replicationFactor', type: 'int16', versions: '5+', default: -1 },
      { name: 'configs', type: '[]CreatableTopicConfigs', versions: '5+', nullableVersions: '5+', default: null, fields: [
        { name: 'name', type: 'string', versions: '5+' },
        { name: 'value', type: 'string', versions: '5+', nullableVersions: '5+' },
        { name: 'readOnly', type: 'bool', versions: '5+' },
        { name: 'configSource', type: 'int8', versions: '5+', default: -1 },
        { name: 'isSensitive', type: 'bool', versions: '5+' },
      ] },
    ] },
  ],
} as const satisfies MessageDescription;

export type CreateTopicsRequest = MessageOf<typeof CREATE_TOPICS_REQUEST>;
export type CreateTopicsResponse = MessageOf<typeof CREATE_TOPICS_RESPONSE>;

// Struct types, by the broker's names.
export type CreatableTopic = CreateTopicsRequest['topics'][number];
export type CreatableReplicaAssignment = CreatableTopic['assignments'][number];
export type CreatableTopicConfig = CreatableTopic['configs'][number];
export type CreatableTopicResult = CreateTopicsResponse['topics'][number];
export type CreatableTopicConfigResult = NonNullable<CreatableTopicResult['configs']>[number];
