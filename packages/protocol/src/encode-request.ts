// Client side (the diagnostic client and tests): a request as a size-prefixed
// frame, and a response frame (without its size prefix) back into a body,
// with the generic codecs. The broker itself only decodes requests and
// encodes responses.

import { assert } from '@seglog/common';
import {
  apiCodecsByName, requestHeaderVersion, responseHeaderVersion, REQUEST_HEADER_CODEC, RESPONSE_HEADER_CODEC,
  type ApiName, type RequestBodies, type ResponseBodies,
} from './apis.js';
import { ProtocolReader } from './protocol-reader.js';
import type { FinishedMessage, ProtocolWriter } from './protocol-writer.js';

export interface RequestTarget<N extends ApiName = ApiName> {
  readonly api: N;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
}

export function encodeRequest<N extends ApiName>(writer: ProtocolWriter, target: RequestTarget<N>, body: RequestBodies[N]): FinishedMessage {
  const codecs = apiCodecsByName(target.api);
  const version = target.apiVersion;
  assert(writer.byteLength === 0, 'encodeRequest: writer holds an unfinished message');
  assert(codecs.request.supports(version), 'encodeRequest: version outside the description');
  writer.int32(0);
  REQUEST_HEADER_CODEC.write(writer, requestHeaderVersion(codecs.api.apiKey, version), {
    requestApiKey: codecs.api.apiKey, requestApiVersion: version, correlationId: target.correlationId, clientId: target.clientId,
  });
  codecs.request.write(writer, version, body as unknown as Record<string, unknown>);
  return writer.finishFrame();
}

export interface DecodedResponse<N extends ApiName = ApiName> {
  readonly correlationId: number;
  readonly body: ResponseBodies[N];
}

export function decodeResponse<N extends ApiName>(frame: Buffer, api: N, apiVersion: number): DecodedResponse<N> {
  const codecs = apiCodecsByName(api);
  const reader = new ProtocolReader(frame);
  const header = RESPONSE_HEADER_CODEC.decode(reader, responseHeaderVersion(codecs.api.apiKey, apiVersion)) as { readonly correlationId: number };
  const body = codecs.response.decode(reader, apiVersion);
  reader.expectEnd(`${api} v${apiVersion} response`);
  return { correlationId: header.correlationId, body: body as unknown as ResponseBodies[N] };
}
