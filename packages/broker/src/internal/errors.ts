// Operating errors → Kafka numeric error codes (the one funnel the handlers
// use), and the errors the broker itself raises.

import { isSeglogError } from '@seglog/common';
import { KAFKA_ERROR_CODES } from '../protocol/index.js';
import type { PartitionLog, TopicStore } from './topic-store.js';

/** The Kafka error code for anything a handler caught: a SeglogError's `.kafka`, else UNKNOWN_SERVER_ERROR. */
export function errorCodeOf(error: unknown): number {
  if (isSeglogError(error)) return KAFKA_ERROR_CODES[error.kafka];
  return KAFKA_ERROR_CODES.UNKNOWN_SERVER_ERROR;
}

export function errorMessageOf(error: unknown): string {
  if (isSeglogError(error)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/**
 * The Kafka error code for a produce or fetch that failed on `log`: when the
 * log is no longer the store's (the topic was deleted while the request ran,
 * or a config change reopened the partition), UNKNOWN_TOPIC_OR_PARTITION or
 * NOT_LEADER_OR_FOLLOWER (the client refreshes its metadata and retries),
 * not the closed log's storage error; else errorCodeOf(error).
 */
export function partitionErrorCodeOf(store: TopicStore, log: PartitionLog, error: unknown): number {
  if (store.isCurrent(log)) return errorCodeOf(error);
  return store.get(log.topic, log.partition) === undefined ? KAFKA_ERROR_CODES.UNKNOWN_TOPIC_OR_PARTITION : KAFKA_ERROR_CODES.NOT_LEADER_OR_FOLLOWER;
}
