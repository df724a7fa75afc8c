// AlterConfigs (key 33), versions 0–2: descriptions transcribed from Kafka's
// AlterConfigsRequest.json / AlterConfigsResponse.json. The legacy form: a
// resource's listed configs replace all of its overrides.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const ALTER_CONFIGS_REQUEST = {
  name: 'AlterConfigsRequest', kind: 'request', apiKey: 33,
  validVersions: '0-2', flexibleVersions: '2+',
  fields: [
    { name: 'resources', type: '[]AlterConfigsResource', versions: '0+', fields: [
      { name: 'resourceType', type: 'int8', versions: '0+' },
      { name: 'resourceName', type: 'string', versions: '0+' },
      { name: 'configs', type: '[]AlterableConfig', versions: '0+', fields: [
        { name: 'name', type: 'string', versions: '0+' },
        { name: 'value', type: 'string', versions: '0+', nullableVersions: '0+' },
      ] },
    ] },
    { name: 'validateOnly', type: 'bool', versions: '0+' },
  ],
} as const satisfies MessageDescription;

export const ALTER_CONFIGS_RESPONSE = {
  name: 'AlterConfigsResponse', kind: 'response', apiKey: 33,
  validVersions: '0-2', flexibleVersions: '2+',
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

export type AlterConfigsRequest = MessageOf<typeof ALTER_CONFIGS_REQUEST>;
export type AlterConfigsResponse = MessageOf<typeof ALTER_CONFIGS_RESPONSE>;

// Struct types, by the broker's names.
export type AlterConfigsResource = AlterConfigsRequest['resources'][number];
export type AlterConfigsResourceResponse = AlterConfigsResponse['responses'][number];
