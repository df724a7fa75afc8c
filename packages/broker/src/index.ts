/**
 * The public surface of the @seglog/broker package.
 * @module @seglog/broker
 */
// @seglog/broker: the reference single-node Kafka-protocol broker (Broker,
// main.ts) and its ApiVersions bodies (./protocol, which also re-exports the
// Kafka error codes and supported-API table of @seglog/protocol, where the
// wire protocol lives). The load client is @seglog/load. See README.md.
export * from './protocol/index.js';
export { Broker } from './broker.js';
export type { BrokerStats } from './broker.js';
export { BROKER_DEFAULTS } from './broker-options.js';
export { BROKER_NODE_FLAGS } from './node-flags.js';
export type { AckMode, BrokerOptions } from './broker-options.js';
export {
  PRODUCER_ID_BLOCK, PRODUCER_ID_FILE, PRODUCER_ID_REPAIR_MARGIN, formatProducerIdFile, parseProducerIdFile, safeProducerIdStart,
} from './internal/producer-id-allocator.js';
export type { ProducerIdFileContent } from './internal/producer-id-allocator.js';
