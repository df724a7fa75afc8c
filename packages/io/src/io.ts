// The one I/O seam. Every byte seglog puts on or takes from a disk goes
// through an `Io`: NodeIo for real files (node:fs plus the optional native
// addon), SimIo for a deterministic in-memory disk with crash modes and
// injected faults. Engine code never imports node:fs directly.
//
// Conventions:
// - Paths are absolute or relative strings exactly as given; SimIo normalises
//   them with node:path/posix.
// - Positions and lengths are safe integers; a call that would write or read
//   past 2^53 is a programmer error.
// - Every method that returns a promise rejects only with an IoError (a
//   SeglogError whose code starts with SEGLOG_ERR_IO_), carrying the errno
//   name in `errno` and the path in its context.
// - pwrite/pwritev loop over short writes until every byte is written; a call
//   that makes zero progress is an error (SEGLOG_ERR_IO_NO_PROGRESS).
// - pread loops over short reads until `length` bytes are read or end of
//   file; it returns the number of bytes read (less than `length` only at
//   end of file).
// - A read-only handle refuses writes, truncates and allocates
//   (SEGLOG_ERR_IO_READ_ONLY); a closed one refuses everything
//   (SEGLOG_ERR_IO_CLOSED). open() never returns a directory.
// - O_DIRECT: misaligned positions, lengths or buffers fail with
//   SEGLOG_ERR_IO_INVALID_ALIGNMENT (see README.md for what each Io checks).

/** How a file is opened. */
export interface OpenOptions {
  /** Create the file if it does not exist. */
  readonly create?: boolean;
  /** With create: fail with SEGLOG_ERR_IO_EXISTS if the file exists. */
  readonly exclusive?: boolean;
  /** Open for reading only. Default: read and write. */
  readonly readOnly?: boolean;
  /** O_DIRECT: buffers, positions and lengths must be aligned to `directAlignment`. */
  readonly direct?: boolean;
  /** O_DSYNC: every write is durable when it completes. */
  readonly dsync?: boolean;
}

/**
 * How reserved space is created ahead of writes ("reservation growth"). Every
 * mode leaves the bytes below the current size unchanged and never shrinks
 * the file; without the native addon (or on ENOTSUP) NodeIo falls back:
 * 'fallocate' to ftruncate, 'fallocate-keep-size' to nothing.
 */
export type AllocateMode =
  /** fallocate(2) mode 0: blocks reserved, file size extended. */
  | 'fallocate'
  /** fallocate(2) FALLOC_FL_KEEP_SIZE: blocks reserved, size unchanged. */
  | 'fallocate-keep-size'
  /** ftruncate: size extended, sparse (what Kafka's preallocate does). */
  | 'truncate'
  /** write zeros: blocks allocated and written (fastest later fdatasync). */
  | 'zero';

export interface FileStat {
  readonly size: number;
  readonly isFile: boolean;
  readonly isDirectory: boolean;
  readonly mtimeMs: number;
}

export interface FsStat {
  /** Bytes available to an unprivileged writer (bsize × bavail). */
  readonly availableBytes: number;
  readonly totalBytes: number;
}

/** An open file. Handles are not shared between Io instances. */
export interface IoFile {
  readonly path: string;
  /** Whether the file was opened with O_DIRECT. */
  readonly direct: boolean;
  /** Underlying OS fd for NodeIo (sendfile, mmap); -1 for SimIo. */
  readonly fd: number;
  pread(buffer: Uint8Array, position: number, length?: number): Promise<number>;
  pwrite(buffer: Uint8Array, position: number): Promise<void>;
  pwritev(buffers: readonly Uint8Array[], position: number): Promise<void>;
  /** Synchronous variants, for the rare caller that must not yield (tests, tools). */
  preadSync(buffer: Uint8Array, position: number, length?: number): number;
  pwriteSync(buffer: Uint8Array, position: number): void;
  fdatasync(): Promise<void>;
  /**
   * pwritev(buffers, position), then fdatasync() once the write completed, as
   * one operation (NodeIo: one threadpool job through the native addon, else
   * the two calls in turn). Resolves when both succeeded: the bytes, and
   * every byte written to the file before the call, are durable. Rejects with
   * the write's error (nothing synced) or the sync's (written, NOT durable: the
   * caller fails stop and never retries the sync). No buffers (or only empty
   * ones): just the fdatasync.
   */
  pwritevDatasync(buffers: readonly Uint8Array[], position: number): Promise<void>;
  fsync(): Promise<void>;
  /**
   * A hint, optional: start writing [position, position + length)'s dirty
   * pages to the device now, without waiting (NodeIo: sync_file_range
   * SYNC_FILE_RANGE_WRITE through the addon). No durability: only a later
   * fdatasync makes bytes durable, and it then has less left to write.
   * Never throws or rejects; absent (or a no-op) where it means nothing
   * (SimIo, O_DIRECT files, no addon).
   */
  startWriteback?(position: number, length: number): void;
  truncate(size: number): Promise<void>;
  /** Reserve [position, position+length) per mode. */
  allocate(position: number, length: number, mode: AllocateMode): Promise<void>;
  size(): Promise<number>;
  close(): Promise<void>;
}

/**
 * An exclusive advisory lock on a file (a data directory's `.lock`), held
 * until released. NodeIo: flock(LOCK_EX | LOCK_NB) on an fd of its own, plus
 * a process-wide table of held paths; SimIo: a per-SimIo table.
 */
export interface IoLock {
  readonly path: string;
  /** Releases the lock and closes its handle. A second call does nothing. */
  release(): Promise<void>;
}

export interface Io {
  /** Alignment O_DIRECT needs for buffers, positions and lengths on this Io (512 or 4096). */
  readonly directAlignment: number;
  open(path: string, options?: OpenOptions): Promise<IoFile>;
  mkdir(path: string, options?: { readonly recursive?: boolean }): Promise<void>;
  /** Names in the directory (not paths), sorted. */
  readdir(path: string): Promise<string[]>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  rmdir(path: string): Promise<void>;
  /** Stat; rejects with SEGLOG_ERR_IO_NOT_FOUND when missing. */
  stat(path: string): Promise<FileStat>;
  exists(path: string): Promise<boolean>;
  /** fsync the directory itself, making creates, renames and unlinks in it durable. */
  fsyncDir(path: string): Promise<void>;
  statfs(path: string): Promise<FsStat>;
  readFile(path: string): Promise<Buffer>;
  /**
   * Creates `path` if missing and takes an exclusive lock on it without
   * waiting. Held by another process, or already by this process (through
   * any Io): SEGLOG_ERR_IO_LOCKED. The lock's handle counts in openHandles().
   */
  lock(path: string): Promise<IoLock>;
}
