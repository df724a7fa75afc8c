// IoError: the one typed error every Io implementation raises. NodeIo maps the
// errno of a failed syscall through `ioErrorFromErrno`; SimIo raises the same
// codes for the same situations (and for injected faults), so engine code and
// tests branch on `code` without knowing which Io produced it.
//
// Device and file-system failures carry kafka: 'KAFKA_STORAGE_ERROR' (Kafka
// maps every IOException of a log directory to it). Errors that are the
// caller's fault (a closed handle, a misaligned O_DIRECT request) keep the
// default kafka mapping; errors that may pass on their own (pool full, arena
// exhausted, too many open files) are retriable.

import { SeglogError } from '@seglog/common';

export const IoErrorCode = {
  notFound: 'SEGLOG_ERR_IO_NOT_FOUND',
  exists: 'SEGLOG_ERR_IO_EXISTS',
  notDirectory: 'SEGLOG_ERR_IO_NOT_DIRECTORY',
  isDirectory: 'SEGLOG_ERR_IO_IS_DIRECTORY',
  notEmpty: 'SEGLOG_ERR_IO_NOT_EMPTY',
  eio: 'SEGLOG_ERR_IO_EIO',
  nospc: 'SEGLOG_ERR_IO_NOSPC',
  readOnlyFs: 'SEGLOG_ERR_IO_READ_ONLY_FS',
  permission: 'SEGLOG_ERR_IO_PERMISSION',
  tooManyFiles: 'SEGLOG_ERR_IO_TOO_MANY_FILES',
  invalid: 'SEGLOG_ERR_IO_INVALID',
  busy: 'SEGLOG_ERR_IO_BUSY',
  crossDevice: 'SEGLOG_ERR_IO_CROSS_DEVICE',
  nameTooLong: 'SEGLOG_ERR_IO_NAME_TOO_LONG',
  tooLarge: 'SEGLOG_ERR_IO_TOO_LARGE',
  unknown: 'SEGLOG_ERR_IO_UNKNOWN',
  // Raised by seglog itself, not mapped from an errno.
  noProgress: 'SEGLOG_ERR_IO_NO_PROGRESS',
  closed: 'SEGLOG_ERR_IO_CLOSED',
  readOnly: 'SEGLOG_ERR_IO_READ_ONLY',
  invalidAlignment: 'SEGLOG_ERR_IO_INVALID_ALIGNMENT',
  directUnsupported: 'SEGLOG_ERR_IO_DIRECT_UNSUPPORTED',
  crashed: 'SEGLOG_ERR_IO_CRASHED',
  poolFull: 'SEGLOG_ERR_IO_POOL_FULL',
  poolClosed: 'SEGLOG_ERR_IO_POOL_CLOSED',
  locked: 'SEGLOG_ERR_IO_LOCKED',
  lockUnavailable: 'SEGLOG_ERR_IO_LOCK_UNAVAILABLE',
} as const;
export type IoErrorCode = (typeof IoErrorCode)[keyof typeof IoErrorCode];

export interface IoErrorDetails {
  /** The errno name (EIO, ENOSPC, ...) or null when seglog raised it itself. */
  readonly errno: string | null;
  /** The operation: a syscall name (pwrite, fdatasync, open, ...) or a seglog operation. */
  readonly syscall: string;
  readonly path: string | null;
  readonly context?: Readonly<Record<string, unknown>>;
  readonly cause?: unknown;
}

const errnoCodes: Readonly<Record<string, IoErrorCode>> = {
  ENOENT: IoErrorCode.notFound,
  EEXIST: IoErrorCode.exists,
  ENOTDIR: IoErrorCode.notDirectory,
  EISDIR: IoErrorCode.isDirectory,
  ENOTEMPTY: IoErrorCode.notEmpty,
  EIO: IoErrorCode.eio,
  ENOSPC: IoErrorCode.nospc,
  EDQUOT: IoErrorCode.nospc,
  EROFS: IoErrorCode.readOnlyFs,
  EACCES: IoErrorCode.permission,
  EPERM: IoErrorCode.permission,
  EMFILE: IoErrorCode.tooManyFiles,
  ENFILE: IoErrorCode.tooManyFiles,
  EINVAL: IoErrorCode.invalid,
  EBUSY: IoErrorCode.busy,
  EXDEV: IoErrorCode.crossDevice,
  ENAMETOOLONG: IoErrorCode.nameTooLong,
  EFBIG: IoErrorCode.tooLarge,
  EBADF: IoErrorCode.closed,
};

/** Codes whose cause is the device or the file system rather than the caller. */
const storageCodes: ReadonlySet<string> = new Set<string>([
  IoErrorCode.eio, IoErrorCode.nospc, IoErrorCode.readOnlyFs, IoErrorCode.noProgress,
  IoErrorCode.unknown, IoErrorCode.tooLarge, IoErrorCode.busy, IoErrorCode.permission,
]);

const retriableCodes: ReadonlySet<string> = new Set<string>([
  IoErrorCode.tooManyFiles, IoErrorCode.poolFull, IoErrorCode.busy,
]);

export class IoError extends SeglogError {
  override readonly name = 'IoError';
  readonly errno: string | null;
  readonly syscall: string;
  readonly path: string | null;

  constructor(code: IoErrorCode, message: string, details: IoErrorDetails) {
    super(code, message, {
      kafka: storageCodes.has(code) ? 'KAFKA_STORAGE_ERROR' : 'UNKNOWN_SERVER_ERROR',
      retriable: retriableCodes.has(code),
      context: { path: details.path, errno: details.errno, syscall: details.syscall, ...details.context },
      cause: details.cause,
    });
    this.errno = details.errno;
    this.syscall = details.syscall;
    this.path = details.path;
  }
}

export function isIoError(value: unknown): value is IoError {
  return value instanceof IoError;
}

/** The seglog code for an errno name (unknown errnos map to SEGLOG_ERR_IO_UNKNOWN). */
export function ioCodeForErrno(errno: string): IoErrorCode {
  return errnoCodes[errno] ?? IoErrorCode.unknown;
}

/** An IoError for a failed syscall with errno name `errno`. */
export function ioErrorFromErrno(errno: string, syscall: string, path: string | null, cause?: unknown): IoError {
  const code = ioCodeForErrno(errno);
  return new IoError(code, `${syscall} ${path ?? ''}: ${errno}`, { errno, syscall, path, cause });
}

/**
 * Turns whatever node:fs threw into an IoError. Errors without an errno code
 * (TypeError from bad arguments) are programmer errors and are rethrown as is.
 */
export function ioErrorFromNode(error: unknown, syscall: string, path: string | null): IoError {
  if (error instanceof IoError) return error;
  const errno = (error as { code?: unknown } | null)?.code;
  if (typeof errno !== 'string' || !/^E[A-Z0-9]+$/.test(errno)) throw error;
  return ioErrorFromErrno(errno, syscall, path, error);
}
