// The storage under every index (.index, .timeindex, .txnindex): an
// in-memory mirror of the file's bytes, written back to the file through
// `Io` in the background.
//
// Why not mmap (which Kafka uses, and ARCHITECTURE.md mentions): positioned
// writes into a preallocated file plus an in-memory mirror put the same
// bytes on disk, keep lookups synchronous and allocation-free, and go
// through the one I/O seam (so SimIo sees and can fault every index write).
// The cost is that the mirror is process memory; Kafka pays the same in
// page cache.
//
// Invariants:
// - mirror[0, usedBytes) is the truth; the owner reads and writes it
//   synchronously (lookups never wait for I/O).
// - The file's bytes in [0, dirtyFrom) equal the mirror's; [dirtyFrom,
//   usedBytes) may differ and is written back by one background writer.
//   dirtyFrom ≤ usedBytes.
// - Every file mutation (write-back, resize, fdatasync, rename, close,
//   delete) runs in one serial chain, so two writes to the same bytes never
//   race and a truncate never lands under an in-flight write.
// - The first failure of any file operation is kept: every later operation
//   (and the next synchronous mutation) throws it, and it is reported at once
//   to the failure listener (the owning Log goes offline in the same tick, so
//   a background write-back failure is never first seen at close()). The log
//   directory is then fail-stop; nothing retries a failed write or fdatasync.
// - sizing 'preallocated' (.index, .timeindex): a new file is extended
//   (ftruncate, sparse) to preallocateBytes; its length changes only by
//   resize(). sizing 'exact' (.txnindex): the file is created at the first
//   write and its length follows usedBytes (a truncation is written back as
//   an ftruncate).

import { assert, SeglogError } from '@seglog/common';
import type { Io, IoFile } from '@seglog/io';
import { seams } from '../internal/test-seams.js';
import { indexReadOnly } from './index-errors.js';

export type IndexFileSizing = 'preallocated' | 'exact';

export interface IndexFileOptions {
  /** Size of one entry; usedBytes of a reopened file is its length rounded down to this. */
  readonly entryBytes: number;
  readonly sizing: IndexFileSizing;
  /** Length a newly created 'preallocated' file is given. */
  readonly preallocateBytes: number;
  /** Open read-only: never create, write or resize (tools). */
  readonly readOnly: boolean;
  /** Mirror capacity to start with when the file is new or empty. */
  readonly initialCapacityBytes: number;
  /** An existing file is not read at open: load() reads it before the first use of the mirror. */
  readonly lazy?: boolean;
  /** Whether the file exists, when the caller knows it (a directory listing): saves open() an exists() call. */
  readonly present?: boolean | undefined;
  /** With lazy: the file's length, when a clean close recorded it (no stat at open; load() reads what is there). */
  readonly knownBytes?: number | undefined;
  /**
   * 0 (the default): every append schedules a write-back. N > 0: an append
   * schedules one only once N bytes are dirty; fewer are deferred: they wait
   * for flush(), resizeFile(), rename() or close(), and drain() and `settled`
   * do not count them. For indexes whose file nothing reads while the mirror
   * lives and that recovery rebuilds (the active segment's .index and
   * .timeindex): each write-back is a pool job, and one per appended batch
   * cost the broker's event loop more than the batch's own write.
   */
  readonly deferWriteBackBytes?: number;
}

const UNLOADED = Buffer.alloc(0);
/** The mirror of an index with no file and no entries yet (distinct from UNLOADED: it is loaded). */
const EMPTY = Buffer.alloc(0);
/** Where every file's mutation chain starts (one shared settled promise, not one per index). */
const SETTLED: Promise<void> = Promise.resolve();

/** `dirty` bytes are due for a write-back: none deferred (deferWriteBackBytes or more of them, or any with 0). */
function writeBackDue(dirty: number, deferWriteBackBytes: number): boolean {
  return dirty > 0 && dirty >= deferWriteBackBytes;
}

/** Bytes the mirror of an empty index starts with before growing by doubling. */
export const INITIAL_MIRROR_BYTES = 64 * 1024;

/** How many operations of an IndexFile's serial chain are queued or running; its two callbacks made once. */
class PendingOps {
  count: number;
  readonly done: () => void;
  readonly failed: (error: unknown) => void;

  constructor(keepFailure: (error: unknown) => void) {
    this.count = 0;
    this.done = () => {
      this.count--;
    };
    this.failed = (error: unknown) => {
      this.count--;
      keepFailure(error);
    };
  }
}

export class IndexFile {
  private readonly io: Io;
  private pathValue: string;
  private readonly entryBytes: number;
  private readonly sizing: IndexFileSizing;
  private readonly readOnly: boolean;
  /** What the mirror grows to first from empty (options.initialCapacityBytes, at least one entry). */
  private readonly initialCapacityBytes: number;
  private readonly deferWriteBackBytes: number;
  private file: IoFile | null;
  private mirrorValue: Buffer;
  private usedBytesValue: number;
  private fileBytesValue: number;
  private dirtyFrom: number;
  private writeQueued: boolean;
  private closed: boolean;
  private failure: unknown;
  private failureListener: ((error: unknown) => void) | null;
  private keepFailureFn: ((error: unknown) => void) | null;
  /** Operations of the serial chain queued or running (made on first use: settled needs none). */
  private ops: PendingOps | null;
  private tail: Promise<void>;
  private loadedValue: boolean;
  private loading: Promise<void> | null;
  /** True when open() created the file (or, lazily, will create it). */
  readonly newlyCreated: boolean;

  private constructor(io: Io, path: string, options: IndexFileOptions, state: { file: IoFile | null; mirror: Buffer; usedBytes: number; fileBytes: number; newlyCreated: boolean; loaded?: boolean }) {
    this.io = io;
    this.pathValue = path;
    this.entryBytes = options.entryBytes;
    this.sizing = options.sizing;
    this.readOnly = options.readOnly;
    this.initialCapacityBytes = Math.max(options.initialCapacityBytes, options.entryBytes);
    this.deferWriteBackBytes = options.deferWriteBackBytes ?? 0;
    this.file = state.file;
    this.mirrorValue = state.mirror;
    this.usedBytesValue = state.usedBytes;
    this.fileBytesValue = state.fileBytes;
    this.dirtyFrom = state.usedBytes;
    this.writeQueued = false;
    this.closed = false;
    this.failure = undefined;
    this.failureListener = null;
    this.keepFailureFn = null;
    this.ops = null;
    this.tail = SETTLED;
    this.newlyCreated = state.newlyCreated;
    this.loadedValue = state.loaded ?? true;
    this.loading = null;
  }

  /**
   * An existing file opened without I/O (`file` from a deferred open, its
   * length `size` as a clean close recorded it; load() reads it), or, with
   * `file` null, one that does not exist yet.
   */
  static deferred(io: Io, path: string, options: IndexFileOptions, file: IoFile | null, size: number): IndexFile {
    if (file === null) return new IndexFile(io, path, options, { file: null, mirror: EMPTY, usedBytes: 0, fileBytes: 0, newlyCreated: !options.readOnly });
    return new IndexFile(io, path, options, { file, mirror: UNLOADED, usedBytes: size - (size % options.entryBytes), fileBytes: size, newlyCreated: false, loaded: false });
  }

  /**
   * Opens (or, unless read-only or 'exact', creates) the file at `path` and
   * reads all of it into the mirror. A reopened file's used bytes are its
   * length rounded down to whole entries (Kafka: entries = length / size).
   */
  static async open(io: Io, path: string, options: IndexFileOptions): Promise<IndexFile> {
    assert(options.entryBytes > 0, 'IndexFile.open: entryBytes must be positive');
    assert(options.initialCapacityBytes >= 0, 'IndexFile.open: initialCapacityBytes must be non-negative');
    if (options.present ?? (await io.exists(path))) {
      if (options.lazy === true) {
        // A stat, not an fstat: through the handle cache the descriptor is not opened until load().
        const size = options.knownBytes ?? (await io.stat(path)).size;
        const file = await io.open(path, { readOnly: options.readOnly });
        const usedBytes = size - (size % options.entryBytes);
        return new IndexFile(io, path, options, { file, mirror: UNLOADED, usedBytes, fileBytes: size, newlyCreated: false, loaded: false });
      }
      const file = await io.open(path, { readOnly: options.readOnly });
      try {
        const size = await file.size();
        // Exactly the file's bytes: a sealed index never grows, an active one grows by doubling (reserve).
        const mirror = Buffer.alloc(size);
        const read = size === 0 ? 0 : await file.pread(mirror, 0, size);
        const usedBytes = read - (read % options.entryBytes);
        return new IndexFile(io, path, options, { file, mirror, usedBytes, fileBytes: read, newlyCreated: false });
      } catch (error) {
        await file.close().catch(() => undefined);
        throw error;
      }
    }
    if (options.readOnly || options.sizing === 'exact') {
      // No file and nothing in it: no memory until the first reserve() (every sealed segment without a .txnindex has one of these).
      return new IndexFile(io, path, options, { file: null, mirror: EMPTY, usedBytes: 0, fileBytes: 0, newlyCreated: !options.readOnly });
    }
    const mirror = Buffer.alloc(options.initialCapacityBytes);
    assert(options.preallocateBytes % options.entryBytes === 0, 'IndexFile.open: preallocateBytes must be whole entries');
    const file = await io.open(path, { create: true });
    try {
      await file.truncate(options.preallocateBytes);
    } catch (error) {
      await file.close().catch(() => undefined);
      throw error;
    }
    return new IndexFile(io, path, options, { file, mirror, usedBytes: 0, fileBytes: options.preallocateBytes, newlyCreated: true });
  }

  get path(): string {
    return this.pathValue;
  }

  /** The mirror; valid bytes are [0, usedBytes). The buffer is replaced when it grows: do not keep it. */
  get mirror(): Buffer {
    assert(this.loadedValue, 'IndexFile: the mirror is used before load()');
    return this.mirrorValue;
  }

  /** False while a lazily opened or unloaded file's bytes are not in memory. */
  get isLoaded(): boolean {
    return this.loadedValue;
  }

  /** Bytes the mirror holds in memory (0 while unloaded). */
  get memoryBytes(): number {
    return this.mirrorValue.length;
  }

  /**
   * Reads the file into the mirror (exactly its bytes) unless loaded;
   * concurrent callers share one read. Nothing is dirty while unloaded, so
   * the file is the truth.
   */
  load(): Promise<void> {
    if (this.loadedValue) return Promise.resolve();
    this.loading ??= this.readWhole().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  private async readWhole(): Promise<void> {
    if (this.failure !== undefined) throw this.failure;
    const file = this.requireFile();
    const mirror = Buffer.alloc(this.fileBytesValue);
    const read = mirror.length === 0 ? 0 : await file.pread(mirror, 0, mirror.length);
    if (this.loadedValue) return;
    const whole = read - (read % this.entryBytes);
    if (whole < this.usedBytesValue) this.usedBytesValue = whole;
    this.dirtyFrom = this.usedBytesValue;
    this.mirrorValue = mirror;
    this.loadedValue = true;
  }

  /**
   * Drops the mirror (the index cache's eviction) when nothing is pending:
   * no dirty bytes, no queued write-back, no load in flight, not closed.
   * Returns whether it was dropped; load() brings it back from the file.
   */
  unload(): boolean {
    if (!this.loadedValue || this.closed || this.writeQueued || this.loading !== null || this.file === null) return false;
    if (this.dirtyFrom < this.usedBytesValue || this.failure !== undefined) return false;
    this.mirrorValue = UNLOADED;
    this.loadedValue = false;
    return true;
  }

  get usedBytes(): number {
    return this.usedBytesValue;
  }

  /** The file's length as this object made it (0 when the file does not exist). */
  get fileBytes(): number {
    return this.fileBytesValue;
  }

  /**
   * Calls `listener` (synchronously, once) with the first failure of any
   * file operation, including background write-backs nobody awaits. A
   * failure already kept is reported at once.
   */
  setFailureListener(listener: (error: unknown) => void): void {
    this.failureListener = listener;
    if (this.failure !== undefined) listener(this.failure);
  }

  /** The kept failure (fail-stop), or undefined. */
  get failureCause(): unknown {
    return this.failure;
  }

  /** Throws SEGLOG_ERR_INDEX_READ_ONLY if opened read-only, the kept failure, if any (fail-stop), or if the file is closed. */
  checkWritable(): void {
    if (this.readOnly) throw indexReadOnly(this.pathValue, 'a mutation');
    assert(!this.closed, 'IndexFile: mutation after close');
    if (this.failure !== undefined) throw this.failure;
  }

  /**
   * Makes room for `bytes` more bytes and returns the mirror position to
   * write them at (usedBytes). Call append(bytes) after writing them.
   */
  reserve(bytes: number): number {
    this.checkWritable();
    assert(this.loadedValue, 'IndexFile.reserve: before load()');
    const needed = this.usedBytesValue + bytes;
    if (needed > this.mirrorValue.length) {
      const grown = Buffer.alloc(Math.max(needed, this.mirrorValue.length * 2, this.mirrorValue.length === 0 ? this.initialCapacityBytes : INITIAL_MIRROR_BYTES));
      this.mirrorValue.copy(grown, 0, 0, this.usedBytesValue);
      this.mirrorValue = grown;
    }
    return this.usedBytesValue;
  }

  /** Marks `bytes` written at the reserved position as used and schedules their write-back (or defers it: deferWriteBackBytes). */
  append(bytes: number): void {
    assert(this.usedBytesValue + bytes <= this.mirrorValue.length, 'IndexFile.append: bytes were not reserved');
    this.usedBytesValue += bytes;
    if (writeBackDue(this.usedBytesValue - this.dirtyFrom, this.deferWriteBackBytes)) this.scheduleWrite();
  }

  /** Drops bytes at and after `bytes` (logically; 'exact' files are ftruncated in the background). */
  truncateUsed(bytes: number): void {
    this.checkWritable();
    assert(bytes >= 0 && bytes <= this.usedBytesValue, 'IndexFile.truncateUsed: bytes out of range');
    assert(bytes % this.entryBytes === 0, 'IndexFile.truncateUsed: bytes must be whole entries');
    assert(this.loadedValue, 'IndexFile.truncateUsed: before load()');
    this.usedBytesValue = bytes;
    if (this.dirtyFrom > bytes) this.dirtyFrom = bytes;
    if (this.sizing === 'exact') this.scheduleWrite();
  }

  /** Sets the file length (Kafka's resize); pending write-backs land first. Never below usedBytes. */
  resizeFile(bytes: number): Promise<void> {
    this.checkWritable();
    assert(this.sizing === 'preallocated', 'IndexFile.resizeFile: only preallocated files are resized');
    assert(bytes >= this.usedBytesValue, 'IndexFile.resizeFile: below the used bytes');
    return this.enqueue(async () => {
      await this.writeBack();
      const file = this.requireFile();
      await file.truncate(bytes);
      this.fileBytesValue = bytes;
    });
  }

  /** Waits for pending write-backs (no fdatasync); deferred bytes stay deferred. */
  drain(): Promise<void> {
    return this.enqueue(() => (writeBackDue(this.usedBytesValue - this.dirtyFrom, this.deferWriteBackBytes) ? this.writeBack() : Promise.resolve()));
  }

  /** Writes back pending bytes and fdatasyncs the file (if it exists). */
  flush(): Promise<void> {
    assert(!this.closed, 'IndexFile.flush: after close');
    if (this.readOnly) return Promise.resolve();
    return this.enqueue(async () => {
      await this.writeBack();
      if (this.file !== null) await this.file.fdatasync();
    });
  }

  /** Renames the file (if it exists on disk) and keeps using it under the new path. */
  rename(newPath: string): Promise<void> {
    this.checkWritable();
    return this.enqueue(async () => {
      await this.writeBack();
      if (this.file !== null || (await this.io.exists(this.pathValue))) await this.io.rename(this.pathValue, newPath);
      this.pathValue = newPath;
    });
  }

  get isReadOnly(): boolean {
    return this.readOnly;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Writes back pending bytes, trims a 'preallocated' file to `trimToBytes`
   * when given, and closes the file. No fdatasync: flush() first for
   * durability. After a failure the handle is still closed (without writing)
   * and the failure is rethrown.
   */
  close(trimToBytes?: number): Promise<void> {
    if (this.closed) return this.tail;
    assert(trimToBytes === undefined || trimToBytes >= this.usedBytesValue, 'IndexFile.close: trim below the used bytes');
    this.closed = true;
    const result = this.tail.then(async () => {
      let written = false;
      try {
        if (this.failure !== undefined) throw this.failure;
        if (!this.readOnly) await this.writeBack();
        if (!this.readOnly && this.file !== null && trimToBytes !== undefined && this.sizing === 'preallocated' && this.fileBytesValue !== trimToBytes) {
          await this.file.truncate(trimToBytes);
          this.fileBytesValue = trimToBytes;
        }
        written = true;
      } finally {
        const file = this.file;
        this.file = null;
        // After a failure, close the handle but report the first error.
        if (file !== null) await (written ? file.close() : file.close().catch(() => undefined));
      }
    });
    this.tail = result.then(undefined, this.keepFailure);
    return result;
  }

  /** Closes without writing back and deletes the file if it exists. */
  delete(): Promise<void> {
    if (this.readOnly) return Promise.reject(indexReadOnly(this.pathValue, 'delete'));
    this.closed = true;
    return this.enqueue(async () => {
      const file = this.file;
      this.file = null;
      if (file !== null) await file.close();
      if (await this.io.exists(this.pathValue)) await this.io.unlink(this.pathValue);
    });
  }

  private requireFile(): IoFile {
    const file = this.file;
    if (file === null) {
      throw new SeglogError('SEGLOG_ERR_INDEX_MISSING', `index file ${this.pathValue} is not open`, { context: { path: this.pathValue } });
    }
    return file;
  }

  private scheduleWrite(): void {
    if (this.writeQueued || this.readOnly) return;
    this.writeQueued = true;
    // The failure is kept by enqueue's chain and rethrown by the next operation.
    this.enqueue(() => this.writeBack()).catch(() => undefined);
  }

  /** Runs inside the serial chain only. Loops until nothing is dirty (appends may arrive meanwhile). */
  private async writeBack(): Promise<void> {
    this.writeQueued = false;
    for (;;) {
      const from = this.dirtyFrom;
      const to = this.usedBytesValue;
      const shrink = this.sizing === 'exact' && this.fileBytesValue > to;
      if (from >= to && !shrink) return;
      this.dirtyFrom = to;
      let file = this.file;
      if (file === null) {
        file = await this.io.open(this.pathValue, { create: true });
        this.file = file;
      }
      if (from < to) {
        // A truncation and re-append of these bytes while this write is in
        // flight lowers dirtyFrom again, so the next pass rewrites them.
        await file.pwrite(this.mirrorValue.subarray(from, to), from);
        if (to > this.fileBytesValue) this.fileBytesValue = to;
      }
      const target = this.usedBytesValue;
      if (this.sizing === 'exact' && this.fileBytesValue > target) {
        // Bytes appended below `target` meanwhile are dirty and rewritten by the next pass.
        await file.truncate(target);
        this.fileBytesValue = target;
      }
    }
  }

  /**
   * Nothing due to write back (deferred bytes aside) and no file operation
   * queued or running (and no failure kept): drain() would find nothing to
   * do. Lets a write that carried the fdatasync acknowledge synchronously
   * (LogFlusher.syncedByWrite).
   */
  get settled(): boolean {
    if ((this.ops?.count ?? 0) > 0 || this.writeQueued || this.failure !== undefined || writeBackDue(this.usedBytesValue - this.dirtyFrom, this.deferWriteBackBytes)) return false;
    return !(this.sizing === 'exact' && this.fileBytesValue > this.usedBytesValue);
  }

  private enqueue(op: () => Promise<void>): Promise<void> {
    const result = this.tail.then(() => {
      if (this.failure !== undefined) throw this.failure;
      return op();
    });
    const ops = (this.ops ??= new PendingOps(this.keepFailure));
    ops.count++;
    this.tail = result.then(ops.done, ops.failed);
    return result;
  }

  /** Keeps the first failure and reports it to the listener (the chain's rejection handler; made on the first mutation, so an index never written costs no closure). */
  private get keepFailure(): (error: unknown) => void {
    this.keepFailureFn ??= (error: unknown): void => {
      if (this.failure !== undefined) return;
      this.failure = error;
      if (seams.keepIndexFailure) return; // mutant: the failure waits for the next call
      this.failureListener?.(error);
    };
    return this.keepFailureFn;
  }
}
