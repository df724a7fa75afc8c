// ApiVersions (key 18), versions 0–3 (ApiVersionsRequest/Response.json).
//
//   request  v0–2: empty; v3 (flexible): client_software_name, client_software_version (compact strings), tags
//   response v0: error_code int16, api_keys [api_key int16, min_version int16, max_version int16]
//            v1+: + throttle_time_ms int32; v3: compact array, per-entry tags, body tags
//
// Handshake fallback (KIP-511): a request for a version we do not implement
// is answered with UNSUPPORTED_VERSION in the v0 body (always readable) and
// our ranges, so the client retries with a version we speak. The body of such
// a request is not parsed (its format is unknown to us).

import { minSizes, readArray, writeArray } from '../../internal/arrays.js';
import type { ProtocolReader } from '../protocol-reader.js';
import type { ProtocolWriter } from '../protocol-writer.js';

const FLEXIBLE_FROM = 3;

export interface ApiVersionsRequest {
  /** Empty before v3. */
  readonly clientSoftwareName: string;
  readonly clientSoftwareVersion: string;
}

export interface ApiVersionRange {
  readonly apiKey: number;
  readonly minVersion: number;
  readonly maxVersion: number;
}

export interface ApiVersionsResponse {
  readonly errorCode: number;
  readonly apiKeys: readonly ApiVersionRange[];
  /** Written from v1. */
  readonly throttleTimeMs: number;
}

export function decodeApiVersionsRequest(reader: ProtocolReader, version: number): ApiVersionsRequest {
  if (version < FLEXIBLE_FROM) return { clientSoftwareName: '', clientSoftwareVersion: '' };
  const clientSoftwareName = reader.string(true);
  const clientSoftwareVersion = reader.string(true);
  reader.taggedFields(true);
  return { clientSoftwareName, clientSoftwareVersion };
}

export function encodeApiVersionsResponse(writer: ProtocolWriter, version: number, body: ApiVersionsResponse): void {
  const flexible = version >= FLEXIBLE_FROM;
  writer.int16(body.errorCode);
  writeArray(writer, flexible, body.apiKeys, (w, range) => {
    w.int16(range.apiKey);
    w.int16(range.minVersion);
    w.int16(range.maxVersion);
    w.emptyTaggedFields(flexible);
  });
  if (version >= 1) writer.int32(body.throttleTimeMs);
  writer.emptyTaggedFields(flexible);
}

/** Test and client side: the response decoder (the broker only encodes it). */
export function decodeApiVersionsResponse(reader: ProtocolReader, version: number): ApiVersionsResponse {
  const flexible = version >= FLEXIBLE_FROM;
  const errorCode = reader.int16();
  const apiKeys = readArray(reader, flexible, 6 + minSizes(flexible).tags, (r) => {
    const range = { apiKey: r.int16(), minVersion: r.int16(), maxVersion: r.int16() };
    r.taggedFields(flexible);
    return range;
  });
  const throttleTimeMs = version >= 1 ? reader.int32() : 0;
  reader.taggedFields(flexible);
  return { errorCode, apiKeys, throttleTimeMs };
}

/** Client side (diagnostic client, tests). */
export function encodeApiVersionsRequest(writer: ProtocolWriter, version: number, body: ApiVersionsRequest): void {
  if (version < FLEXIBLE_FROM) return;
  writer.string(body.clientSoftwareName, true);
  writer.string(body.clientSoftwareVersion, true);
  writer.emptyTaggedFields(true);
}
