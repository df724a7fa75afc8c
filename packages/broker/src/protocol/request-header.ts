// Request header (RequestHeader.json), the start of every request frame:
//
//   v1: api_key int16, api_version int16, correlation_id int32,
//       client_id nullable string (int16 length)
//   v2: v1 + tagged fields. client_id keeps its int16 length even in v2, so
//       a broker can read the header of any ApiVersions request.
//
// The header version follows from (api_key, api_version): see supported-apis.ts.

import { ProtocolReader } from './protocol-reader.js';
import { requestHeaderVersion } from './supported-apis.js';

export interface RequestHeader {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
  readonly headerVersion: 1 | 2;
}

export function decodeRequestHeader(reader: ProtocolReader): RequestHeader {
  const apiKey = reader.int16();
  const apiVersion = reader.int16();
  const correlationId = reader.int32();
  const clientId = reader.nullableString(false);
  const headerVersion = requestHeaderVersion(apiKey, apiVersion);
  reader.taggedFields(headerVersion === 2);
  return { apiKey, apiVersion, correlationId, clientId, headerVersion };
}
