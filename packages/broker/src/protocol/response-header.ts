// Response header (ResponseHeader.json): v0 = correlation_id int32;
// v1 = v0 + tagged fields. ApiVersions responses always use v0.

import type { ProtocolWriter } from './protocol-writer.js';
import { responseHeaderVersion } from './supported-apis.js';

export function encodeResponseHeader(writer: ProtocolWriter, apiKey: number, apiVersion: number, correlationId: number): void {
  writer.int32(correlationId);
  writer.emptyTaggedFields(responseHeaderVersion(apiKey, apiVersion) === 1);
}
