/**
 * The public surface of the @seglog/protocol package.
 * @module @seglog/protocol
 */
// @seglog/protocol: the Kafka wire protocol as data. Primitives (ProtocolReader,
// ProtocolWriter, typed errors), one declarative description per message, one
// generic codec that compiles a description per version, the checker that
// compares a description with Kafka's published definition, and the Kafka
// facts both sides need: the error-code table and the supported-API table.
// See README.md.

export { ProtocolReader } from './protocol-reader.js';
export type { TagHandler } from './protocol-reader.js';
export { ProtocolWriter } from './protocol-writer.js';
export type { FinishedMessage, MessagePart, RecordsRef } from './protocol-writer.js';
export { ProtocolErrorCode, protocolError, malformed } from './protocol-error.js';
export { FrameReader, DEFAULT_MAX_FRAME_BYTES } from './frame-reader.js';
export type { FrameReaderOptions } from './frame-reader.js';
export { MemoryPool } from './memory-pool.js';
export type { ProtocolErrorCodeName } from './protocol-error.js';
export {
  PRIMITIVE_TYPES, ZERO_UUID, arrayElementType, inVersions, isPrimitiveType, parseVersions,
} from './description.js';
export type {
  FieldDescription, FieldValue, MessageDescription, MessageKind, PrimitiveType, VersionRange,
} from './description.js';
export { MessageCodec } from './message-codec.js';
export type { MessageOf, StructOf } from './message-types.js';
export type { MessageCodecOptions } from './message-codec.js';
export { checkDescription, jsName } from './check-description.js';
export type { KafkaFacts, KafkaFieldFacts, KafkaMessageFacts } from './check-description.js';
export {
  ALL_DESCRIPTIONS, API_DESCRIPTIONS, REQUEST_HEADER_CODEC, RESPONSE_HEADER_CODEC, apiCodecs, apiCodecsByName,
  requestHeaderVersion, responseHeaderVersion,
} from './apis.js';
export type { ApiCodecs, ApiDescription, ApiName, RequestBodies, ResponseBodies } from './apis.js';
export { KAFKA_ERROR_CODES, kafkaErrorCode } from './kafka-error-codes.js';
export type { BrokerErrorName } from './kafka-error-codes.js';
export { ApiKey, SUPPORTED_APIS, supportedApi, isVersionSupported } from './supported-apis.js';
export type { ApiKeyId, SupportedApi } from './supported-apis.js';
export { decodeRequest } from './decode-request.js';
export type { DecodedRequest, RequestHeader } from './decode-request.js';
export { encodeResponse } from './encode-response.js';
export type { ResponseTarget } from './encode-response.js';
export { encodeRequest, decodeResponse } from './encode-request.js';
export type { DecodedResponse, RequestTarget } from './encode-request.js';
export * from './messages/headers.js';
export * from './messages/api-versions.js';
export * from './messages/metadata.js';
export * from './messages/produce.js';
export * from './messages/fetch.js';
export * from './messages/list-offsets.js';
export * from './messages/init-producer-id.js';
export * from './messages/create-topics.js';
export * from './messages/delete-records.js';
export * from './messages/delete-topics.js';
export * from './messages/describe-configs.js';
export * from './messages/alter-configs.js';
export * from './messages/create-partitions.js';
export * from './messages/incremental-alter-configs.js';
export * from './messages/describe-cluster.js';
export * from './messages/find-coordinator.js';
export * from './messages/join-group.js';
export * from './messages/sync-group.js';
export * from './messages/heartbeat.js';
export * from './messages/leave-group.js';
export * from './messages/offset-commit.js';
export * from './messages/offset-fetch.js';
export * from './messages/list-groups.js';
export * from './messages/describe-groups.js';
export * from './messages/delete-groups.js';
export * from './messages/offset-delete.js';
export * from './messages/consumer-protocol.js';
export {
  decodeConsumerAssignment, decodeConsumerSubscription, encodeConsumerAssignment, encodeConsumerSubscription,
} from './consumer-protocol.js';
export * from './messages/add-partitions-to-txn.js';
export * from './messages/add-offsets-to-txn.js';
export * from './messages/end-txn.js';
export * from './messages/txn-offset-commit.js';
export * from './messages/describe-transactions.js';
export * from './messages/list-transactions.js';
