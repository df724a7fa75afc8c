// The request and response headers (RequestHeader.json, ResponseHeader.json).
//
//   request  v0: request_api_key int16, request_api_version int16, correlation_id int32
//            v1: + client_id nullable string; v2 (flexible): + tagged fields. client_id
//            keeps its int16 length in v2 (field flexibleVersions "none"), so a broker
//            can read the header of any ApiVersions request.
//   response v0: correlation_id int32; v1 (flexible): + tagged fields.
//
// Field names are Kafka's (requestApiKey, requestApiVersion): the broker's
// RequestHeader object renames them (apiKey, apiVersion) and adds headerVersion.

import type { MessageDescription } from '../description.js';
import type { MessageOf } from '../message-types.js';

export const REQUEST_HEADER = {
  name: 'RequestHeader', kind: 'header', apiKey: -1,
  validVersions: '0-2', flexibleVersions: '2+',
  fields: [
    { name: 'requestApiKey', type: 'int16', versions: '0+' },
    { name: 'requestApiVersion', type: 'int16', versions: '0+' },
    { name: 'correlationId', type: 'int32', versions: '0+' },
    { name: 'clientId', type: 'string', versions: '1+', nullableVersions: '1+', flexibleVersions: 'none', default: null, ignorable: true },
  ],
} as const satisfies MessageDescription;

export const RESPONSE_HEADER = {
  name: 'ResponseHeader', kind: 'header', apiKey: -1,
  validVersions: '0-1', flexibleVersions: '1+',
  fields: [
    { name: 'correlationId', type: 'int32', versions: '0+' },
  ],
} as const satisfies MessageDescription;

export type RequestHeaderMessage = MessageOf<typeof REQUEST_HEADER>;
export type ResponseHeaderMessage = MessageOf<typeof RESPONSE_HEADER>;
