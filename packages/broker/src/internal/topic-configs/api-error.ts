// ApiError: a refusal the admin handlers answer with, a Kafka error name and
// a message (Kafka's ApiError). Thrown by the topic-config validation and the
// admin steps, caught per resource or topic by the handlers; never escapes a
// handler. Kafka error names are the broker's own (STYLE.md), so this is not
// a SeglogError (whose `kafka` names are the engine's).

import type { BrokerErrorName } from '../../protocol/index.js';

export class ApiError extends Error {
  readonly error: BrokerErrorName;

  constructor(error: BrokerErrorName, message: string) {
    super(message);
    this.name = 'ApiError';
    this.error = error;
  }
}

export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError;
}
