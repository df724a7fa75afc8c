/**
 * The public surface of the @seglog/native package.
 * @module @seglog/native
 */
// @seglog/native: the optional addon (csrc/), loaded once when this module is
// evaluated. It is never required for correctness: when it is missing, fails
// its known-answer self-test, or SEGLOG_NATIVE=0, `capabilities.loaded` is
// false with a `reason`, every flag is false and every function below is
// null. Fallbacks live with the callers (records: crc-32/crc32c.js; io:
// ftruncate/zero-fill, WebAssembly.Memory arena; fetch: pread + write).
//
// Syscall failures are NativeErrors (SeglogError, code SEGLOG_ERR_NATIVE_*,
// `errno` name and `syscall`); bad arguments are assertion failures.

import type { Socket } from 'node:net';
import { assert } from '@seglog/common';
import { NativeErrorCode, nativeErrorFrom } from './internal/errors.js';
import { loadNative } from './internal/loader.js';
import type { NativeCapabilities } from './internal/loader.js';

export type { NativeCapabilities } from './internal/loader.js';
export { NativeError, NativeErrorCode, isNativeError } from './internal/errors.js';

const { binding, capabilities: loadedCapabilities } = loadNative({ env: process.env });

/** What the addon provides in this process; frozen. */
export const capabilities: NativeCapabilities = loadedCapabilities;

/** fallocate(2) mode bits (linux/falloc.h; the same on every Linux arch). PUNCH_HOLE needs KEEP_SIZE. */
export const FALLOC_FL = { KEEP_SIZE: 0x01, PUNCH_HOLE: 0x02, ZERO_RANGE: 0x10 } as const;

/** posix_fadvise advice; the addon maps these to the platform's POSIX_FADV_* values. */
export const POSIX_FADV = { NORMAL: 0, RANDOM: 1, SEQUENTIAL: 2, WILLNEED: 3, DONTNEED: 4, NOREUSE: 5 } as const;
export type PosixFadvice = (typeof POSIX_FADV)[keyof typeof POSIX_FADV];

/** Default for SendfileOptions.idleTimeoutMs. */
export const SENDFILE_IDLE_TIMEOUT_MS_DEFAULT = 30_000;

export interface SendfileOptions {
  /** Fail with ETIMEDOUT after this long without the socket becoming writable. */
  readonly idleTimeoutMs?: number;
}

/** System page size as the addon sees it (sysconf), or null when not loaded. */
export const pageSize: number | null = binding === null ? null : binding.pageSize;

/**
 * CRC-32C of all of `buf` continuing from `seed` (0 for a fresh CRC; a
 * previous result to chain: crc32c(b, crc32c(a, 0)) === crc32c(a ++ b, 0));
 * unsigned result. Hardware (SSE4.2, ~16 GB/s at 64 KiB) when the CPU has it,
 * else slicing-by-8 (~1.4 GB/s). A call costs ~90 ns of N-API overhead, so
 * below ~128 bytes crc-32/crc32c.js is faster.
 */
export const crc32c: ((buf: Uint8Array, seed: number) => number) | null = binding === null ? null : binding.crc32c;

function checkFd(fd: number, what: string): void {
  assert(Number.isInteger(fd), what);
  assert(fd >= 0, what);
}

function checkPosition(value: number, what: string): void {
  assert(Number.isSafeInteger(value), what);
  assert(value >= 0, what);
}

function checkFallocate(fd: number, mode: number, offset: number, length: number): void {
  checkFd(fd, 'fallocate: fd must be an integer >= 0');
  assert(Number.isInteger(mode), 'fallocate: mode must be FALLOC_FL bits');
  assert(mode >= 0 && mode <= 0xff, 'fallocate: mode must be FALLOC_FL bits');
  checkPosition(offset, 'fallocate: offset must be a safe integer >= 0');
  checkPosition(length, 'fallocate: length must be a safe integer >= 1');
  assert(length >= 1, 'fallocate: length must be a safe integer >= 1');
}

const rawFallocate = binding?.fallocate;
const rawFallocateSync = binding?.fallocateSync;

/**
 * fallocate(2) on the libuv threadpool: mode 0 allocates blocks and grows the
 * size, KEEP_SIZE allocates beyond the size, PUNCH_HOLE|KEEP_SIZE frees,
 * ZERO_RANGE zeroes. A mode the file system lacks rejects with errno ENOTSUP
 * (EOPNOTSUPP: node:fs names errno 95 so).
 */
export const fallocate: ((fd: number, mode: number, offset: number, length: number) => Promise<void>) | null =
  rawFallocate === undefined ? null : (fd, mode, offset, length) => {
    checkFallocate(fd, mode, offset, length);
    return rawFallocate(fd, mode, offset, length).then(undefined, (error: unknown) => {
      throw nativeErrorFrom(error, NativeErrorCode.fallocate, { fd, mode, offset, length });
    });
  };

/** fallocate(2) on the calling thread; see fallocate. */
export const fallocateSync: ((fd: number, mode: number, offset: number, length: number) => void) | null =
  rawFallocateSync === undefined ? null : (fd, mode, offset, length) => {
    checkFallocate(fd, mode, offset, length);
    try {
      rawFallocateSync(fd, mode, offset, length);
    } catch (error) {
      throw nativeErrorFrom(error, NativeErrorCode.fallocate, { fd, mode, offset, length });
    }
  };

const rawFadvise = binding?.fadvise;

/** posix_fadvise(2), on the calling thread (length 0 = to end of file). */
export const fadvise: ((fd: number, offset: number, length: number, advice: PosixFadvice) => void) | null =
  rawFadvise === undefined ? null : (fd, offset, length, advice) => {
    checkFd(fd, 'fadvise: fd must be an integer >= 0');
    checkPosition(offset, 'fadvise: offset must be a safe integer >= 0');
    checkPosition(length, 'fadvise: length must be a safe integer >= 0');
    assert(Number.isInteger(advice), 'fadvise: advice must be a POSIX_FADV value');
    assert(advice >= 0 && advice <= 5, 'fadvise: advice must be a POSIX_FADV value');
    try {
      rawFadvise(fd, offset, length, advice);
    } catch (error) {
      throw nativeErrorFrom(error, NativeErrorCode.fadvise, { fd, offset, length, advice });
    }
  };

const rawSendfile = binding?.sendfile;

/**
 * sendfile(2) of file bytes [position, position + length) to a socket, on the
 * libuv threadpool. Resolves with the bytes sent: `length`, or fewer when the
 * file ends first (0 at or beyond EOF). EAGAIN waits in poll(POLLOUT) up to
 * idleTimeoutMs without progress (then ETIMEDOUT); EINTR is retried. Rejects
 * with a NativeError (code SEGLOG_ERR_NATIVE_SENDFILE, errno EPIPE,
 * ECONNRESET, ETIMEDOUT, EBADF, ...; context.bytesSent = bytes already sent;
 * the connection is then in an unknown state: close it).
 *
 * The caller must drain the socket's own write queue first
 * (socket.writableLength === 0) and write nothing until this settles. Both
 * fds are dup()ed for the duration, so closing them meanwhile is safe, but a
 * destroyed socket's connection stays open until the call ends. Each call in
 * flight holds a threadpool thread: bound their number. Not for TLS sockets.
 */
export const sendfile: ((socketFd: number, fileFd: number, position: number, length: number, options?: SendfileOptions) => Promise<number>) | null =
  rawSendfile === undefined ? null : (socketFd, fileFd, position, length, options) => {
    checkFd(socketFd, 'sendfile: socketFd must be an integer >= 0');
    checkFd(fileFd, 'sendfile: fileFd must be an integer >= 0');
    checkPosition(position, 'sendfile: position must be a safe integer >= 0');
    checkPosition(length, 'sendfile: length must be a safe integer >= 0');
    const idleTimeoutMs = options?.idleTimeoutMs ?? SENDFILE_IDLE_TIMEOUT_MS_DEFAULT;
    assert(Number.isInteger(idleTimeoutMs), 'sendfile: idleTimeoutMs must be an integer in [1, 2^31 - 1]');
    assert(idleTimeoutMs >= 1 && idleTimeoutMs <= 0x7fffffff, 'sendfile: idleTimeoutMs must be an integer in [1, 2^31 - 1]');
    return rawSendfile(socketFd, fileFd, position, length, idleTimeoutMs).then(undefined, (error: unknown) => {
      throw nativeErrorFrom(error, NativeErrorCode.sendfile, { socketFd, fileFd, position, length });
    });
  };

const rawPwritevDatasync = binding?.pwritevDatasync;

/**
 * pwritev(2) of `buffers` at `position`, then fdatasync(2) of the file, in ONE
 * libuv threadpool job (one worker wake-up and one completion instead of two:
 * a durable append's write and its sync). Resolves once every byte is written
 * and the fdatasync, issued after the write completed, returned success (so
 * every byte written to the file before the call is durable too). Short writes
 * continue; a write that makes no progress fails with errno EIO and
 * context.noProgress. Rejects with a NativeError (code
 * SEGLOG_ERR_NATIVE_PWRITEV_DATASYNC, `syscall` 'pwritev': nothing synced, or
 * 'fdatasync': written, not durable; context.bytesWritten). The fd is dup()ed
 * and every buffer is referenced until the job ends: the caller may reuse the
 * array, not the buffers' bytes. At most 1024 buffers (IOV_MAX).
 */
export const pwritevDatasync: ((fd: number, buffers: readonly Uint8Array[], position: number) => Promise<void>) | null =
  rawPwritevDatasync === undefined ? null : (fd, buffers, position) => {
    checkFd(fd, 'pwritevDatasync: fd must be an integer >= 0');
    checkPosition(position, 'pwritevDatasync: position must be a safe integer >= 0');
    assert(buffers.length >= 1 && buffers.length <= 1024, 'pwritevDatasync: 1..1024 buffers');
    return rawPwritevDatasync(fd, buffers, position).then(undefined, (error: unknown) => {
      throw nativeErrorFrom(error, NativeErrorCode.pwritevDatasync, { fd, position });
    });
  };

const rawStartWriteback = binding?.startWriteback;

/**
 * sync_file_range(2) with SYNC_FILE_RANGE_WRITE on the libuv threadpool:
 * starts the writeback of the dirty pages of [offset, offset + length)
 * without waiting for it. Not a durability guarantee (no metadata, no disk
 * cache flush: fdatasync still decides); a hint that spreads a buffered
 * writer's disk work over time, so the next fdatasync has little left to
 * write (RocksDB's bytes_per_sync). The fd is dup()ed for the call. Rejects
 * with a NativeError (SEGLOG_ERR_NATIVE_WRITEBACK: EBADF, ESPIPE, EIO).
 */
export const startWriteback: ((fd: number, offset: number, length: number) => Promise<void>) | null =
  rawStartWriteback === undefined ? null : (fd, offset, length) => {
    checkFd(fd, 'startWriteback: fd must be an integer >= 0');
    checkPosition(offset, 'startWriteback: offset must be a safe integer >= 0');
    assert(Number.isSafeInteger(length) && length >= 1, 'startWriteback: length must be a safe integer >= 1');
    return rawStartWriteback(fd, offset, length).then(undefined, (error: unknown) => {
      throw nativeErrorFrom(error, NativeErrorCode.writeback, { fd, offset, length });
    });
  };

const rawPwritevMany = binding?.pwritevMany;

/** One write of pwritevMany: every byte of `buffers` (1..1024) to `fd` at `position`. */
export interface ManyWrite {
  readonly fd: number;
  readonly position: number;
  readonly buffers: readonly Uint8Array[];
}

/**
 * Several pwritev(2)s, to any files, in ONE libuv threadpool job (one worker
 * wake-up and one completion for all: a broker's appends to many partitions
 * in one turn). The writes run in order, each to its end (short writes
 * continue) or its first error; one failing does not stop the others.
 * Resolves, never rejects, with one slot per write: null when every byte was
 * written, else a NativeError (code SEGLOG_ERR_NATIVE_PWRITEV_MANY, syscall
 * 'pwritev', context.bytesWritten; a write that made no progress is EIO with
 * context.noProgress). The fds are NOT dup()ed: the caller keeps every fd
 * open until the promise settles. Buffers are referenced until the job ends.
 */
export const pwritevMany: ((writes: readonly ManyWrite[]) => Promise<Array<unknown>>) | null =
  rawPwritevMany === undefined ? null : (writes) => {
    assert(writes.length >= 1, 'pwritevMany: at least one write');
    const fds: number[] = [];
    const positions: number[] = [];
    const vectors: (readonly Uint8Array[])[] = [];
    for (const w of writes) {
      checkFd(w.fd, 'pwritevMany: fd must be an integer >= 0');
      checkPosition(w.position, 'pwritevMany: position must be a safe integer >= 0');
      assert(w.buffers.length >= 1 && w.buffers.length <= 1024, 'pwritevMany: 1..1024 buffers per write');
      fds.push(w.fd);
      positions.push(w.position);
      vectors.push(w.buffers);
    }
    return rawPwritevMany(fds, positions, vectors).then((slots) => slots.map((slot, i) =>
      slot === null ? null : nativeErrorFrom(slot, NativeErrorCode.pwritevMany, { fd: fds[i], position: positions[i] })));
  };

const rawAlignedAlloc = binding?.alignedAlloc;

/**
 * A zero-filled (hence pre-touched) Buffer of `size` bytes whose first byte
 * is aligned to `alignment` (a power of two in [8, 2^30]); posix_memalign
 * memory freed when the Buffer is collected. Allocate pools once and reuse.
 */
export const alignedAlloc: ((size: number, alignment: number) => Buffer) | null =
  rawAlignedAlloc === undefined ? null : (size, alignment) => {
    assert(Number.isInteger(size), 'alignedAlloc: size must be an integer in [1, 2^32]');
    assert(size >= 1 && size <= 2 ** 32, 'alignedAlloc: size must be an integer in [1, 2^32]');
    assert(Number.isInteger(alignment), 'alignedAlloc: alignment must be in [8, 2^30]');
    assert(alignment >= 8 && alignment <= 2 ** 30, 'alignedAlloc: alignment must be in [8, 2^30]');
    assert((alignment & (alignment - 1)) === 0, 'alignedAlloc: alignment must be a power of two');
    try {
      return rawAlignedAlloc(size, alignment);
    } catch (error) {
      throw nativeErrorFrom(error, NativeErrorCode.alignedAlloc, { size, alignment });
    }
  };

/**
 * The address of buf's first byte modulo `modulus` (any Uint8Array, any
 * allocator): checks O_DIRECT alignment of arenas and slices.
 */
export const bufferAddressMod: ((buf: Uint8Array, modulus: number) => number) | null =
  binding === null ? null : binding.bufferAddressMod;

/**
 * The fd of a plain TCP or Unix socket for sendfile, or null when it has none
 * (TLS, not yet connected, destroyed, or a non-Unix platform). Reads the
 * undocumented socket._handle.fd, as every sendfile user on Node must.
 */
export function socketFd(socket: Socket): number | null {
  if ((socket as Socket & { encrypted?: boolean }).encrypted === true) return null;
  const handle = (socket as unknown as { _handle?: { fd?: unknown } | null })._handle;
  const fd = handle?.fd;
  return typeof fd === 'number' && Number.isInteger(fd) && fd >= 0 ? fd : null;
}

/** indexBatches' entry sizes, in int32s: 4 per batch, 8 per record (see csrc/batch-index.cc). */
export const BATCH_INDEX = { BATCH_STRIDE: 4, RECORD_STRIDE: 8, FLAG_CRC_OK: 1, FLAG_INDEXED: 2 } as const;

/**
 * Walks the whole v2 record batches of buf[from, to) in one call: for each,
 * an entry of BATCH_STRIDE int32s in `batches` ([start, size, flags,
 * firstRecord]; flags FLAG_CRC_OK when the stored CRC-32C matches,
 * FLAG_INDEXED when its records are in `records`), and for an uncompressed
 * batch whose records all have the plain form (3-byte varints at most, no
 * headers), RECORD_STRIDE int32s per record ([recordStart, attributes,
 * timestampDelta, offsetDelta, keyPosition, keyLength, valuePosition,
 * valueLength], positions in `buf`). Returns the number of batch entries;
 * stops before a partial or malformed batch (size below 61, magic not 2) or
 * when `batches` is full. Never throws on bad bytes: anything it does not
 * index is left to the JavaScript decoder. `to` must be below 2^31.
 */
export const indexBatches: ((buf: Uint8Array, from: number, to: number, batches: Int32Array, records: Int32Array) => number) | null =
  binding === null ? null : binding.indexBatches;

/**
 * indexBatches as one libuv threadpool job (~30 us of hop, worth it for a
 * window of many batches): the event loop is free meanwhile. buf, batches
 * and records are referenced until the promise settles; nothing may write
 * them (or read the tables) before. Argument errors throw synchronously.
 */
export const indexBatchesAsync: ((buf: Uint8Array, from: number, to: number, batches: Int32Array, records: Int32Array) => Promise<number>) | null =
  binding === null ? null : binding.indexBatchesAsync;

/**
 * scanBatch's io slots (a Float64Array of at least IO_LENGTH) and result
 * bits (see csrc/batch-scan.cc). Rule bits go in io[RULES].
 */
export const SCAN_BATCH = {
  IO_LENGTH: 11,
  NOW: 0, BEFORE_MAX_MS: 1, AFTER_MAX_MS: 2, RULES: 3,
  CRC: 4, MAX_TIMESTAMP: 5, MAX_TIMESTAMP_INDEX: 6, CONSECUTIVE: 7, KEY_ERROR_INDEX: 8, TIMESTAMP_ERROR_INDEX: 9, TIMESTAMP_ERROR: 10,
  RULE_BOUND_TIMESTAMPS: 1, RULE_COMPACTED: 2,
  RESULT_CRC_OK: 1, RESULT_SCANNED: 2,
} as const;

/**
 * The validation pass of the producer batch buf[start, end) (end - start >=
 * 61) in one call: its CRC-32C over [start + 21, end) into io[CRC], and, for
 * an uncompressed CreateTime batch, the walk of @seglog/records'
 * internal/fast-scan.ts over its records (the same accepted forms, give-ups
 * and findings) with the rules in io[NOW..RULES]. Returns RESULT_CRC_OK when
 * the stored CRC matches, RESULT_SCANNED when the walk accepted every record
 * (its findings in io[MAX_TIMESTAMP..TIMESTAMP_ERROR]). Never throws on bad
 * bytes; bad arguments are TypeErrors (io[RULES] must be an integer in 0..3).
 */
export const scanBatch: ((buf: Uint8Array, start: number, end: number, io: Float64Array) => number) | null =
  binding === null ? null : binding.scanBatch;
