// Operating errors. Every error seglog raises for bad input, a failed disk or
// a violated limit is a SeglogError with a stable string `code`
// (SEGLOG_ERR_<AREA>_<WHAT>), context fields and an optional `cause`. Callers
// branch on `code`, never on the message. The table of codes is in
// docs/errors.md and is kept true by a test.

/** Kafka protocol error names this error maps to (the broker turns them into numeric codes). */
export type KafkaErrorName =
  | 'NONE'
  | 'OFFSET_OUT_OF_RANGE'
  | 'CORRUPT_MESSAGE'
  | 'UNKNOWN_TOPIC_OR_PARTITION'
  | 'MESSAGE_TOO_LARGE'
  | 'RECORD_LIST_TOO_LARGE'
  | 'NOT_ENOUGH_REPLICAS'
  | 'INVALID_TIMESTAMP'
  | 'UNSUPPORTED_COMPRESSION_TYPE'
  | 'OUT_OF_ORDER_SEQUENCE_NUMBER'
  | 'DUPLICATE_SEQUENCE_NUMBER'
  | 'INVALID_PRODUCER_EPOCH'
  | 'INVALID_TXN_STATE'
  | 'TRANSACTION_COORDINATOR_FENCED'
  | 'KAFKA_STORAGE_ERROR'
  | 'INVALID_RECORD'
  | 'INVALID_TOPIC_EXCEPTION'
  | 'INVALID_REQUEST'
  | 'POLICY_VIOLATION'
  | 'UNKNOWN_SERVER_ERROR';

export interface SeglogErrorOptions {
  /** Kafka error this maps to; the broker converts it to a numeric code. */
  readonly kafka?: KafkaErrorName;
  /** Whether retrying the same operation later may succeed. */
  readonly retriable?: boolean;
  /** Context fields (offsets, positions, paths, sizes). Must be JSON-serialisable. */
  readonly context?: Readonly<Record<string, unknown>>;
  readonly cause?: unknown;
}

export class SeglogError extends Error {
  override readonly name: string = 'SeglogError';
  readonly code: string;
  readonly kafka: KafkaErrorName;
  readonly retriable: boolean;
  readonly context: Readonly<Record<string, unknown>>;

  constructor(code: string, message: string, options: SeglogErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.kafka = options.kafka ?? 'UNKNOWN_SERVER_ERROR';
    this.retriable = options.retriable ?? false;
    this.context = options.context ?? {};
  }
}

export function isSeglogError(value: unknown): value is SeglogError {
  return value instanceof SeglogError;
}
