// @seglog/broker: the reference single-node Kafka-protocol broker (Broker,
// main.ts), its Kafka error codes and supported-API table (./protocol; the
// wire protocol itself is @seglog/protocol). See README.md.
export * from './protocol/index.js';
export { Broker } from './broker.js';
export type { BrokerStats } from './broker.js';
export { BROKER_DEFAULTS } from './broker-options.js';
export type { AckMode, BrokerOptions } from './broker-options.js';
export {
  PRODUCER_ID_BLOCK, PRODUCER_ID_FILE, PRODUCER_ID_REPAIR_MARGIN, formatProducerIdFile, parseProducerIdFile, safeProducerIdStart,
} from './internal/producer-id-allocator.js';
export type { ProducerIdFileContent } from './internal/producer-id-allocator.js';
export { runLoad } from './load/run-load.js';
export type { LoadReport, ProduceSummary, BrokerCpu } from './load/run-load.js';
export { LOAD_DEFAULTS, resolveLoadOptions } from './load/load-options.js';
export type { LoadOptions, LoadCorruption } from './load/load-options.js';
export type { ConsumeResult } from './load/load-consumer.js';
export type { LatencySummary } from './load/latency-recorder.js';
export { LoadErrorCode } from './load/load-error.js';
export { parseLoadArgs, LOAD_USAGE } from './load/load-args.js';
export { formatReport } from './load/format-report.js';
