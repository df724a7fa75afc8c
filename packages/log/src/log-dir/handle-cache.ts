// HandleCache: the bounded set of open segment-file descriptors one
// LogManager shares between its logs (issue 24). Logs get a CachingIo, an Io
// that hands out a CachedFile for every segment file (.log, .index,
// .timeindex, .txnindex, also under a transient suffix); every other path
// goes to the wrapped Io unchanged. A CachedFile is an IoFile whose real
// handle is opened on first use (an existing file opened without `create` is
// not opened at all until read or written) and closed again when the cache
// is over its budget and the file is idle, then reopened (same path, same
// read-only/dsync options, no create) on the next use.
//
// Invariants:
// - A file is evicted only when idle: no operation in flight, not pinned
//   (the segment it belongs to is active: its writes never pay a reopen) and
//   not held (holdWhile: a FetchPlan part retains its SegmentFileRef, so the
//   fd a sendfile uses stays valid). Eviction never closes a held handle.
// - open descriptors ≤ maxOpenFiles + the files that are busy, pinned or held
//   (the cache goes over its budget rather than wait; it shrinks back as
//   they become idle). Pinned files are not in the LRU at all, so a trim
//   costs nothing per active segment.
// - Renames through the CachingIo move the cached files with the path, so a
//   segment renamed to `.deleted` reopens under its new name. A file
//   unlinked while evicted cannot be reopened (the read fails
//   SEGLOG_ERR_IO_NOT_FOUND); segments are unlinked only after they left the
//   log and every plan released them.
// - Durability does not depend on the handle: fdatasync through a reopened
//   descriptor syncs the inode's dirty pages whichever descriptor wrote them
//   (Linux; SimIo keeps unsynced bytes per file node as well).
import { assert } from '@seglog/common';
import { IoError, IoErrorCode } from '@seglog/io';
import type { AllocateMode, FileStat, FsStat, Io, IoFile, IoLock, OpenOptions } from '@seglog/io';

/** Default budget of idle segment-file descriptors per LogManager (LogManagerOptions.maxOpenSegmentFiles). */
export const DEFAULT_MAX_OPEN_SEGMENT_FILES = 1000;

const SEGMENT_FILE = /\.(log|index|timeindex|txnindex)(\.(deleted|cleaned|swap))?$/;

/** What the cache reports (seglog stats, tests). */
export interface HandleCacheStats {
  readonly maxOpenFiles: number;
  /** Segment files known to the cache (open or not). */
  readonly files: number;
  /** Real descriptors open now. */
  readonly open: number;
  readonly opens: number;
  readonly evictions: number;
  readonly peakOpen: number;
}

export class HandleCache {
  readonly maxOpenFiles: number;
  /** Open files not pinned, least recently used first (pinned ones are outside the budget). */
  private readonly lru = new Set<CachedFile>();
  /** Real descriptors open, pinned ones included. */
  private openValue = 0;
  private filesValue = 0;
  private opens = 0;
  private evictions = 0;
  private peakOpen = 0;

  constructor(maxOpenFiles: number) {
    assert(Number.isSafeInteger(maxOpenFiles) && maxOpenFiles >= 1, 'HandleCache: maxOpenFiles must be a positive integer');
    this.maxOpenFiles = maxOpenFiles;
  }

  stats(): HandleCacheStats {
    return { maxOpenFiles: this.maxOpenFiles, files: this.filesValue, open: this.openValue, opens: this.opens, evictions: this.evictions, peakOpen: this.peakOpen };
  }

  /** @internal CachedFile's bookkeeping. */
  noteFile(delta: number): void {
    this.filesValue += delta;
  }

  /** @internal A real handle was opened (or adopted). */
  noteOpened(file: CachedFile): void {
    this.opens++;
    this.openValue++;
    if (this.openValue > this.peakOpen) this.peakOpen = this.openValue;
    if (!file.pinned) this.lru.add(file);
    this.trim(this.maxOpenFiles);
  }

  /** @internal Most recently used. */
  touch(file: CachedFile): void {
    if (!this.lru.has(file)) return;
    this.lru.delete(file);
    this.lru.add(file);
  }

  /** @internal The real handle was closed (evicted or closed by its owner). */
  noteClosed(file: CachedFile): void {
    this.openValue--;
    this.lru.delete(file);
  }

  /** @internal An open file was pinned or unpinned: it leaves or joins the budget. */
  notePinned(file: CachedFile, pinned: boolean): void {
    if (pinned) this.lru.delete(file);
    else if (file.isOpen) this.lru.add(file);
  }

  /** Closes idle files, oldest first, until at most `limit` are open (or none is idle). Returns how many it closed. */
  trim(limit: number = this.maxOpenFiles): number {
    if (this.lru.size <= limit) return 0;
    let closed = 0;
    // Deleting the visited entry while iterating a Set is safe; busy and held files are skipped.
    for (const file of this.lru) {
      if (this.lru.size <= limit) break;
      if (file.evictable) {
        this.evictions++;
        closed++;
        file.evict();
      }
    }
    return closed;
  }
}

/** An Io whose segment files are CachedFiles of one HandleCache; everything else is the wrapped Io's. */
export class CachingIo implements Io {
  readonly inner: Io;
  readonly cache: HandleCache;
  /** Cached files by their current path: one file (the usual case, no Set per path), or a Set of them. */
  private readonly byPath = new Map<string, CachedFile | Set<CachedFile>>();

  constructor(inner: Io, cache: HandleCache) {
    this.inner = inner;
    this.cache = cache;
  }

  get directAlignment(): number {
    return this.inner.directAlignment;
  }

  async open(path: string, options: OpenOptions = {}): Promise<IoFile> {
    if (options.direct === true || !SEGMENT_FILE.test(path)) return this.inner.open(path, options);
    if (options.create !== true) return this.openDeferred(path, options);
    const file = new CachedFile(this, path, options);
    await file.openNow(options);
    this.track(file, path);
    return file;
  }

  /** open() of an existing segment file, synchronously: nothing is opened until the first use. */
  openDeferred(path: string, options: OpenOptions = {}): IoFile {
    assert(SEGMENT_FILE.test(path) && options.create !== true && options.direct !== true, 'CachingIo.openDeferred: an existing, buffered segment file');
    const file = new CachedFile(this, path, options);
    this.track(file, path);
    return file;
  }

  /** Pins (active) or unpins the cached files at these paths: a pinned file is never evicted. */
  setPinned(paths: readonly string[], pinned: boolean): void {
    for (const path of paths) {
      for (const file of this.filesAt(path)) {
        if (file.pinned === pinned) continue;
        file.pinned = pinned;
        this.cache.notePinned(file, pinned);
      }
    }
    if (!pinned) this.cache.trim();
  }

  private filesAt(path: string): Iterable<CachedFile> {
    const at = this.byPath.get(path);
    return at === undefined ? [] : at instanceof CachedFile ? [at] : at;
  }

  /** @internal */
  track(file: CachedFile, path: string): void {
    const at = this.byPath.get(path);
    if (at === undefined || at === file) this.byPath.set(path, file);
    else if (at instanceof CachedFile) this.byPath.set(path, new Set([at, file]));
    else at.add(file);
  }

  /** @internal */
  untrack(file: CachedFile, path: string): void {
    const at = this.byPath.get(path);
    if (at === undefined) return;
    if (at instanceof CachedFile) {
      if (at === file) this.byPath.delete(path);
      return;
    }
    at.delete(file);
    if (at.size === 0) this.byPath.delete(path);
  }

  /**
   * @internal A real open. An EMFILE is not retried here: it stays the
   * caller's retriable refusal (a roll or a create is refused and retried),
   * and the budget, not the limit, is what keeps descriptors in bounds.
   */
  openReal(path: string, options: OpenOptions): Promise<IoFile> {
    return this.inner.open(path, options);
  }

  async rename(from: string, to: string): Promise<void> {
    await this.inner.rename(from, to);
    const files = [...this.filesAt(from)];
    if (files.length === 0) return;
    this.byPath.delete(from);
    for (const file of files) {
      file.moveTo(to);
      this.track(file, to);
    }
  }

  mkdir(path: string, options?: { readonly recursive?: boolean }): Promise<void> {
    return this.inner.mkdir(path, options);
  }
  readdir(path: string): Promise<string[]> {
    return this.inner.readdir(path);
  }
  unlink(path: string): Promise<void> {
    return this.inner.unlink(path);
  }
  rmdir(path: string): Promise<void> {
    return this.inner.rmdir(path);
  }
  stat(path: string): Promise<FileStat> {
    return this.inner.stat(path);
  }
  exists(path: string): Promise<boolean> {
    return this.inner.exists(path);
  }
  fsyncDir(path: string): Promise<void> {
    return this.inner.fsyncDir(path);
  }
  statfs(path: string): Promise<FsStat> {
    return this.inner.statfs(path);
  }
  readFile(path: string): Promise<Buffer> {
    return this.inner.readFile(path);
  }
  lock(path: string): Promise<IoLock> {
    return this.inner.lock(path);
  }
}

/** The reopen options of a plain read-write file (shared: most files have none). */
const NO_OPTIONS: OpenOptions = Object.freeze({});

/** An IoFile whose descriptor the HandleCache may close while idle and that reopens on use. */
export class CachedFile implements IoFile {
  readonly direct = false;
  /** The segment is active: never evicted. */
  pinned = false;
  private readonly owner: CachingIo;
  private readonly reopenOptions: OpenOptions;
  private pathValue: string;
  private real: IoFile | null = null;
  private opening: Promise<IoFile> | null = null;
  private inFlight = 0;
  private closed = false;
  /** The SegmentFileRef that keeps this handle open while retained beyond its segment's own reference (holdWhile). */
  private holder: HandleHolder | null = null;
  /** track()'s settle callback, made on first use: an idle file costs no closure (a sealed segment has three files). */
  private settledFn: (() => void) | null = null;

  constructor(owner: CachingIo, path: string, options: OpenOptions) {
    this.owner = owner;
    this.pathValue = path;
    this.reopenOptions = options.readOnly !== true && options.dsync !== true ? NO_OPTIONS : { ...(options.readOnly === true ? { readOnly: true } : {}), ...(options.dsync === true ? { dsync: true } : {}) };
    owner.cache.noteFile(1);
  }

  get path(): string {
    return this.pathValue;
  }

  /** The real descriptor while open (a held file stays open), else -1. */
  get fd(): number {
    return this.real?.fd ?? -1;
  }

  /** Whether a real descriptor is open now. */
  get isOpen(): boolean {
    return this.real !== null;
  }

  /** Keeps the handle open while `holder.refCount > 1` (a SegmentFileRef retained by a plan). */
  holdWhile(holder: HandleHolder): void {
    this.holder = holder;
  }

  get evictable(): boolean {
    return this.real !== null && this.inFlight === 0 && !this.pinned && !(this.holder !== null && this.holder.refCount > 1);
  }

  /** @internal Opens now with the caller's options (create, exclusive). */
  async openNow(options: OpenOptions): Promise<void> {
    this.real = await this.owner.openReal(this.pathValue, options);
    this.owner.cache.noteOpened(this);
  }

  /** @internal Follows a rename. */
  moveTo(path: string): void {
    this.pathValue = path;
  }

  /** @internal Closes the idle descriptor (the cache's choice). */
  evict(): void {
    const real = this.real;
    assert(real !== null && this.evictable, 'CachedFile.evict: not idle');
    this.real = null;
    this.owner.cache.noteClosed(this);
    void real.close().catch(() => undefined);
  }

  private acquire(): Promise<IoFile> {
    if (this.real !== null) return Promise.resolve(this.real);
    this.opening ??= this.owner.openReal(this.pathValue, this.reopenOptions).then(
      (file) => {
        this.opening = null;
        if (this.closed) {
          void file.close().catch(() => undefined);
          throw this.closedError('open');
        }
        this.real = file;
        this.owner.cache.noteOpened(this);
        return file;
      },
      (error: unknown) => {
        this.opening = null;
        throw error;
      },
    );
    return this.opening;
  }

  /**
   * Runs one operation on the real handle. An open handle is used directly
   * and the operation's own promise is returned: no await in between, so a
   * cached file adds no microtask hop to an operation's completion (the
   * fail-stop rule depends on a failure being seen in the same order as on
   * the plain Io: a write's acknowledgement must not overtake the failure of
   * a sync that completed before it).
   */
  private use<T>(syscall: string, op: (file: IoFile) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(this.closedError(syscall));
    const real = this.real;
    if (real !== null) {
      // An active (pinned) file is open and stays so: no LRU upkeep on the write path.
      if (!this.pinned) this.owner.cache.touch(this);
      return this.track(() => op(real));
    }
    return this.track(async () => {
      const file = await this.acquire();
      this.owner.cache.touch(this);
      return op(file);
    });
  }

  private get settled(): () => void {
    this.settledFn ??= () => {
      this.inFlight--;
      if (this.inFlight === 0) this.owner.cache.trim();
    };
    return this.settledFn;
  }

  /** Counts the operation in flight until its promise settles (an in-flight file is never evicted). */
  private track<T>(run: () => Promise<T>): Promise<T> {
    this.inFlight++;
    let promise: Promise<T>;
    try {
      promise = run();
    } catch (error) {
      this.settled();
      return Promise.reject(error);
    }
    promise.then(this.settled, this.settled);
    return promise;
  }

  private closedError(syscall: string): IoError {
    return new IoError(IoErrorCode.closed, `${syscall} ${this.pathValue}: file is closed`, { errno: 'EBADF', syscall, path: this.pathValue });
  }

  private requireOpen(syscall: string): IoFile {
    if (this.closed) throw this.closedError(syscall);
    if (this.real === null) {
      throw new IoError(IoErrorCode.closed, `${syscall} ${this.pathValue}: the handle is not open (a synchronous call on an evicted segment file)`, { errno: 'EBADF', syscall, path: this.pathValue });
    }
    return this.real;
  }

  pread(buffer: Uint8Array, position: number, length?: number): Promise<number> {
    return this.use('pread', (file) => file.pread(buffer, position, length));
  }
  pwrite(buffer: Uint8Array, position: number): Promise<void> {
    return this.use('pwrite', (file) => file.pwrite(buffer, position));
  }
  pwritev(buffers: readonly Uint8Array[], position: number): Promise<void> {
    return this.use('pwritev', (file) => file.pwritev(buffers, position));
  }
  preadSync(buffer: Uint8Array, position: number, length?: number): number {
    return this.requireOpen('pread').preadSync(buffer, position, length);
  }
  pwriteSync(buffer: Uint8Array, position: number): void {
    this.requireOpen('pwrite').pwriteSync(buffer, position);
  }
  fdatasync(): Promise<void> {
    return this.use('fdatasync', (file) => file.fdatasync());
  }
  pwritevDatasync(buffers: readonly Uint8Array[], position: number): Promise<void> {
    return this.use('pwritev', (file) => file.pwritevDatasync(buffers, position));
  }
  fsync(): Promise<void> {
    return this.use('fsync', (file) => file.fsync());
  }
  /** A hint: passed on while the real handle is open (an evicted file has nothing being written). */
  startWriteback(position: number, length: number): void {
    if (!this.closed) this.real?.startWriteback?.(position, length);
  }
  truncate(size: number): Promise<void> {
    return this.use('ftruncate', (file) => file.truncate(size));
  }
  allocate(position: number, length: number, mode: AllocateMode): Promise<void> {
    return this.use('fallocate', (file) => file.allocate(position, length, mode));
  }
  size(): Promise<number> {
    return this.use('fstat', (file) => file.size());
  }

  async close(): Promise<void> {
    if (this.closed) throw this.closedError('close');
    this.closed = true;
    this.owner.untrack(this, this.pathValue);
    this.owner.cache.noteFile(-1);
    if (this.opening !== null) await this.opening.catch(() => undefined);
    const real = this.real;
    this.real = null;
    if (real === null) return;
    this.owner.cache.noteClosed(this);
    await real.close();
  }
}

/** A synchronous open of existing segment files when `io` is a CachingIo (no I/O until first use), else null. */
export function deferredOpener(io: Io): ((path: string, options?: OpenOptions) => IoFile) | null {
  return io instanceof CachingIo ? (path, options) => io.openDeferred(path, options) : null;
}

/** What holds a cached handle open: its segment's reference plus any a plan retains. */
export interface HandleHolder {
  readonly refCount: number;
}

/** Keeps a cached .log handle open while `holder.refCount > 1` (its SegmentFileRef is retained by a plan); no-op for other files. */
export function holdWhile(file: IoFile, holder: HandleHolder): void {
  if (file instanceof CachedFile) file.holdWhile(holder);
}

/** Pins (the segment is active) or unpins a segment's cached files; no-op on a plain Io. */
export function pinSegmentFiles(io: Io, paths: readonly string[], pinned: boolean): void {
  if (io instanceof CachingIo) io.setPinned(paths, pinned);
}
