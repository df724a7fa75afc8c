// The Kafka wire protocol layer of @seglog/broker: primitives, headers,
// framing and the message codecs. See packages/broker/README.md.

export { ProtocolReader } from './protocol-reader.js';
export type { TagHandler } from './protocol-reader.js';
export { ProtocolWriter } from './protocol-writer.js';
export type { FinishedMessage, MessagePart, RecordsRef } from './protocol-writer.js';
export { ProtocolErrorCode } from './protocol-error.js';
export type { ProtocolErrorCodeName } from './protocol-error.js';
export { KAFKA_ERROR_CODES, kafkaErrorCode } from './kafka-error-codes.js';
export type { BrokerErrorName } from './kafka-error-codes.js';
export {
  ApiKey, SUPPORTED_APIS, supportedApi, isVersionSupported, isFlexibleVersion, requestHeaderVersion, responseHeaderVersion,
} from './supported-apis.js';
export type { ApiKeyId, ApiName, SupportedApi } from './supported-apis.js';
export { decodeRequestHeader } from './request-header.js';
export type { RequestHeader } from './request-header.js';
export { encodeResponseHeader } from './response-header.js';
export { FrameReader, DEFAULT_MAX_FRAME_BYTES } from './frame-reader.js';
export type { FrameReaderOptions } from './frame-reader.js';
export { MemoryPool } from './memory-pool.js';
export { decodeRequest } from './decode-request.js';
export type { DecodedRequest, RequestBodies } from './decode-request.js';
export { encodeResponse, apiVersionsResponse, apiVersionsFallback } from './encode-response.js';
export type { ResponseApi, ResponseBodies, ResponseTarget } from './encode-response.js';
export { encodeRequest, decodeResponse } from './encode-request.js';
export type { DecodedResponse, RequestTarget } from './encode-request.js';
export * from './messages/api-versions.js';
export * from './messages/metadata.js';
export * from './messages/produce.js';
export * from './messages/fetch.js';
export * from './messages/list-offsets.js';
export * from './messages/init-producer-id.js';
export * from './messages/create-topics.js';
export * from './messages/delete-records.js';
