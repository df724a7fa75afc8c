// Typed errors shared by the index classes (SEGLOG_ERR_INDEX_*).

import { SeglogError } from '@seglog/common';

/** The index is damaged (Kafka's CorruptIndexException): rebuild it from the .log file. */
export function corruptIndex(path: string, reason: string): SeglogError {
  return new SeglogError('SEGLOG_ERR_INDEX_CORRUPT', `corrupt index ${path}: ${reason}`, { context: { path, reason } });
}

/** The configured index size cannot hold a single entry. */
export function invalidIndexSize(path: string, maxIndexBytes: number, entryBytes: number): SeglogError {
  return new SeglogError('SEGLOG_ERR_INDEX_INVALID_SIZE', `index ${path}: max index size ${maxIndexBytes} is smaller than one entry (${entryBytes} bytes)`, {
    context: { path, maxIndexBytes, entryBytes },
  });
}

/** Kafka's IndexOffsetOverflowException: offset − base is outside [0, 2^31 − 1]. */
export function indexOffsetOverflow(path: string, baseOffset: number, offset: number): SeglogError {
  return new SeglogError('SEGLOG_ERR_INDEX_OFFSET_OVERFLOW', `index ${path}: offset ${offset} cannot be stored relative to base offset ${baseOffset}`, {
    context: { path, baseOffset, offset },
  });
}

/** Kafka's InvalidOffsetException: an appended offset does not increase. */
export function invalidIndexOffset(path: string, offset: number, lastOffset: number, entries: number): SeglogError {
  return new SeglogError(
    'SEGLOG_ERR_INDEX_INVALID_OFFSET',
    `index ${path}: offset ${offset} appended at entry ${entries} is not larger than the last offset ${lastOffset}`,
    { context: { path, offset, lastOffset, entries } },
  );
}

/** A mutation (append, truncation, resize, deletion) of an index opened read-only (tools). */
export function indexReadOnly(path: string, operation: string): SeglogError {
  return new SeglogError('SEGLOG_ERR_INDEX_READ_ONLY', `index ${path} was opened read-only: ${operation} is not allowed`, {
    context: { path, operation },
  });
}

/** Appending to a full index (the segment must roll first). */
export function indexFull(path: string, entries: number, maxEntries: number): SeglogError {
  return new SeglogError('SEGLOG_ERR_INDEX_FULL', `index ${path} is full (${entries} of ${maxEntries} entries)`, {
    context: { path, entries, maxEntries },
  });
}

export function roundDown(value: number, multiple: number): number {
  return value - (value % multiple);
}
