// The broker's own part of the wire protocol: Kafka error codes, the table of
// supported APIs (derived from @seglog/protocol's descriptions) and the
// ApiVersions bodies. The codecs, primitives and framing live in
// @seglog/protocol; the names below that come from there are re-exported so
// that users of @seglog/broker (tests, benchmarks) keep their imports. New
// code imports them from @seglog/protocol. See packages/broker/README.md.

export { KAFKA_ERROR_CODES, kafkaErrorCode } from './kafka-error-codes.js';
export type { BrokerErrorName } from './kafka-error-codes.js';
export { ApiKey, SUPPORTED_APIS, supportedApi, isVersionSupported } from './supported-apis.js';
export type { ApiKeyId, ApiName, SupportedApi } from './supported-apis.js';
export { apiVersionsResponse, apiVersionsFallback } from './api-versions-response.js';

export {
  DEFAULT_MAX_FRAME_BYTES, FrameReader, MemoryPool, ProtocolErrorCode, ProtocolReader, ProtocolWriter, ZERO_UUID,
  decodeRequest, decodeResponse, encodeRequest, encodeResponse, requestHeaderVersion, responseHeaderVersion,
} from '@seglog/protocol';
export type {
  DecodedRequest, DecodedResponse, FinishedMessage, FrameReaderOptions, MessagePart, ProtocolErrorCodeName, RecordsRef,
  RequestBodies, RequestHeader, RequestTarget, ResponseBodies, ResponseTarget, TagHandler,
  AbortedTransaction, ApiVersionRange, ApiVersionsRequest, ApiVersionsResponse, CreatableReplicaAssignment, CreatableTopic,
  CreatableTopicConfig, CreatableTopicConfigResult, CreatableTopicResult, CreateTopicsRequest, CreateTopicsResponse,
  DeleteRecordsPartition, DeleteRecordsPartitionResult, DeleteRecordsRequest, DeleteRecordsResponse, DeleteRecordsTopic,
  DeleteRecordsTopicResult, FetchPartition, FetchPartitionResponse, FetchRequest, FetchResponse, FetchTopic,
  FetchTopicResponse, ForgottenTopic, InitProducerIdRequest, InitProducerIdResponse, ListOffsetsPartition,
  ListOffsetsPartitionResponse, ListOffsetsRequest, ListOffsetsResponse, ListOffsetsTopic, ListOffsetsTopicResponse,
  MetadataBroker, MetadataPartition, MetadataRequest, MetadataRequestTopic, MetadataResponse, MetadataTopic,
  ProducePartitionData, ProducePartitionResponse, ProduceRecordError, ProduceRequest, ProduceResponse, ProduceTopicData,
  ProduceTopicResponse,
} from '@seglog/protocol';
/** The API names encodeResponse takes (all of them: every API has a response). */
export type { ApiName as ResponseApi } from '@seglog/protocol';
