// @seglog/protocol: the Kafka wire protocol as data. Primitives (ProtocolReader,
// ProtocolWriter, typed errors), one declarative description per message, one
// generic codec that compiles a description per version, and the checker that
// compares a description with Kafka's published definition. See README.md.

export { ProtocolReader } from './protocol-reader.js';
export type { TagHandler } from './protocol-reader.js';
export { ProtocolWriter } from './protocol-writer.js';
export type { FinishedMessage, MessagePart, RecordsRef } from './protocol-writer.js';
export { ProtocolErrorCode, protocolError, malformed } from './protocol-error.js';
export type { ProtocolErrorCodeName } from './protocol-error.js';
