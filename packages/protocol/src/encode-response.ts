// encodeResponse: header + body of one response as a size-prefixed frame, in
// parts for a vectored write (record batches stay separate, zero-copy), with
// the generic codecs. ApiVersions responses use header v0 (KIP-511); the
// ApiVersions body itself (and its UNSUPPORTED_VERSION fallback) is built by
// the broker, which owns Kafka's error codes.

import { assert } from '@seglog/common';
import { apiCodecsByName, responseHeaderVersion, RESPONSE_HEADER_CODEC, type ApiName, type ResponseBodies } from './apis.js';
import type { FinishedMessage, ProtocolWriter } from './protocol-writer.js';

export interface ResponseTarget<N extends ApiName = ApiName> {
  readonly api: N;
  readonly apiVersion: number;
  readonly correlationId: number;
}

/** Writes `int32 size, response header, body` and returns the frame's parts. */
export function encodeResponse<N extends ApiName>(writer: ProtocolWriter, target: ResponseTarget<N>, body: ResponseBodies[N]): FinishedMessage {
  const codecs = apiCodecsByName(target.api);
  const version = target.apiVersion;
  assert(writer.byteLength === 0, 'encodeResponse: writer holds an unfinished message');
  assert(codecs.response.supports(version), 'encodeResponse: version outside the description');
  writer.int32(0);
  RESPONSE_HEADER_CODEC.write(writer, responseHeaderVersion(codecs.api.apiKey, version), { correlationId: target.correlationId });
  codecs.response.write(writer, version, body as unknown as Record<string, unknown>);
  return writer.finishFrame();
}
