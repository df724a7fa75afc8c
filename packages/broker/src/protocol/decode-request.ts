// decodeRequest: one request frame (without its size prefix) → header and
// typed body. The dispatch check uses SUPPORTED_APIS: an unknown API key or a
// version outside our range is a typed error (the server closes the
// connection, as Kafka does), except ApiVersions, whose unsupported versions
// are answered (see api-versions.ts, "handshake fallback").

import { decodeApiVersionsRequest, type ApiVersionsRequest } from './messages/api-versions.js';
import { decodeCreateTopicsRequest, type CreateTopicsRequest } from './messages/create-topics.js';
import { decodeDeleteRecordsRequest, type DeleteRecordsRequest } from './messages/delete-records.js';
import { decodeFetchRequest, type FetchRequest } from './messages/fetch.js';
import { decodeInitProducerIdRequest, type InitProducerIdRequest } from './messages/init-producer-id.js';
import { decodeListOffsetsRequest, type ListOffsetsRequest } from './messages/list-offsets.js';
import { decodeMetadataRequest, type MetadataRequest } from './messages/metadata.js';
import { decodeProduceRequest, type ProduceRequest } from './messages/produce.js';
import { ProtocolErrorCode, protocolError } from './protocol-error.js';
import { ProtocolReader } from './protocol-reader.js';
import { decodeRequestHeader, type RequestHeader } from './request-header.js';
import { ApiKey, supportedApi } from './supported-apis.js';

export interface RequestBodies {
  readonly PRODUCE: ProduceRequest;
  readonly FETCH: FetchRequest;
  readonly LIST_OFFSETS: ListOffsetsRequest;
  readonly METADATA: MetadataRequest;
  readonly API_VERSIONS: ApiVersionsRequest;
  readonly CREATE_TOPICS: CreateTopicsRequest;
  readonly DELETE_RECORDS: DeleteRecordsRequest;
  readonly INIT_PRODUCER_ID: InitProducerIdRequest;
}

export type DecodedRequest =
  | { [N in keyof RequestBodies]: { readonly api: N; readonly header: RequestHeader; readonly body: RequestBodies[N] } }[keyof RequestBodies]
  /** An ApiVersions request of a version we do not speak: answer with apiVersionsFallback(). */
  | { readonly api: 'API_VERSIONS_UNSUPPORTED'; readonly header: RequestHeader; readonly body: null };

export function decodeRequest(frame: Buffer): DecodedRequest {
  const reader = new ProtocolReader(frame);
  const header = decodeRequestHeader(reader);
  const api = supportedApi(header.apiKey);
  if (api === undefined) {
    throw protocolError(ProtocolErrorCode.UNKNOWN_API, 'request for an API the broker does not implement', {
      apiKey: header.apiKey, apiVersion: header.apiVersion, correlationId: header.correlationId,
    });
  }
  const version = header.apiVersion;
  if (version < api.minVersion || version > api.maxVersion) {
    if (api.apiKey === ApiKey.API_VERSIONS) return { api: 'API_VERSIONS_UNSUPPORTED', header, body: null };
    throw protocolError(ProtocolErrorCode.UNSUPPORTED_VERSION, 'request version outside the supported range', {
      apiKey: header.apiKey, apiVersion: version, minVersion: api.minVersion, maxVersion: api.maxVersion,
      correlationId: header.correlationId,
    });
  }
  const decoded = decodeBody(reader, header, api.name);
  reader.expectEnd(`${api.name} v${version} request`);
  return decoded;
}

function decodeBody(reader: ProtocolReader, header: RequestHeader, api: keyof RequestBodies): DecodedRequest {
  const version = header.apiVersion;
  switch (api) {
    case 'PRODUCE': return { api, header, body: decodeProduceRequest(reader, version) };
    case 'FETCH': return { api, header, body: decodeFetchRequest(reader, version) };
    case 'LIST_OFFSETS': return { api, header, body: decodeListOffsetsRequest(reader, version) };
    case 'METADATA': return { api, header, body: decodeMetadataRequest(reader, version) };
    case 'API_VERSIONS': return { api, header, body: decodeApiVersionsRequest(reader, version) };
    case 'CREATE_TOPICS': return { api, header, body: decodeCreateTopicsRequest(reader, version) };
    case 'DELETE_RECORDS': return { api, header, body: decodeDeleteRecordsRequest(reader, version) };
    case 'INIT_PRODUCER_ID': return { api, header, body: decodeInitProducerIdRequest(reader, version) };
  }
}
