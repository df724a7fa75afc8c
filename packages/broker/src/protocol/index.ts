// The broker's own part of the wire protocol: Kafka error codes, the table of
// supported APIs (derived from @seglog/protocol's descriptions) and the
// ApiVersions bodies. The codecs, primitives, framing and message types are
// @seglog/protocol's: import them from there. See packages/broker/README.md.

export { KAFKA_ERROR_CODES, kafkaErrorCode } from './kafka-error-codes.js';
export type { BrokerErrorName } from './kafka-error-codes.js';
export { ApiKey, SUPPORTED_APIS, supportedApi, isVersionSupported } from './supported-apis.js';
export type { ApiKeyId, ApiName, SupportedApi } from './supported-apis.js';
export { apiVersionsResponse, apiVersionsFallback } from './api-versions-response.js';

export { KAFKA_API_NAMES, kafkaApiName } from './kafka-api-names.js';
