// The broker's ApiVersions bodies, built from SUPPORTED_APIS (so what we
// advertise is exactly what decodeRequest accepts). They live here, not in
// @seglog/protocol, because choosing an answer (and its error code) is the
// broker's job; @seglog/protocol only holds the tables.
//
// Handshake fallback (KIP-511): a request for an ApiVersions version we do
// not implement is answered with UNSUPPORTED_VERSION in the v0 body (always
// readable) and our ranges, so the client retries with a version we speak.
// The body of such a request is not parsed (its format is unknown to us).

import {
  SUPPORTED_APIS, encodeResponse, kafkaErrorCode, type ApiVersionsResponse, type FinishedMessage, type ProtocolWriter,
} from '@seglog/protocol';

/** The ApiVersions body advertising SUPPORTED_APIS. */
export function apiVersionsResponse(throttleTimeMs = 0): ApiVersionsResponse {
  return {
    errorCode: kafkaErrorCode('NONE'),
    apiKeys: SUPPORTED_APIS.map((api) => ({ apiKey: api.apiKey, minVersion: api.minVersion, maxVersion: api.maxVersion })),
    throttleTimeMs,
  };
}

/**
 * The answer to an ApiVersions request of a version we do not implement:
 * UNSUPPORTED_VERSION with our ranges, in the v0 body (every client can read
 * it), so the client retries with a version from our range (KIP-511).
 */
export function apiVersionsFallback(writer: ProtocolWriter, correlationId: number): FinishedMessage {
  const body = { ...apiVersionsResponse(), errorCode: kafkaErrorCode('UNSUPPORTED_VERSION') };
  return encodeResponse(writer, { api: 'API_VERSIONS', apiVersion: 0, correlationId }, body);
}
