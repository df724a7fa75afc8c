// Operating errors of @seglog/records. Every rejection of bad bytes is a
// RecordsError: `code` says which class of failure (callers branch on it),
// `kafka` is the Kafka error the broker answers with, and `rule` names the
// exact check that failed (stable, for tests and logs). Context carries the
// numbers: position (byte position inside the buffer given to us), expected,
// actual, recordIndex.
import { SeglogError } from '@seglog/common';
import type { KafkaErrorName } from '@seglog/common';

export const RecordsErrorCode = {
  /** Batch larger than maxMessageBytes (checked before anything else). */
  TOO_LARGE: 'SEGLOG_ERR_RECORDS_TOO_LARGE',
  /** Framing: too short, batchLength < 14, magic outside 0..2, size < 61, truncated. */
  CORRUPT: 'SEGLOG_ERR_RECORDS_CORRUPT',
  /** Legacy message format (magic 0 or 1): seglog stores only v2 batches. */
  UNSUPPORTED_MAGIC: 'SEGLOG_ERR_RECORDS_UNSUPPORTED_MAGIC',
  /** Stored CRC-32C differs from the CRC of bytes [21, end). */
  CRC_MISMATCH: 'SEGLOG_ERR_RECORDS_CRC_MISMATCH',
  /** A header rule or the record encoding is violated. */
  INVALID_RECORD: 'SEGLOG_ERR_RECORDS_INVALID_RECORD',
  /** Compression codec id 5..7. */
  UNSUPPORTED_CODEC: 'SEGLOG_ERR_RECORDS_UNSUPPORTED_CODEC',
  /** Record timestamp outside the configured bounds, or LogAppendTime set by a producer. */
  INVALID_TIMESTAMP: 'SEGLOG_ERR_RECORDS_INVALID_TIMESTAMP',
} as const;
export type RecordsErrorCodeName = (typeof RecordsErrorCode)[keyof typeof RecordsErrorCode];

const KAFKA_BY_CODE: { readonly [C in RecordsErrorCodeName]: KafkaErrorName } = {
  SEGLOG_ERR_RECORDS_TOO_LARGE: 'MESSAGE_TOO_LARGE',
  SEGLOG_ERR_RECORDS_CORRUPT: 'CORRUPT_MESSAGE',
  SEGLOG_ERR_RECORDS_UNSUPPORTED_MAGIC: 'CORRUPT_MESSAGE',
  SEGLOG_ERR_RECORDS_CRC_MISMATCH: 'CORRUPT_MESSAGE',
  SEGLOG_ERR_RECORDS_INVALID_RECORD: 'INVALID_RECORD',
  SEGLOG_ERR_RECORDS_UNSUPPORTED_CODEC: 'UNSUPPORTED_COMPRESSION_TYPE',
  SEGLOG_ERR_RECORDS_INVALID_TIMESTAMP: 'INVALID_TIMESTAMP',
};

export class RecordsError extends SeglogError {
  override readonly name = 'RecordsError';
  /** The check that failed, e.g. 'crc', 'base-offset', 'premature-eof'. */
  readonly rule: string;

  constructor(code: RecordsErrorCodeName, rule: string, message: string, context: Readonly<Record<string, unknown>> = {}) {
    super(code, message, { kafka: KAFKA_BY_CODE[code], context: { rule, ...context } });
    this.rule = rule;
  }
}
