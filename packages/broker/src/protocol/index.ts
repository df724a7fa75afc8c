// The broker's own part of the wire protocol: the ApiVersions bodies. Kafka's
// error codes and the table of supported APIs are @seglog/protocol's (the load
// client needs them too); they are re-exported here so the broker's modules
// and its public index keep one import site. See packages/broker/README.md.

export { KAFKA_ERROR_CODES, kafkaErrorCode, ApiKey, SUPPORTED_APIS, supportedApi, isVersionSupported } from '@seglog/protocol';
export type { BrokerErrorName, ApiKeyId, ApiName, SupportedApi } from '@seglog/protocol';
export { apiVersionsResponse, apiVersionsFallback } from './api-versions-response.js';

export { KAFKA_API_NAMES, kafkaApiName } from './kafka-api-names.js';
