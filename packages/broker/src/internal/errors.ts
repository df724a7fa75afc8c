// Operating errors → Kafka numeric error codes (the one funnel the handlers
// use), and the errors the broker itself raises.

import { isSeglogError } from '@seglog/common';
import { KAFKA_ERROR_CODES } from '../protocol/index.js';

/** The Kafka error code for anything a handler caught: a SeglogError's `.kafka`, else UNKNOWN_SERVER_ERROR. */
export function errorCodeOf(error: unknown): number {
  if (isSeglogError(error)) return KAFKA_ERROR_CODES[error.kafka];
  return KAFKA_ERROR_CODES.UNKNOWN_SERVER_ERROR;
}

export function errorMessageOf(error: unknown): string {
  if (isSeglogError(error)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}
