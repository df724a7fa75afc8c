// NodeIo: the Io over node:fs (and the optional native addon for fallocate).
//
// - Positional reads and writes use the callback API on plain fds with
//   pooled request objects (one bound callback each, created once), so a
//   write costs one promise and no per-call closure or result object.
// - pwrite/pwritev loop over short writes (a writev that stops inside an
//   iovec continues from there); a write that makes no progress fails with
//   SEGLOG_ERR_IO_NO_PROGRESS. pread loops over short reads until the length
//   or end of file (for O_DIRECT, a read that ends off the alignment is end of
//   file).
// - O_DIRECT: positions and lengths are checked against `directAlignment`
//   before the syscall; buffers from an AlignedArena are checked exactly;
//   other buffers are left to the kernel, whose EINVAL becomes
//   SEGLOG_ERR_IO_INVALID_ALIGNMENT. `directAlignment` defaults to 4096, which
//   every Linux file system with 512 B or 4 KiB logical blocks accepts; Node
//   has no statx, so `NodeIo.probeDirectAlignment(dir)` measures the real
//   value (512 on the reference VM) by trying O_DIRECT writes that cross a
//   page boundary (node-platform.md §5.4).
// - close() waits for the handle's in-flight operations before closing the fd,
//   so an fd number is never reused under a running write.
// - Errors are IoErrors with codes mapped from errno (io-error.ts).

import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { assert } from '@seglog/common';
import { pwritevDatasync as nativePwritevDatasync, pwritevMany as nativePwritevMany, startWriteback as nativeStartWriteback } from '@seglog/native';
import { IoError, IoErrorCode, ioErrorFromErrno, ioErrorFromNode } from './io-error.js';
import type { AllocateMode, FileStat, FsStat, Io, IoFile, IoLock, OpenOptions } from './io.js';
import { registerAlignedMemory } from './internal/aligned-memory.js';
import { directAlignmentError } from './internal/direct-check.js';
import { advanceIovecs, iovecBytes } from './internal/iovec.js';
import { wasmMemory } from './internal/wasm-memory.js';
import { WriteGather } from './internal/write-gather.js';

type ByteCallback = (error: NodeJS.ErrnoException | null, bytes: number) => void;

/** The positional calls NodeIo makes; node:fs by default, replaceable in tests (to inject short writes). */
export interface NodeIoFs {
  write(fd: number, buffer: Uint8Array, offset: number, length: number, position: number, callback: ByteCallback): void;
  writev(fd: number, buffers: readonly Uint8Array[], position: number, callback: ByteCallback): void;
  read(fd: number, buffer: Uint8Array, offset: number, length: number, position: number, callback: ByteCallback): void;
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  readSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
}

const nodeFs: NodeIoFs = {
  write: (fd, buffer, offset, length, position, callback) => fs.write(fd, buffer, offset, length, position, callback),
  writev: (fd, buffers, position, callback) => fs.writev(fd, buffers, position, callback),
  read: (fd, buffer, offset, length, position, callback) => fs.read(fd, buffer, offset, length, position, callback),
  writeSync: (fd, buffer, offset, length, position) => fs.writeSync(fd, buffer, offset, length, position),
  readSync: (fd, buffer, offset, length, position) => fs.readSync(fd, buffer, offset, length, position),
};

export interface NodeIoOptions {
  /** O_DIRECT alignment; default 4096 (see probeDirectAlignment). */
  readonly directAlignment?: number;
  /** Mode of created files; default 0o600. */
  readonly fileMode?: number;
  /** Mode of created directories; default 0o700. */
  readonly dirMode?: number;
  /** Positional I/O calls (tests inject short writes here); default node:fs. */
  readonly fs?: NodeIoFs;
  /**
   * Writes to buffered files issued in one turn share one threadpool job
   * (the addon's pwritevMany; internal/write-gather.ts). Default true, unless
   * the environment sets SEGLOG_IO_GATHER=0. Without the addon, or with an
   * injected `fs`, every write is its own node:fs call.
   */
  readonly gatherWrites?: boolean;
}

export interface NodeIoStats {
  /** Writes that returned fewer bytes than asked and were continued. */
  shortWrites: number;
  /** allocate calls served by the native fallocate. */
  allocateNative: number;
  /** allocate calls with a fallocate mode served by the fallback (no native fallocate). */
  allocateFallback: number;
  /** pwritevDatasync calls served by the addon in one threadpool job. */
  writeSyncNative: number;
  /** pwritevDatasync calls served as pwritev, then fdatasync (no addon, or an injected `fs`). */
  writeSyncFallback: number;
  /** Threadpool jobs that carried two or more gathered writes, and the writes they carried (gatherWrites). */
  gatherJobs: number;
  gatheredWrites: number;
  /** startWriteback hints passed to the addon, and those that failed (ignored: a later fdatasync reports what matters). */
  writebacks: number;
  writebackErrors: number;
}

const constants = fs.constants as typeof fs.constants & { O_DIRECT?: number; O_DSYNC?: number };
const POOLED_REQUESTS_MAX = 64;
/** Linux's IOV_MAX: the addon takes at most this many buffers per call. */
const IOV_MAX = 1024;
const ZERO_CHUNK_BYTES = 1 << 20;

interface NativeFallocate {
  readonly call: (fd: number, mode: number, offset: number, length: number) => Promise<void>;
  readonly keepSizeMode: number;
}
let nativeFallocate: Promise<NativeFallocate | null> | null = null;

/** The addon's fallocate if it is loaded (imported once, lazily), else null. */
function loadNativeFallocate(): Promise<NativeFallocate | null> {
  nativeFallocate ??= import('@seglog/native').then(
    (native) => (native.fallocate === null ? null : { call: native.fallocate, keepSizeMode: native.FALLOC_FL.KEEP_SIZE }),
    () => null,
  );
  return nativeFallocate;
}

type Flock = (fd: number, flags: 'exnb', callback: (error: (Error & { code?: string }) | null) => void) => void;
let flockFn: Flock | null = null;

/** fs-ext's flock (a native module, loaded on first use). */
function loadFlock(p: string): Flock {
  if (flockFn !== null) return flockFn;
  try {
    flockFn = (createRequire(import.meta.url)('fs-ext') as { flock: Flock }).flock;
    return flockFn;
  } catch (cause) {
    // No pure-JS flock exists, and a lock that only pretends would let two
    // processes write one log: refuse, and say how to get the real one.
    throw new IoError(IoErrorCode.lockUnavailable,
      `lock ${p}: fs-ext (flock) is not built (its install script was skipped, e.g. npm --ignore-scripts, or failed); run \`npm rebuild fs-ext\``,
      { errno: null, syscall: 'flock', path: p, cause });
  }
}

/**
 * Real paths of the locks this process holds through any NodeIo. flock
 * already refuses a second open file description in the same process on a
 * local file system, but not where flock is emulated with fcntl locks (NFS),
 * which never conflict within one process; the table makes the rule hold
 * everywhere.
 */
const heldLocks = new Set<string>();

function lockedError(p: string, holder: string, cause?: unknown): IoError {
  return new IoError(IoErrorCode.locked, `lock ${p}: already locked by ${holder}`, {
    errno: cause === undefined ? null : 'EWOULDBLOCK', syscall: 'flock', path: p, context: { holder }, cause,
  });
}

class NodeLock implements IoLock {
  readonly path: string;
  private readonly file: IoFile;
  private readonly realPath: string;
  private released: boolean;

  constructor(p: string, file: IoFile, realPath: string) {
    this.path = p;
    this.file = file;
    this.realPath = realPath;
    this.released = false;
  }

  /** Closing the fd drops the flock (the only description holding it). */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    heldLocks.delete(this.realPath);
    await this.file.close();
  }
}

let zeroChunk: Uint8Array | null = null;

/** 1 MiB of zeros in page-aligned memory (usable for O_DIRECT); never written to. */
function zeros(): Uint8Array {
  if (zeroChunk === null) {
    const memory = wasmMemory(ZERO_CHUNK_BYTES);
    registerAlignedMemory(memory, 4096);
    zeroChunk = new Uint8Array(memory);
  }
  return zeroChunk;
}

/** State shared by a NodeIo and its handles. */
class NodeCore {
  readonly fs: NodeIoFs;
  readonly alignment: number;
  readonly stats: NodeIoStats;
  readonly handles: Set<NodeFile>;
  /** The addon's one-job write + fdatasync; null without it, or when tests replace `fs` (their short writes must run). */
  readonly pwritevDatasync: ((fd: number, buffers: readonly Uint8Array[], position: number) => Promise<void>) | null;
  /** Gathers buffered writes into pwritevMany jobs; null without the addon, with an injected `fs`, or when disabled. */
  readonly gather: WriteGather<NodeFile> | null;
  /** The addon's sync_file_range(WRITE); null without it or with an injected `fs`. */
  readonly startWriteback: ((fd: number, offset: number, length: number) => Promise<void>) | null;
  private readonly writeRequests: WriteRequest[];
  private readonly readRequests: ReadRequest[];

  constructor(rawFs: NodeIoFs, alignment: number, gatherWrites: boolean) {
    this.fs = rawFs;
    this.alignment = alignment;
    this.stats = { shortWrites: 0, allocateNative: 0, allocateFallback: 0, writeSyncNative: 0, writeSyncFallback: 0, gatherJobs: 0, gatheredWrites: 0, writebacks: 0, writebackErrors: 0 };
    this.pwritevDatasync = rawFs === nodeFs ? nativePwritevDatasync : null;
    this.startWriteback = rawFs === nodeFs ? nativeStartWriteback : null;
    const many = nativePwritevMany;
    this.gather = rawFs === nodeFs && gatherWrites && many !== null
      ? new WriteGather<NodeFile>(many, (file, buffers, position, settle) => {
        file.beginOp(); // the request's own count (its finish() ends it); gathered() holds the write's
        this.takeWrite().start(file, null, buffers, position).then(() => settle(null), settle);
      }, this.stats)
      : null;
    this.handles = new Set();
    this.writeRequests = [];
    this.readRequests = [];
  }

  takeWrite(): WriteRequest {
    return this.writeRequests.pop() ?? new WriteRequest(this);
  }

  giveWrite(request: WriteRequest): void {
    if (this.writeRequests.length < POOLED_REQUESTS_MAX) this.writeRequests.push(request);
  }

  takeRead(): ReadRequest {
    return this.readRequests.pop() ?? new ReadRequest(this);
  }

  giveRead(request: ReadRequest): void {
    if (this.readRequests.length < POOLED_REQUESTS_MAX) this.readRequests.push(request);
  }
}

/** A data-path error: on an O_DIRECT file the kernel's EINVAL means misalignment. */
function dataError(error: unknown, file: NodeFile, syscall: string): IoError {
  const mapped = ioErrorFromNode(error, syscall, file.path);
  if (!file.direct || mapped.errno !== 'EINVAL') return mapped;
  return new IoError(IoErrorCode.invalidAlignment, `${syscall} ${file.path}: O_DIRECT request rejected (EINVAL)`, {
    errno: 'EINVAL', syscall, path: file.path, cause: error,
  });
}

/** An error of the addon's pwritevDatasync as the IoError the two node:fs calls would have given. */
function nativeWriteSyncError(cause: unknown, file: NodeFile, position: number): IoError {
  const fields = cause as { errno?: unknown; syscall?: unknown; context?: { noProgress?: unknown; bytesWritten?: unknown } } | null;
  const errno = fields?.errno;
  if (typeof errno !== 'string') throw cause; // a programmer error (TypeError): never an operating error
  const syscall = fields?.syscall === 'fdatasync' ? 'fdatasync' : 'pwritev';
  if (syscall === 'pwritev' && fields?.context?.noProgress === true) {
    const written = typeof fields.context.bytesWritten === 'number' ? fields.context.bytesWritten : 0;
    return noProgress(file, syscall, position + written);
  }
  if (syscall === 'pwritev' && file.direct && errno === 'EINVAL') {
    return new IoError(IoErrorCode.invalidAlignment, `pwritev ${file.path}: O_DIRECT request rejected (EINVAL)`, {
      errno: 'EINVAL', syscall, path: file.path, cause,
    });
  }
  return ioErrorFromErrno(errno, syscall, file.path, cause);
}

function noProgress(file: NodeFile, syscall: string, position: number): IoError {
  return new IoError(IoErrorCode.noProgress, `${syscall} ${file.path}: write made no progress`, {
    errno: null, syscall, path: file.path, context: { position },
  });
}

/** One pwrite/pwritev in flight: loops over short writes. Pooled; its callback is bound once. */
class WriteRequest {
  private readonly core: NodeCore;
  private file: NodeFile | null;
  private single: Uint8Array | null;
  private vector: readonly Uint8Array[] | null;
  private offset: number;
  private remaining: number;
  private position: number;
  private resolve: (() => void) | null;
  private reject: ((error: unknown) => void) | null;
  private readonly onWritten: ByteCallback;

  constructor(core: NodeCore) {
    this.core = core;
    this.file = null;
    this.single = null;
    this.vector = null;
    this.offset = 0;
    this.remaining = 0;
    this.position = 0;
    this.resolve = null;
    this.reject = null;
    this.onWritten = (error, bytes) => this.written(error, bytes);
  }

  start(file: NodeFile, single: Uint8Array | null, vector: readonly Uint8Array[] | null, position: number): Promise<void> {
    this.file = file;
    this.single = single;
    this.vector = vector;
    this.offset = 0;
    this.remaining = single !== null ? single.byteLength : iovecBytes(vector as readonly Uint8Array[]);
    this.position = position;
    const promise = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.issue();
    return promise;
  }

  private issue(): void {
    const fd = (this.file as NodeFile).fd;
    if (this.vector !== null) this.core.fs.writev(fd, this.vector, this.position, this.onWritten);
    else this.core.fs.write(fd, this.single as Uint8Array, this.offset, this.remaining, this.position, this.onWritten);
  }

  private written(error: NodeJS.ErrnoException | null, bytes: number): void {
    const file = this.file as NodeFile;
    const syscall = this.vector !== null ? 'pwritev' : 'pwrite';
    if (error !== null) return this.finish(dataError(error, file, syscall));
    if (bytes <= 0) return this.finish(noProgress(file, syscall, this.position));
    this.remaining -= bytes;
    this.position += bytes;
    if (this.remaining === 0) return this.finish(null);
    this.core.stats.shortWrites++;
    if (this.vector !== null) this.vector = advanceIovecs(this.vector, bytes);
    else this.offset += bytes;
    this.issue();
  }

  private finish(error: IoError | null): void {
    const { resolve, reject, file } = this;
    this.file = null;
    this.single = null;
    this.vector = null;
    this.resolve = null;
    this.reject = null;
    this.core.giveWrite(this);
    (file as NodeFile).endOp();
    if (error === null) (resolve as () => void)();
    else (reject as (e: unknown) => void)(error);
  }
}

/** One pread in flight: loops over short reads until the length or end of file. Pooled. */
class ReadRequest {
  private readonly core: NodeCore;
  private file: NodeFile | null;
  private target: Uint8Array | null;
  private done: number;
  private length: number;
  private position: number;
  private resolve: ((bytes: number) => void) | null;
  private reject: ((error: unknown) => void) | null;
  private readonly onRead: ByteCallback;

  constructor(core: NodeCore) {
    this.core = core;
    this.file = null;
    this.target = null;
    this.done = 0;
    this.length = 0;
    this.position = 0;
    this.resolve = null;
    this.reject = null;
    this.onRead = (error, bytes) => this.read(error, bytes);
  }

  start(file: NodeFile, target: Uint8Array, position: number, length: number): Promise<number> {
    this.file = file;
    this.target = target;
    this.done = 0;
    this.length = length;
    this.position = position;
    const promise = new Promise<number>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.issue();
    return promise;
  }

  private issue(): void {
    const fd = (this.file as NodeFile).fd;
    this.core.fs.read(fd, this.target as Uint8Array, this.done, this.length - this.done, this.position + this.done, this.onRead);
  }

  private read(error: NodeJS.ErrnoException | null, bytes: number): void {
    const file = this.file as NodeFile;
    if (error !== null) return this.finish(dataError(error, file, 'pread'));
    this.done += bytes;
    const endOfFile = bytes === 0 || (file.direct && bytes % this.core.alignment !== 0);
    if (this.done === this.length || endOfFile) return this.finish(null);
    this.issue();
  }

  private finish(error: IoError | null): void {
    const { resolve, reject, file, done } = this;
    this.file = null;
    this.target = null;
    this.resolve = null;
    this.reject = null;
    this.core.giveRead(this);
    (file as NodeFile).endOp();
    if (error === null) (resolve as (n: number) => void)(done);
    else (reject as (e: unknown) => void)(error);
  }
}

class NodeFile implements IoFile {
  readonly path: string;
  readonly direct: boolean;
  readonly fd: number;
  private readonly core: NodeCore;
  private readonly readOnly: boolean;
  private closed: boolean;
  private inflight: number;
  private drained: (() => void) | null;
  /** pwritevDatasync's continuations, bound once per handle (no closure per call on the hot path). */
  private readonly syncAfterWrite: () => Promise<void>;
  private readonly endNativeOp: () => void;

  constructor(core: NodeCore, path: string, fd: number, options: OpenOptions) {
    this.path = path;
    this.direct = options.direct === true;
    this.fd = fd;
    this.core = core;
    this.readOnly = options.readOnly === true;
    this.closed = false;
    this.inflight = 0;
    this.drained = null;
    this.syncAfterWrite = () => this.fdatasync();
    this.endNativeOp = () => this.endOp();
  }

  /** Null when the handle may run `syscall`, else the error to raise. */
  private unusable(syscall: string, mutates: boolean): IoError | null {
    if (this.closed) return new IoError(IoErrorCode.closed, `${syscall} ${this.path}: file is closed`, { errno: 'EBADF', syscall, path: this.path });
    if (mutates && this.readOnly) {
      return new IoError(IoErrorCode.readOnly, `${syscall} ${this.path}: opened read-only`, { errno: 'EBADF', syscall, path: this.path });
    }
    return null;
  }

  private misaligned(syscall: string, position: number, length: number, buffer: Uint8Array | null): IoError | null {
    if (!this.direct) return null;
    return directAlignmentError(syscall, this.path, this.core.alignment, position, length, buffer, 'allow');
  }

  beginOp(): void {
    this.inflight++;
  }

  endOp(): void {
    this.inflight--;
    if (this.inflight === 0 && this.drained !== null) this.drained();
  }

  pread(buffer: Uint8Array, position: number, length: number = buffer.byteLength): Promise<number> {
    assert(Number.isSafeInteger(position) && position >= 0, 'pread: position must be a non-negative safe integer');
    assert(Number.isSafeInteger(length) && length >= 0 && length <= buffer.byteLength, 'pread: length must fit the buffer');
    const error = this.unusable('pread', false) ?? this.misaligned('pread', position, length, buffer);
    if (error !== null) return Promise.reject(error);
    if (length === 0) return Promise.resolve(0);
    this.beginOp();
    return this.core.takeRead().start(this, buffer, position, length);
  }

  pwrite(buffer: Uint8Array, position: number): Promise<void> {
    assert(Number.isSafeInteger(position) && position >= 0, 'pwrite: position must be a non-negative safe integer');
    assert(Number.isSafeInteger(position + buffer.byteLength), 'pwrite: end must be a safe integer');
    const error = this.unusable('pwrite', true) ?? this.misaligned('pwrite', position, buffer.byteLength, buffer);
    if (error !== null) return Promise.reject(error);
    if (buffer.byteLength === 0) return Promise.resolve();
    if (this.core.gather !== null && !this.direct) return this.gathered([buffer], position);
    this.beginOp();
    return this.core.takeWrite().start(this, buffer, null, position);
  }

  /** A vectored write's checks (handle usable, O_DIRECT alignment of every buffer) and the position after it. */
  private checkVector(buffers: readonly Uint8Array[], position: number): { error: Error | null; end: number } {
    let error = this.unusable('pwritev', true);
    let end = position;
    for (const buffer of buffers) {
      error ??= this.misaligned('pwritev', end, buffer.byteLength, buffer);
      end += buffer.byteLength;
    }
    assert(Number.isSafeInteger(end), 'pwritev: end must be a safe integer');
    return { error, end };
  }

  pwritev(buffers: readonly Uint8Array[], position: number): Promise<void> {
    assert(Number.isSafeInteger(position) && position >= 0, 'pwritev: position must be a non-negative safe integer');
    const { error, end: at } = this.checkVector(buffers, position);
    if (error !== null) return Promise.reject(error);
    if (at === position) return Promise.resolve();
    if (this.core.gather !== null && !this.direct && buffers.length <= IOV_MAX) return this.gathered(buffers, position);
    this.beginOp();
    return this.core.takeWrite().start(this, null, buffers, position);
  }

  /** A write through the core's WriteGather (one threadpool job for the turn's writes). */
  private gathered(buffers: readonly Uint8Array[], position: number): Promise<void> {
    this.beginOp(); // held until the write ends: close() waits, so the job's fd stays this file's
    return new Promise<void>((resolve, reject) => {
      (this.core.gather as WriteGather<NodeFile>).add(this, buffers, position, (error) => {
        this.endOp();
        if (error === null) resolve();
        else reject(this.gatherError(error, position));
      });
    });
  }

  /** An IoError (from the lone node:fs path) as it is; an addon error mapped as node:fs's would be. */
  private gatherError(error: unknown, position: number): unknown {
    if (error instanceof IoError) return error;
    try {
      return nativeWriteSyncError(error, this, position);
    } catch {
      return error; // not an operating error (a TypeError): rejected unchanged
    }
  }

  preadSync(buffer: Uint8Array, position: number, length: number = buffer.byteLength): number {
    assert(Number.isSafeInteger(position) && position >= 0, 'preadSync: position must be a non-negative safe integer');
    assert(Number.isSafeInteger(length) && length >= 0 && length <= buffer.byteLength, 'preadSync: length must fit the buffer');
    const error = this.unusable('pread', false) ?? this.misaligned('pread', position, length, buffer);
    if (error !== null) throw error;
    let done = 0;
    while (done < length) {
      let bytes: number;
      try {
        bytes = this.core.fs.readSync(this.fd, buffer, done, length - done, position + done);
      } catch (cause) {
        throw dataError(cause, this, 'pread');
      }
      done += bytes;
      if (bytes === 0 || (this.direct && bytes % this.core.alignment !== 0)) break;
    }
    return done;
  }

  pwriteSync(buffer: Uint8Array, position: number): void {
    assert(Number.isSafeInteger(position) && position >= 0, 'pwriteSync: position must be a non-negative safe integer');
    const error = this.unusable('pwrite', true) ?? this.misaligned('pwrite', position, buffer.byteLength, buffer);
    if (error !== null) throw error;
    let done = 0;
    while (done < buffer.byteLength) {
      let bytes: number;
      try {
        bytes = this.core.fs.writeSync(this.fd, buffer, done, buffer.byteLength - done, position + done);
      } catch (cause) {
        throw dataError(cause, this, 'pwrite');
      }
      if (bytes <= 0) throw noProgress(this, 'pwrite', position + done);
      done += bytes;
      if (done < buffer.byteLength) this.core.stats.shortWrites++;
    }
  }

  /** Runs one callback-style fd call with in-flight tracking and error mapping. */
  private call<T>(syscall: string, mutates: boolean, run: (done: (error: NodeJS.ErrnoException | null, value: T) => void) => void): Promise<T> {
    const error = this.unusable(syscall, mutates);
    if (error !== null) return Promise.reject(error);
    this.beginOp();
    return new Promise<T>((resolve, reject) => {
      run((cause, value) => {
        this.endOp();
        if (cause !== null) reject(dataError(cause, this, syscall));
        else resolve(value);
      });
    });
  }

  fdatasync(): Promise<void> {
    return this.call<void>('fdatasync', false, (done) => fs.fdatasync(this.fd, (e) => done(e, undefined)));
  }

  /**
   * pwritev then fdatasync in one threadpool job when the addon has it
   * (stats.writeSyncNative), else the two calls in turn (writeSyncFallback):
   * one worker wake-up and one event-loop completion fewer per durable write.
   */
  pwritevDatasync(buffers: readonly Uint8Array[], position: number): Promise<void> {
    assert(Number.isSafeInteger(position) && position >= 0, 'pwritevDatasync: position must be a non-negative safe integer');
    const { error, end: at } = this.checkVector(buffers, position);
    if (error !== null) return Promise.reject(error);
    if (at === position) return this.fdatasync();
    const native = this.core.pwritevDatasync;
    if (native === null || buffers.length > IOV_MAX) {
      this.core.stats.writeSyncFallback++;
      return this.pwritev(buffers, position).then(this.syncAfterWrite);
    }
    this.core.stats.writeSyncNative++;
    this.beginOp();
    return native(this.fd, buffers, position).then(this.endNativeOp, (cause: unknown) => {
      this.endOp();
      throw nativeWriteSyncError(cause, this, position);
    });
  }

  /** IoFile.startWriteback: a hint on buffered files with the addon; errors are counted, never raised. */
  startWriteback(position: number, length: number): void {
    const start = this.core.startWriteback;
    if (start === null || this.direct || this.closed || length <= 0) return;
    const stats = this.core.stats;
    stats.writebacks++;
    start(this.fd, position, length).then(undefined, () => {
      stats.writebackErrors++;
    });
  }

  fsync(): Promise<void> {
    return this.call<void>('fsync', false, (done) => fs.fsync(this.fd, (e) => done(e, undefined)));
  }

  truncate(size: number): Promise<void> {
    assert(Number.isSafeInteger(size) && size >= 0, 'truncate: size must be a non-negative safe integer');
    return this.call<void>('ftruncate', true, (done) => fs.ftruncate(this.fd, size, (e) => done(e, undefined)));
  }

  size(): Promise<number> {
    return this.call<number>('fstat', false, (done) => fs.fstat(this.fd, (e, stats) => done(e, e === null ? stats.size : 0)));
  }

  /**
   * Reserves [position, position+length). Every mode leaves the bytes below
   * the current size unchanged. The fallocate modes use the addon's
   * fallocate(2) (stats.allocateNative); without it, or when the file system
   * answers ENOTSUP, 'fallocate' falls back to ftruncate (size extended,
   * sparse) and 'fallocate-keep-size' to nothing (stats.allocateFallback).
   * 'zero' writes zeros from the current size to the end of the range (never
   * over existing bytes).
   */
  async allocate(position: number, length: number, mode: AllocateMode): Promise<void> {
    assert(Number.isSafeInteger(position) && position >= 0, 'allocate: position must be a non-negative safe integer');
    assert(Number.isSafeInteger(length) && length > 0, 'allocate: length must be a positive safe integer');
    const error = this.unusable('fallocate', true) ?? (mode === 'zero' ? this.misaligned('fallocate', position, length, null) : null);
    if (error !== null) throw error;
    if (mode === 'fallocate' || mode === 'fallocate-keep-size') {
      const native = await loadNativeFallocate();
      if (native !== null && (await this.nativeAllocate(native, position, length, mode === 'fallocate-keep-size'))) return;
      this.core.stats.allocateFallback++;
      if (mode === 'fallocate-keep-size') return;
    }
    const size = await this.size();
    const end = position + length;
    if (end <= size) return;
    if (mode === 'zero') await this.zeroFill(size, end);
    else await this.truncate(end);
  }

  /** fallocate(2) through the addon; false when the file system lacks it (ENOTSUP), so the caller falls back. */
  private async nativeAllocate(native: NativeFallocate, position: number, length: number, keepSize: boolean): Promise<boolean> {
    this.beginOp();
    try {
      await native.call(this.fd, keepSize ? native.keepSizeMode : 0, position, length);
      this.core.stats.allocateNative++;
      return true;
    } catch (cause) {
      const errno = (cause as { errno?: unknown } | null)?.errno;
      if (typeof errno !== 'string') throw cause;
      if (errno === 'ENOTSUP' || errno === 'EOPNOTSUPP') return false;
      throw ioErrorFromErrno(errno, 'fallocate', this.path, cause);
    } finally {
      this.endOp();
    }
  }

  /** Writes zeros over [from, end). On O_DIRECT an unaligned start is first extended by ftruncate. */
  private async zeroFill(from: number, end: number): Promise<void> {
    let at = from;
    if (this.direct && at % this.core.alignment !== 0) {
      at = Math.min(end, Math.ceil(at / this.core.alignment) * this.core.alignment);
      await this.truncate(at);
    }
    const chunk = zeros();
    while (at < end) {
      const n = Math.min(chunk.byteLength, end - at);
      await this.pwrite(chunk.subarray(0, n), at);
      at += n;
    }
  }

  async close(): Promise<void> {
    const error = this.unusable('close', false);
    if (error !== null) throw error;
    this.closed = true;
    this.core.handles.delete(this);
    if (this.inflight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
    try {
      await new Promise<void>((resolve, reject) => fs.close(this.fd, (e) => (e === null ? resolve() : reject(e))));
    } catch (cause) {
      throw ioErrorFromNode(cause, 'close', this.path);
    }
  }
}

async function mapped<T>(syscall: string, p: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (cause) {
    throw ioErrorFromNode(cause, syscall, p);
  }
}

let probeCounter = 0;

export class NodeIo implements Io {
  readonly directAlignment: number;
  private readonly core: NodeCore;
  private readonly fileMode: number;
  private readonly dirMode: number;

  constructor(options: NodeIoOptions = {}) {
    const alignment = options.directAlignment ?? 4096;
    assert(Number.isSafeInteger(alignment) && alignment >= 512 && (alignment & (alignment - 1)) === 0, 'NodeIo: directAlignment must be a power of two >= 512');
    this.directAlignment = alignment;
    this.core = new NodeCore(options.fs ?? nodeFs, alignment, options.gatherWrites ?? process.env['SEGLOG_IO_GATHER'] !== '0');
    this.fileMode = options.fileMode ?? 0o600;
    this.dirMode = options.dirMode ?? 0o700;
  }

  /**
   * The smallest alignment (512, 1024, 2048 or 4096) at which O_DIRECT writes
   * and reads succeed in `dir`, or null when the file system refuses O_DIRECT
   * (tmpfs, some FUSE and shared volumes). Each try writes from an address
   * aligned to exactly that value, crossing a page boundary, at a file
   * position and with a length aligned to it. Creates and removes one file.
   */
  static async probeDirectAlignment(dir: string): Promise<number | null> {
    if (constants.O_DIRECT === undefined) return null;
    const file = path.join(dir, `.seglog-direct-probe-${process.pid}-${probeCounter++}`);
    let fd: number;
    try {
      fd = fs.openSync(file, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_DIRECT, 0o600);
    } catch (cause) {
      const error = ioErrorFromNode(cause, 'open', file);
      if (error.errno === 'EINVAL') return null;
      throw error;
    }
    try {
      const memory = new Uint8Array(wasmMemory(65536));
      for (const alignment of [512, 1024, 2048, 4096]) {
        const length = 8192 + alignment;
        const view = memory.subarray(alignment, alignment + length);
        try {
          fs.writeSync(fd, view, 0, length, alignment);
          fs.readSync(fd, view, 0, length, alignment);
          return alignment;
        } catch (cause) {
          if ((cause as { code?: unknown }).code !== 'EINVAL') throw ioErrorFromNode(cause, 'pwrite', file);
        }
      }
      return null;
    } finally {
      fs.closeSync(fd);
      fs.unlinkSync(file);
    }
  }

  get stats(): Readonly<NodeIoStats> {
    return this.core.stats;
  }

  /** Paths of handles not yet closed (sorted), for leak checks. */
  openHandles(): string[] {
    return [...this.core.handles].map((h) => h.path).sort();
  }

  async open(p: string, options: OpenOptions = {}): Promise<IoFile> {
    assert(options.exclusive !== true || options.create === true, 'open: exclusive needs create');
    let flags = options.readOnly === true ? constants.O_RDONLY : constants.O_RDWR;
    if (options.create === true) flags |= constants.O_CREAT;
    if (options.exclusive === true) flags |= constants.O_EXCL;
    if (options.direct === true) {
      if (constants.O_DIRECT === undefined) {
        throw new IoError(IoErrorCode.directUnsupported, `open ${p}: O_DIRECT is not available on this platform`, { errno: null, syscall: 'open', path: p });
      }
      flags |= constants.O_DIRECT;
    }
    if (options.dsync === true) flags |= constants.O_DSYNC ?? constants.O_SYNC;
    const fd = await new Promise<number>((resolve, reject) => {
      fs.open(p, flags, this.fileMode, (cause, fd) => (cause === null ? resolve(fd) : reject(this.openError(cause, p, options))));
    });
    if (options.readOnly === true) await this.refuseDirectory(fd, p);
    const file = new NodeFile(this.core, p, fd, options);
    this.core.handles.add(file);
    return file;
  }

  private openError(cause: unknown, p: string, options: OpenOptions): IoError {
    const error = ioErrorFromNode(cause, 'open', p);
    if (options.direct !== true || error.errno !== 'EINVAL') return error;
    return new IoError(IoErrorCode.directUnsupported, `open ${p}: the file system refuses O_DIRECT`, {
      errno: 'EINVAL', syscall: 'open', path: p, cause,
    });
  }

  /** Linux opens a directory read-only without complaint; an IoFile is always a regular file. */
  private async refuseDirectory(fd: number, p: string): Promise<void> {
    const stats = await mapped('fstat', p, () => new Promise<fs.Stats>((resolve, reject) => fs.fstat(fd, (e, s) => (e === null ? resolve(s) : reject(e)))));
    if (!stats.isDirectory()) return;
    fs.closeSync(fd);
    throw new IoError(IoErrorCode.isDirectory, `open ${p}: is a directory`, { errno: 'EISDIR', syscall: 'open', path: p });
  }

  async mkdir(p: string, options: { readonly recursive?: boolean } = {}): Promise<void> {
    await mapped('mkdir', p, () => fsp.mkdir(p, { recursive: options.recursive === true, mode: this.dirMode }));
  }

  async readdir(p: string): Promise<string[]> {
    const names = await mapped('scandir', p, () => fsp.readdir(p));
    return names.sort();
  }

  rename(from: string, to: string): Promise<void> {
    return mapped('rename', from, () => fsp.rename(from, to));
  }

  unlink(p: string): Promise<void> {
    return mapped('unlink', p, () => fsp.unlink(p));
  }

  rmdir(p: string): Promise<void> {
    return mapped('rmdir', p, () => fsp.rmdir(p));
  }

  async stat(p: string): Promise<FileStat> {
    const stats = await mapped('stat', p, () => fsp.stat(p));
    return { size: stats.size, isFile: stats.isFile(), isDirectory: stats.isDirectory(), mtimeMs: stats.mtimeMs };
  }

  async exists(p: string): Promise<boolean> {
    try {
      await this.stat(p);
      return true;
    } catch (error) {
      const code = (error as IoError).code;
      if (code === IoErrorCode.notFound || code === IoErrorCode.notDirectory) return false;
      throw error;
    }
  }

  async fsyncDir(p: string): Promise<void> {
    const handle = await mapped('open', p, () => fsp.open(p, 'r'));
    try {
      await mapped('fsync', p, () => handle.sync());
    } finally {
      await mapped('close', p, () => handle.close());
    }
  }

  async statfs(p: string): Promise<FsStat> {
    const stats = await mapped('statfs', p, () => fsp.statfs(p));
    return { availableBytes: stats.bsize * stats.bavail, totalBytes: stats.bsize * stats.blocks };
  }

  readFile(p: string): Promise<Buffer> {
    return mapped('read', p, () => fsp.readFile(p));
  }

  async lock(p: string): Promise<IoLock> {
    const flock = loadFlock(p);
    const file = await this.open(p, { create: true });
    try {
      const realPath = await mapped('realpath', p, () => fsp.realpath(p));
      if (heldLocks.has(realPath)) throw lockedError(p, 'this process');
      await new Promise<void>((resolve, reject) => {
        flock(file.fd, 'exnb', (error) => {
          if (error === null) resolve();
          else if (error.code === 'EAGAIN' || error.code === 'EWOULDBLOCK') reject(lockedError(p, 'another process or open file', error));
          else reject(ioErrorFromNode(error, 'flock', p));
        });
      });
      heldLocks.add(realPath);
      return new NodeLock(p, file, realPath);
    } catch (error) {
      await file.close();
      throw error;
    }
  }
}
