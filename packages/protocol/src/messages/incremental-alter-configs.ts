// IncrementalAlterConfigs (key 44), versions 0–1: descriptions transcribed
// from Kafka's IncrementalAlterConfigsRequest.json / IncrementalAlterConfigsResponse.json.
// configOperation: 0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT (Kafka's AlterConfigOp.OpType).

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const INCREMENTAL_ALTER_CONFIGS_REQUEST = {
  name: 'IncrementalAlterConfigsRequest', kind: 'request', apiKey: 44,
  validVersions: '0-1', flexibleVersions: '1+',
  fields: [
    { name: 'resources', type: '[]AlterConfigsResource', versions: '0+', fields: [
      { name: 'resourceType', type: 'int8', versions: '0+' },
      { name: 'resourceName', type: 'string', versions: '0+' },
      { name: 'configs', type: '[]AlterableConfig', versions: '0+', fields: [
        { name: 'name', type: 'string', versions: '0+' },
        { name: 'configOperation', type: 'int8', versions: '0+' },
        { name: 'value', type: 'string', versions: '0+', nullableVersions: '0+' },
      ] },
    ] },
    { name: 'validateOnly', type: 'bool', versions: '0+' },
  ],
} as const satisfies MessageDescription;

export const INCREMENTAL_ALTER_CONFIGS_RESPONSE = {
  name: 'IncrementalAlterConfigsResponse', kind: 'response', apiKey: 44,
  validVersions: '0-1', flexibleVersions: '1+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'responses', type: '[]AlterConfigsResourceResponse', versions: '0+', fields: [
      { name: 'errorCode', type: 'int16', versions: '0+' },
      { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+' },
      { name: 'resourceType', type: 'int8', versions: '0+' },
      { name: 'resourceName', type: 'string', versions: '0+' },
    ] },
  ],
} as const satisfies MessageDescription;

export type IncrementalAlterConfigsRequest = MessageOf<typeof INCREMENTAL_ALTER_CONFIGS_REQUEST>;
export type IncrementalAlterConfigsResponse = MessageOf<typeof INCREMENTAL_ALTER_CONFIGS_RESPONSE>;

// Struct types, by the broker's names.
export type IncrementalAlterConfigsResource = IncrementalAlterConfigsRequest['resources'][number];
