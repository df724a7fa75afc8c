// @seglog/broker: the reference single-node Kafka-protocol broker. So far:
// the wire protocol layer (./protocol). See README.md.
export * from './protocol/index.js';
