// decodeRequest: one request frame (without its size prefix) → header and
// body, with the generic codecs. The header version follows from the API key
// and version (requestHeaderVersion), so those two int16s are read first,
// then the header at that version, then the body. An API that is not
// described is UNKNOWN_API, a version outside the description's range
// UNSUPPORTED_VERSION, except ApiVersions, whose unsupported versions are
// returned as API_VERSIONS_UNSUPPORTED (the broker answers them, KIP-511).
// The header has the broker's RequestHeader shape.

import { apiCodecs, requestHeaderVersion, REQUEST_HEADER_CODEC, type RequestBodies } from './apis.js';
import { ProtocolErrorCode, protocolError } from './protocol-error.js';
import { ProtocolReader } from './protocol-reader.js';

export interface RequestHeader {
  readonly apiKey: number;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
  readonly headerVersion: 1 | 2;
}

export type DecodedRequest =
  | { [N in keyof RequestBodies]: { readonly api: N; readonly header: RequestHeader; readonly body: RequestBodies[N] } }[keyof RequestBodies]
  /** An ApiVersions request of a version we do not speak: its body is not parsed. */
  | { readonly api: 'API_VERSIONS_UNSUPPORTED'; readonly header: RequestHeader; readonly body: null };

const API_VERSIONS_KEY = 18;

export function decodeRequest(frame: Buffer): DecodedRequest {
  const reader = new ProtocolReader(frame);
  const header = decodeHeader(reader);
  const codecs = apiCodecs(header.apiKey);
  if (codecs === undefined) {
    throw protocolError(ProtocolErrorCode.UNKNOWN_API, 'request for an API the broker does not implement', {
      apiKey: header.apiKey, apiVersion: header.apiVersion, correlationId: header.correlationId,
    });
  }
  const version = header.apiVersion;
  if (!codecs.request.supports(version)) {
    if (header.apiKey === API_VERSIONS_KEY) return { api: 'API_VERSIONS_UNSUPPORTED', header, body: null };
    throw protocolError(ProtocolErrorCode.UNSUPPORTED_VERSION, 'request version outside the supported range', {
      apiKey: header.apiKey, apiVersion: version, minVersion: codecs.request.versions.min,
      maxVersion: codecs.request.versions.max, correlationId: header.correlationId,
    });
  }
  const body = codecs.request.decode(reader, version);
  reader.expectEnd(`${codecs.api.name} v${version} request`);
  // The API's codec decodes exactly its description, whose type RequestBodies names.
  return { api: codecs.api.name, header, body } as DecodedRequest;
}

function decodeHeader(reader: ProtocolReader): RequestHeader {
  const start = reader.position;
  const apiKey = reader.int16();
  const apiVersion = reader.int16();
  reader.position = start;
  const headerVersion = requestHeaderVersion(apiKey, apiVersion);
  const decoded = REQUEST_HEADER_CODEC.decode(reader, headerVersion) as {
    readonly correlationId: number;
    readonly clientId: string | null;
  };
  return { apiKey, apiVersion, correlationId: decoded.correlationId, clientId: decoded.clientId, headerVersion };
}
