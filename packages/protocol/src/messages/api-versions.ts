// ApiVersions (key 18), versions 0–3: descriptions transcribed from Kafka's
// ApiVersionsRequest.json / ApiVersionsResponse.json, restricted to the versions the broker supports.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const API_VERSIONS_REQUEST = {
  name: 'ApiVersionsRequest', kind: 'request', apiKey: 18,
  validVersions: '0-3', flexibleVersions: '3+',
  fields: [
    { name: 'clientSoftwareName', type: 'string', versions: '3+' },
    { name: 'clientSoftwareVersion', type: 'string', versions: '3+' },
  ],
} as const satisfies MessageDescription;

export const API_VERSIONS_RESPONSE = {
  name: 'ApiVersionsResponse', kind: 'response', apiKey: 18,
  validVersions: '0-3', flexibleVersions: '3+',
  fields: [
    { name: 'errorCode', type: 'int16', versions: '0+' },
    { name: 'apiKeys', type: '[]ApiVersion', versions: '0+', fields: [
      { name: 'apiKey', type: 'int16', versions: '0+' },
      { name: 'minVersion', type: 'int16', versions: '0+' },
      { name: 'maxVersion', type: 'int16', versions: '0+' },
    ] },
    { name: 'throttleTimeMs', type: 'int32', versions: '1+' },
  ],
} as const satisfies MessageDescription;

export type ApiVersionsRequest = MessageOf<typeof API_VERSIONS_REQUEST>;
export type ApiVersionsResponse = MessageOf<typeof API_VERSIONS_RESPONSE>;

// Struct types, by the broker's names.
export type ApiVersionRange = ApiVersionsResponse['apiKeys'][number];
