// NativeError: the operating error of every native syscall wrapper. `code`
// names the operation (stable, for branching), `errno` the errno name
// (EBADF, ENOTSUP, EPIPE, ...; names as node:fs gives them, so EOPNOTSUPP,
// errno 95 on Linux, is ENOTSUP) for callers that fall back on some errnos
// and fail on others (fallocate mode a file system lacks: ENOTSUP).

import { getSystemErrorName } from 'node:util';
import { SeglogError } from '@seglog/common';

export const NativeErrorCode = {
  fallocate: 'SEGLOG_ERR_NATIVE_FALLOCATE',
  fadvise: 'SEGLOG_ERR_NATIVE_FADVISE',
  writeback: 'SEGLOG_ERR_NATIVE_WRITEBACK',
  sendfile: 'SEGLOG_ERR_NATIVE_SENDFILE',
  pwritevDatasync: 'SEGLOG_ERR_NATIVE_PWRITEV_DATASYNC',
  pwritevMany: 'SEGLOG_ERR_NATIVE_PWRITEV_MANY',
  alignedAlloc: 'SEGLOG_ERR_NATIVE_ALIGNED_ALLOC',
} as const;
export type NativeErrorCode = (typeof NativeErrorCode)[keyof typeof NativeErrorCode];

/** errnos caused by the device or the file system rather than the caller. */
const storageErrnos: ReadonlySet<string> = new Set(['EIO', 'ENOSPC', 'EDQUOT', 'EROFS']);

export class NativeError extends SeglogError {
  override readonly name = 'NativeError';
  /** errno name, e.g. 'EBADF'. */
  readonly errno: string;
  /** The failing syscall: fallocate, sendfile, poll, posix_fadvise, posix_memalign, dup. */
  readonly syscall: string;

  constructor(code: NativeErrorCode, errno: string, syscall: string, context: Readonly<Record<string, unknown>>, cause: unknown) {
    super(code, `${syscall}: ${errno}`, {
      kafka: storageErrnos.has(errno) ? 'KAFKA_STORAGE_ERROR' : 'UNKNOWN_SERVER_ERROR',
      retriable: errno === 'ENOMEM',
      context: { errno, syscall, ...context },
      cause,
    });
    this.errno = errno;
    this.syscall = syscall;
  }
}

export function isNativeError(value: unknown): value is NativeError {
  return value instanceof NativeError;
}

function errnoName(errno: number): string {
  try {
    return getSystemErrorName(-errno);
  } catch {
    return `E${errno}`;
  }
}

/**
 * Converts an error thrown or rejected by the raw binding. Errors without a
 * numeric `errno` (TypeError for bad arguments) are programmer errors and are
 * returned unchanged for the caller to rethrow.
 */
export function nativeErrorFrom(error: unknown, code: NativeErrorCode, context: Readonly<Record<string, unknown>>): unknown {
  const fields = error as { errno?: unknown; syscall?: unknown; bytesSent?: unknown; bytesWritten?: unknown; noProgress?: unknown } | null;
  if (fields === null || typeof fields !== 'object' || typeof fields.errno !== 'number') return error;
  const syscall = typeof fields.syscall === 'string' ? fields.syscall : 'unknown';
  let extra = typeof fields.bytesSent === 'number' ? { ...context, bytesSent: fields.bytesSent } : context;
  if (typeof fields.bytesWritten === 'number') extra = { ...extra, bytesWritten: fields.bytesWritten, noProgress: fields.noProgress === true };
  return new NativeError(code, errnoName(fields.errno), syscall, extra, error);
}
