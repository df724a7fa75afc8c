// DescribeConfigs (key 32), versions 0–4: descriptions transcribed from
// Kafka's DescribeConfigsRequest.json / DescribeConfigsResponse.json.
// isDefault exists only in v0 (v1+ says it with configSource).

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const DESCRIBE_CONFIGS_REQUEST = {
  name: 'DescribeConfigsRequest', kind: 'request', apiKey: 32,
  validVersions: '0-4', flexibleVersions: '4+',
  fields: [
    { name: 'resources', type: '[]DescribeConfigsResource', versions: '0+', fields: [
      { name: 'resourceType', type: 'int8', versions: '0+' },
      { name: 'resourceName', type: 'string', versions: '0+' },
      { name: 'configurationKeys', type: '[]string', versions: '0+', nullableVersions: '0+' },
    ] },
    { name: 'includeSynonyms', type: 'bool', versions: '1+', default: false, ignorable: false },
    { name: 'includeDocumentation', type: 'bool', versions: '3+', default: false, ignorable: false },
  ],
} as const satisfies MessageDescription;

export const DESCRIBE_CONFIGS_RESPONSE = {
  name: 'DescribeConfigsResponse', kind: 'response', apiKey: 32,
  validVersions: '0-4', flexibleVersions: '4+',
  fields: [
    { name: 'throttleTimeMs', type: 'int32', versions: '0+' },
    { name: 'results', type: '[]DescribeConfigsResult', versions: '0+', fields: [
      { name: 'errorCode', type: 'int16', versions: '0+' },
      { name: 'errorMessage', type: 'string', versions: '0+', nullableVersions: '0+' },
      { name: 'resourceType', type: 'int8', versions: '0+' },
      { name: 'resourceName', type: 'string', versions: '0+' },
      { name: 'configs', type: '[]DescribeConfigsResourceResult', versions: '0+', fields: [
        { name: 'name', type: 'string', versions: '0+' },
        { name: 'value', type: 'string', versions: '0+', nullableVersions: '0+' },
        { name: 'readOnly', type: 'bool', versions: '0+' },
        { name: 'isDefault', type: 'bool', versions: '0' },
        { name: 'configSource', type: 'int8', versions: '1+', default: -1, ignorable: true },
        { name: 'isSensitive', type: 'bool', versions: '0+' },
        { name: 'synonyms', type: '[]DescribeConfigsSynonym', versions: '1+', ignorable: true, fields: [
          { name: 'name', type: 'string', versions: '1+' },
          { name: 'value', type: 'string', versions: '1+', nullableVersions: '0+' },
          { name: 'source', type: 'int8', versions: '1+' },
        ] },
        { name: 'configType', type: 'int8', versions: '3+', default: 0, ignorable: true },
        { name: 'documentation', type: 'string', versions: '3+', nullableVersions: '0+', ignorable: true },
      ] },
    ] },
  ],
} as const satisfies MessageDescription;

export type DescribeConfigsRequest = MessageOf<typeof DESCRIBE_CONFIGS_REQUEST>;
export type DescribeConfigsResponse = MessageOf<typeof DESCRIBE_CONFIGS_RESPONSE>;

// Struct types, by the broker's names.
export type DescribeConfigsResource = DescribeConfigsRequest['resources'][number];
export type DescribeConfigsResult = DescribeConfigsResponse['results'][number];
export type DescribeConfigsResourceResult = DescribeConfigsResult['configs'][number];
export type DescribeConfigsSynonym = DescribeConfigsResourceResult['synonyms'][number];
