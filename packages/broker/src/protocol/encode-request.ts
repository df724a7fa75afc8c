// Client side of the protocol (the diagnostic client and tests): a request as
// a size-prefixed frame, and a response frame back into a typed body. The
// broker itself only decodes requests and encodes responses.

import { assert } from '@seglog/common';
import type { RequestBodies } from './decode-request.js';
import type { ResponseApi, ResponseBodies } from './encode-response.js';
import { decodeApiVersionsResponse, encodeApiVersionsRequest } from './messages/api-versions.js';
import { decodeCreateTopicsResponse, encodeCreateTopicsRequest } from './messages/create-topics.js';
import { decodeDeleteRecordsResponse, encodeDeleteRecordsRequest } from './messages/delete-records.js';
import { decodeFetchResponse, encodeFetchRequest } from './messages/fetch.js';
import { decodeInitProducerIdResponse, encodeInitProducerIdRequest } from './messages/init-producer-id.js';
import { decodeListOffsetsResponse, encodeListOffsetsRequest } from './messages/list-offsets.js';
import { decodeMetadataResponse, encodeMetadataRequest } from './messages/metadata.js';
import { decodeProduceResponse, encodeProduceRequest } from './messages/produce.js';
import { ProtocolReader } from './protocol-reader.js';
import type { FinishedMessage, ProtocolWriter } from './protocol-writer.js';
import { ApiKey, requestHeaderVersion, responseHeaderVersion } from './supported-apis.js';

export interface RequestTarget<N extends keyof RequestBodies> {
  readonly api: N;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
}

export function encodeRequest<N extends keyof RequestBodies>(writer: ProtocolWriter, target: RequestTarget<N>, body: RequestBodies[N]): FinishedMessage {
  const apiKey = ApiKey[target.api];
  const version = target.apiVersion;
  assert(writer.byteLength === 0, 'encodeRequest: writer holds an unfinished message');
  writer.int32(0);
  writer.int16(apiKey);
  writer.int16(version);
  writer.int32(target.correlationId);
  writer.nullableString(target.clientId, false);
  writer.emptyTaggedFields(requestHeaderVersion(apiKey, version) === 2);
  const b = body as RequestBodies[keyof RequestBodies];
  switch (target.api as keyof RequestBodies) {
    case 'PRODUCE': encodeProduceRequest(writer, version, b as RequestBodies['PRODUCE']); break;
    case 'FETCH': encodeFetchRequest(writer, version, b as RequestBodies['FETCH']); break;
    case 'LIST_OFFSETS': encodeListOffsetsRequest(writer, version, b as RequestBodies['LIST_OFFSETS']); break;
    case 'METADATA': encodeMetadataRequest(writer, version, b as RequestBodies['METADATA']); break;
    case 'API_VERSIONS': encodeApiVersionsRequest(writer, version, b as RequestBodies['API_VERSIONS']); break;
    case 'CREATE_TOPICS': encodeCreateTopicsRequest(writer, version, b as RequestBodies['CREATE_TOPICS']); break;
    case 'DELETE_RECORDS': encodeDeleteRecordsRequest(writer, version, b as RequestBodies['DELETE_RECORDS']); break;
    case 'INIT_PRODUCER_ID': encodeInitProducerIdRequest(writer, version, b as RequestBodies['INIT_PRODUCER_ID']); break;
  }
  return writer.finishFrame();
}

export interface DecodedResponse<N extends ResponseApi> {
  readonly correlationId: number;
  readonly body: ResponseBodies[N];
}

/** A response frame body (without its size prefix) of `api` at `apiVersion`. */
export function decodeResponse<N extends ResponseApi>(frame: Buffer, api: N, apiVersion: number): DecodedResponse<N> {
  const reader = new ProtocolReader(frame);
  const apiKey = ApiKey[api];
  const correlationId = reader.int32();
  reader.taggedFields(responseHeaderVersion(apiKey, apiVersion) === 1);
  let body: ResponseBodies[ResponseApi];
  switch (api as ResponseApi) {
    case 'PRODUCE': body = decodeProduceResponse(reader, apiVersion); break;
    case 'FETCH': body = decodeFetchResponse(reader, apiVersion); break;
    case 'LIST_OFFSETS': body = decodeListOffsetsResponse(reader, apiVersion); break;
    case 'METADATA': body = decodeMetadataResponse(reader, apiVersion); break;
    case 'API_VERSIONS': body = decodeApiVersionsResponse(reader, apiVersion); break;
    case 'CREATE_TOPICS': body = decodeCreateTopicsResponse(reader, apiVersion); break;
    case 'DELETE_RECORDS': body = decodeDeleteRecordsResponse(reader, apiVersion); break;
    case 'INIT_PRODUCER_ID': body = decodeInitProducerIdResponse(reader, apiVersion); break;
  }
  reader.expectEnd(`${api} v${apiVersion} response`);
  return { correlationId, body: body as ResponseBodies[N] };
}
