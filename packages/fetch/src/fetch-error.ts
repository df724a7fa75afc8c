// FetchError: the operating errors of writing a fetch response. After any of
// them except a FILE_TRUNCATED raised before the first byte
// (context.bytesWritten === 0) the byte stream to the peer is in an unknown
// state: writeFetch destroys the socket itself; a writeFetchToFd caller must
// close its fd.

import { SeglogError } from '@seglog/common';

export const FetchErrorCode = {
  /** The peer reset or closed the connection, or the socket was destroyed/ended mid-response (EPIPE, ECONNRESET, ...). */
  peerClosed: 'SEGLOG_ERR_FETCH_PEER_CLOSED',
  /** sendfile saw no progress for sendfileIdleTimeoutMs (a reader that stopped reading). */
  peerTimeout: 'SEGLOG_ERR_FETCH_PEER_TIMEOUT',
  /** A file part reaches beyond the file's current end (the segment was truncated under the plan). */
  fileTruncated: 'SEGLOG_ERR_FETCH_FILE_TRUNCATED',
  /** A raw-fd write made no progress for too many attempts in a row. */
  noProgress: 'SEGLOG_ERR_FETCH_NO_PROGRESS',
  /** Any other write or sendfile failure (EBADF, EINVAL, EIO, ...). */
  writeFailed: 'SEGLOG_ERR_FETCH_WRITE_FAILED',
} as const;
export type FetchErrorCode = (typeof FetchErrorCode)[keyof typeof FetchErrorCode];

export class FetchError extends SeglogError {
  override readonly name = 'FetchError';

  constructor(code: FetchErrorCode, message: string, context: Readonly<Record<string, unknown>>, cause?: unknown) {
    super(code, message, {
      kafka: code === FetchErrorCode.fileTruncated ? 'KAFKA_STORAGE_ERROR' : 'UNKNOWN_SERVER_ERROR',
      // A truncated segment: fetching again reads the log as it is now.
      retriable: code === FetchErrorCode.fileTruncated,
      context,
      ...(cause === undefined ? {} : { cause }),
    });
  }
}

export function isFetchError(value: unknown): value is FetchError {
  return value instanceof FetchError;
}
