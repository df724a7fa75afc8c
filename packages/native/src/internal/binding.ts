// The raw surface of build/Release/seglog_native.node (csrc/addon.cc). Only
// the loader and tests use it directly; everyone else imports the checked,
// error-converting wrappers from '@seglog/native'.

/** Bumped in csrc/addon.cc with every change of this surface; a stale build is refused. */
export const ABI_VERSION = 5;

export interface RawFeatures {
  readonly fallocate: boolean;
  readonly sendfile: boolean;
  readonly fadvise: boolean;
  readonly writeback: boolean;
  readonly pwritevDatasync: boolean;
  readonly pwritevMany: boolean;
}

export interface RawCounters {
  /** sendfile(2) calls made by all sendfile workers. */
  readonly sendfileCalls: number;
  /** Times a sendfile worker got EAGAIN and waited in poll(POLLOUT). */
  readonly sendfileWaits: number;
}

/**
 * Native errors are plain Errors with `errno` (positive errno number) and
 * `syscall`; sendfile's also carry `bytesSent`. Argument errors are TypeErrors.
 */
export interface RawBinding {
  readonly abiVersion: number;
  readonly pageSize: number;
  readonly features: RawFeatures;
  readonly crc32cHardwareAvailable: boolean;
  crc32c(buf: Uint8Array, seed: number): number;
  crc32cSoftware(buf: Uint8Array, seed: number): number;
  /** Throws when crc32cHardwareAvailable is false. */
  crc32cHardware(buf: Uint8Array, seed: number): number;
  alignedAlloc(size: number, alignment: number): Buffer;
  bufferAddressMod(buf: Uint8Array, modulus: number): number;
  /** See csrc/batch-index.cc; the number of batch entries written. */
  indexBatches(buf: Uint8Array, from: number, to: number, batches: Int32Array, records: Int32Array): number;
  indexBatchesAsync(buf: Uint8Array, from: number, to: number, batches: Int32Array, records: Int32Array): Promise<number>;
  /** See csrc/batch-scan.cc; SCAN_BATCH result bits. */
  scanBatch(buf: Uint8Array, start: number, end: number, io: Float64Array): number;
  // Present only when the matching feature is true (Linux).
  fallocateSync?: (fd: number, mode: number, offset: number, length: number) => void;
  fallocate?: (fd: number, mode: number, offset: number, length: number) => Promise<void>;
  fadvise?: (fd: number, offset: number, length: number, advice: number) => void;
  startWriteback?: (fd: number, offset: number, length: number) => Promise<void>;
  sendfile?: (socketFd: number, fileFd: number, position: number, length: number, idleTimeoutMs: number) => Promise<number>;
  debugCounters?: () => RawCounters;
  pwritevDatasync?: (fd: number, buffers: readonly Uint8Array[], position: number) => Promise<void>;
  /** Resolves with one slot per entry: null, or the entry's errno error (bytesWritten, noProgress). */
  pwritevMany?: (fds: readonly number[], positions: readonly number[], vectors: readonly (readonly Uint8Array[])[]) => Promise<Array<Error | null>>;
}

/** Members every build has, checked by the loader before anything is called. */
export const REQUIRED_FUNCTIONS = [
  'crc32c', 'crc32cSoftware', 'crc32cHardware', 'alignedAlloc', 'bufferAddressMod', 'indexBatches', 'indexBatchesAsync', 'scanBatch',
] as const;

/** Members a build has when features[feature] is true. */
export const FEATURE_FUNCTIONS = {
  fallocate: ['fallocateSync', 'fallocate'],
  sendfile: ['sendfile', 'debugCounters'],
  fadvise: ['fadvise'],
  writeback: ['startWriteback'],
  pwritevDatasync: ['pwritevDatasync'],
  pwritevMany: ['pwritevMany'],
} as const satisfies Record<keyof RawFeatures, readonly string[]>;
