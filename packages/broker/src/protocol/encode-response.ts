// encodeResponse: header + body of one response as a size-prefixed frame, in
// parts for a vectored write (record batches stay separate, zero-copy).
// apiVersionsResponse / apiVersionsFallback build the ApiVersions body from
// SUPPORTED_APIS, so what we advertise is exactly what decodeRequest accepts.

import { assert } from '@seglog/common';
import { encodeApiVersionsResponse, type ApiVersionsResponse } from './messages/api-versions.js';
import { encodeCreateTopicsResponse, type CreateTopicsResponse } from './messages/create-topics.js';
import { encodeDeleteRecordsResponse, type DeleteRecordsResponse } from './messages/delete-records.js';
import { encodeFetchResponse, type FetchResponse } from './messages/fetch.js';
import { encodeInitProducerIdResponse, type InitProducerIdResponse } from './messages/init-producer-id.js';
import { encodeListOffsetsResponse, type ListOffsetsResponse } from './messages/list-offsets.js';
import { encodeMetadataResponse, type MetadataResponse } from './messages/metadata.js';
import { encodeProduceResponse, type ProduceResponse } from './messages/produce.js';
import { kafkaErrorCode } from './kafka-error-codes.js';
import type { FinishedMessage, ProtocolWriter } from './protocol-writer.js';
import { encodeResponseHeader } from './response-header.js';
import { ApiKey, SUPPORTED_APIS, isVersionSupported } from './supported-apis.js';

export interface ResponseBodies {
  readonly PRODUCE: ProduceResponse;
  readonly FETCH: FetchResponse;
  readonly LIST_OFFSETS: ListOffsetsResponse;
  readonly METADATA: MetadataResponse;
  readonly API_VERSIONS: ApiVersionsResponse;
  readonly CREATE_TOPICS: CreateTopicsResponse;
  readonly DELETE_RECORDS: DeleteRecordsResponse;
  readonly INIT_PRODUCER_ID: InitProducerIdResponse;
}

export type ResponseApi = keyof ResponseBodies;

export interface ResponseTarget<N extends ResponseApi> {
  readonly api: N;
  readonly apiVersion: number;
  readonly correlationId: number;
}

/** Writes `int32 size, response header, body` and returns the frame's parts. */
export function encodeResponse<N extends ResponseApi>(writer: ProtocolWriter, target: ResponseTarget<N>, body: ResponseBodies[N]): FinishedMessage {
  const apiKey = ApiKey[target.api];
  const version = target.apiVersion;
  assert(writer.byteLength === 0, 'encodeResponse: writer holds an unfinished message');
  assert(isVersionSupported(apiKey, version), 'encodeResponse: version outside SUPPORTED_APIS');
  writer.int32(0);
  encodeResponseHeader(writer, apiKey, version, target.correlationId);
  encodeResponseBody(writer, target.api, version, body);
  return writer.finishFrame();
}

function encodeResponseBody(writer: ProtocolWriter, api: ResponseApi, version: number, body: ResponseBodies[ResponseApi]): void {
  // The generic signature of encodeResponse ties `body` to `api`; the casts below restate that.
  switch (api) {
    case 'PRODUCE': return encodeProduceResponse(writer, version, body as ProduceResponse);
    case 'FETCH': return encodeFetchResponse(writer, version, body as FetchResponse);
    case 'LIST_OFFSETS': return encodeListOffsetsResponse(writer, version, body as ListOffsetsResponse);
    case 'METADATA': return encodeMetadataResponse(writer, version, body as MetadataResponse);
    case 'API_VERSIONS': return encodeApiVersionsResponse(writer, version, body as ApiVersionsResponse);
    case 'CREATE_TOPICS': return encodeCreateTopicsResponse(writer, version, body as CreateTopicsResponse);
    case 'DELETE_RECORDS': return encodeDeleteRecordsResponse(writer, version, body as DeleteRecordsResponse);
    case 'INIT_PRODUCER_ID': return encodeInitProducerIdResponse(writer, version, body as InitProducerIdResponse);
  }
}

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
