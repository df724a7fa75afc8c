// Typed operating errors of Segment and Log (SEGLOG_ERR_LOG_*). One
// constructor per code so the code, the Kafka mapping and the context fields
// stay together.

import { SeglogError } from '@seglog/common';

/** The log failed a write, fsync, rename or truncate earlier; it is fail-stop until reopened. */
export function logOffline(dir: string, cause: unknown): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_OFFLINE', `log ${dir} is offline after an I/O failure`, {
    kafka: 'KAFKA_STORAGE_ERROR',
    context: { dir },
    cause,
  });
}

export function logClosed(dir: string): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_CLOSED', `log ${dir} is closed`, { kafka: 'KAFKA_STORAGE_ERROR', context: { dir } });
}

export function offsetOutOfRange(dir: string, offset: number, logStartOffset: number, logEndOffset: number, what: string): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_OFFSET_OUT_OF_RANGE', `${what}: offset ${offset} is outside [${logStartOffset}, ${logEndOffset}] of log ${dir}`, {
    kafka: 'OFFSET_OUT_OF_RANGE',
    context: { dir, offset, logStartOffset, logEndOffset },
  });
}

/**
 * written()/durable() of an offset the log has not accepted (offset >=
 * logEndOffset): such a waiter would wait for a record nobody appended, so
 * it is refused at once. Pass an append's `lastOffset`, or logEndOffset − 1
 * for "everything accepted so far".
 */
export function offsetNotAppended(dir: string, offset: number, logEndOffset: number, what: string): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_OFFSET_NOT_APPENDED',
    `${what}(${offset}): offset ${offset} has not been appended (log end offset ${logEndOffset}, log ${dir}); pass an append's lastOffset, or logEndOffset - 1 for everything accepted so far`, {
      context: { dir, offset, logEndOffset },
    });
}

/** Kafka's RecordBatchTooLargeException: one append larger than segment.bytes. */
export function recordListTooLarge(dir: string, sizeInBytes: number, segmentBytes: number): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_RECORD_LIST_TOO_LARGE', `append of ${sizeInBytes} bytes exceeds segment.bytes ${segmentBytes} (log ${dir})`, {
    kafka: 'RECORD_LIST_TOO_LARGE',
    context: { dir, sizeInBytes, segmentBytes },
  });
}

/** Kafka's UnexpectedAppendOffsetException: a verbatim append starting below the log end offset. */
export function unexpectedAppendOffset(dir: string, firstOffset: number, lastOffset: number, logEndOffset: number): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_UNEXPECTED_APPEND_OFFSET', `follower append [${firstOffset}, ${lastOffset}] starts below the log end offset ${logEndOffset} (log ${dir})`, {
    context: { dir, firstOffset, lastOffset, logEndOffset },
  });
}

/** Kafka's OffsetsOutOfOrderException: batch offsets inside one verbatim append do not increase. */
export function offsetsOutOfOrder(dir: string, previousLastOffset: number, baseOffset: number): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_OFFSETS_OUT_OF_ORDER', `follower append: batch at ${baseOffset} does not follow last offset ${previousLastOffset} (log ${dir})`, {
    context: { dir, previousLastOffset, baseOffset },
  });
}

/** Damage in bytes that were durable (below the recovery point), or an unreadable batch header on a read path. */
export function logCorruption(path: string, reason: string, context: Readonly<Record<string, unknown>>, cause?: unknown): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_CORRUPTION', `corrupt segment ${path}: ${reason}`, {
    kafka: 'KAFKA_STORAGE_ERROR',
    context: { path, reason, ...context },
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * A read reached a batch that a damage survey found damaged in the .log
 * (issue 23 0c): the offsets [firstOffset, nextOffset) cannot be read; the
 * log continues at nextOffset. Kafka answers a corrupt batch at fetch with
 * CORRUPT_MESSAGE (its CorruptRecordException), so the client sees what
 * happened instead of a storage error it retries forever.
 */
export function corruptBatch(path: string, baseOffset: number, range: { position: number; resumePosition: number; firstOffset: number; nextOffset: number }): SeglogError {
  const lost = range.nextOffset - range.firstOffset;
  return new SeglogError('SEGLOG_ERR_LOG_CORRUPT_BATCH',
    `damaged batch in ${path} at position ${range.position} (${range.resumePosition - range.position} bytes): ` +
    `${lost === 1 ? `offset ${range.firstOffset}` : `offsets ${range.firstOffset}..${range.nextOffset - 1}`} cannot be read; the log continues at offset ${range.nextOffset}`, {
      kafka: 'CORRUPT_MESSAGE',
      context: { path, baseOffset, position: range.position, resumePosition: range.resumePosition, firstOffset: range.firstOffset, nextOffset: range.nextOffset },
    });
}

/** A verbatim append holding no complete batch. */
export function emptyAppend(dir: string, bytes: number): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_EMPTY_APPEND', `follower append of ${bytes} bytes holds no complete batch (log ${dir})`, {
    kafka: 'CORRUPT_MESSAGE',
    context: { dir, bytes },
  });
}

/** A written()/durable() waiter whose offset was removed by a truncation. */
export function logTruncated(dir: string, offset: number): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_TRUNCATED', `log ${dir} was truncated to ${offset} while waiting`, {
    context: { dir, offset },
  });
}

/** BlackholeLog keeps no record bytes, so nothing can be read back. */
export function blackholeRead(dir: string, offset: number): SeglogError {
  return new SeglogError(
    'SEGLOG_ERR_LOG_BLACKHOLE_READ',
    `log ${dir} is a blackhole: record bytes are discarded on append (benchmark mode), so offset ${offset} cannot be read`,
    { kafka: 'KAFKA_STORAGE_ERROR', context: { dir, offset } },
  );
}

/**
 * An append (or other mutation) refused at admission: the log's queue of
 * pending mutations or the shared BlockingPool's queue is full. Nothing
 * changed; retry later (Kafka clients retry KAFKA_STORAGE_ERROR).
 */
export function logQueueFull(dir: string, queue: 'log' | 'pool', context: Readonly<Record<string, unknown>>, cause?: unknown): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_QUEUE_FULL', `log ${dir}: the ${queue === 'log' ? "log's mutation queue" : 'blocking pool queue'} is full`, {
    kafka: 'KAFKA_STORAGE_ERROR',
    retriable: true,
    context: { dir, queue, ...context },
    cause,
  });
}

/** Io codes of failures that may pass on their own: out of file descriptors (EMFILE/ENFILE), out of space (ENOSPC/EDQUOT). */
const TRANSIENT_RESOURCE_CODES: ReadonlySet<string> = new Set(['SEGLOG_ERR_IO_TOO_MANY_FILES', 'SEGLOG_ERR_IO_NOSPC']);

/**
 * Whether `error` is a transient resource failure. Only meaningful at points
 * where no byte of any batch is at risk yet (creating a partition directory
 * or a new segment's files, growing a reservation): there it becomes the
 * retriable logResourceUnavailable refusal. The same errno from a write or
 * sync of data stays fail-stop.
 */
export function isTransientResourceError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && TRANSIENT_RESOURCE_CODES.has(code);
}

/**
 * A mutation refused because a resource it needed before writing anything
 * was not available (file descriptors, space for a new file or reservation).
 * Nothing was written or acknowledged and the log stays open; it works again
 * once the cause is gone. Kafka code NOT_ENOUGH_REPLICAS: every Kafka client
 * retries it (librdkafka, the Java client's RetriableException, kafkajs), and
 * it tells an idempotent producer the batch was not appended (librdkafka's
 * "not persisted"), unlike KAFKA_STORAGE_ERROR, which a stopped log keeps
 * answering until restart.
 */
export function logResourceUnavailable(dir: string, operation: string, cause: unknown): SeglogError {
  const what = (cause as { code?: unknown } | null)?.code;
  return new SeglogError('SEGLOG_ERR_LOG_RESOURCE_UNAVAILABLE', `log ${dir}: ${operation} failed (${String(what)}); nothing was written, retry later`, {
    kafka: 'NOT_ENOUGH_REPLICAS',
    retriable: true,
    context: { dir, operation, ioCode: typeof what === 'string' ? what : null },
    cause,
  });
}
