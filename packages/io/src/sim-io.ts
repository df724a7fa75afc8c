// SimIo: an in-memory, deterministic Io with crash modes and injected faults
// (reliability.md §3). Every random choice comes from one seeded PRNG, so a
// run replays exactly from its seed.
//
// State model (see internal/sim-disk.ts): per file durable bytes, pending data
// operations and visible bytes; per directory durable and visible entries,
// with namespace operations pending until an fsyncDir.
//
// Crash points: every mutating call (pwrite, pwritev, pwriteSync, truncate,
// allocate, fdatasync, fsync, open with create, mkdir, rename, unlink, rmdir,
// fsyncDir; pwritevDatasync is two: its write's, then its sync's) is numbered 1, 2, ... when it starts, after its arguments and
// handle are validated and before it changes anything. With `crashAt: N`, or
// when `onCrashPoint` returns true, the simulation halts there: the call
// rejects with SEGLOG_ERR_IO_CRASHED and so does every later call on this
// SimIo and its handles. `recover(mode)` then returns a fresh SimIo over the
// state that survives; it can be called again on the same halted SimIo with
// other modes and seeds.
//
// Calls take effect synchronously when made (the promise settles afterwards),
// so operations are ordered by call order; SimIo does not reorder concurrent
// operations the way the libuv threadpool may.

import { assert } from '@seglog/common';
import { IoError, IoErrorCode, ioErrorFromErrno } from './io-error.js';
import type { AllocateMode, FileStat, FsStat, Io, IoFile, IoLock, OpenOptions } from './io.js';
import { directAlignmentError } from './internal/direct-check.js';
import { Prng } from './internal/prng.js';
import { SimDisk } from './internal/sim-disk.js';
import type { SimDirNode, SimFileNode } from './internal/sim-disk.js';

export const CrashMode = {
  /** kill -9: the page cache survives; nothing completed is lost (pending stays pending). */
  process: 'process',
  /** Power loss: only durable state survives. */
  powerClean: 'power-clean',
  /** Power loss: each pending operation survives, is dropped or is torn, independently. */
  powerChaotic: 'power-chaotic',
  /** Power loss: a prefix of all pending operations in issue order survives; the last may be torn. */
  powerOrdered: 'power-ordered',
} as const;
export type CrashMode = (typeof CrashMode)[keyof typeof CrashMode];

/** When an injected fault fires. With neither `nth` nor `probability` it never fires. */
export interface FaultRule {
  /** Fire on the n-th matching call (1-based). */
  readonly nth?: number;
  /** With `nth`: fire on every matching call from the n-th on. */
  readonly persistent?: boolean;
  /** Fire on each matching call with this probability (seeded). */
  readonly probability?: number;
  /** Only calls on matching paths count (a prefix string, a RegExp or a predicate). */
  readonly path?: string | RegExp | ((path: string) => boolean);
}

export interface SimFaults {
  /** EIO from a write (one low-level write; after a short write it models EIO after partial progress). */
  readonly writeEio?: FaultRule;
  /** EIO from fdatasync/fsync/fsyncDir. For a file its pending writes are dropped, stay visible (fsyncgate). */
  readonly syncEio?: FaultRule;
  /** EIO from pread/preadSync/readFile. */
  readonly readEio?: FaultRule;
  /** A low-level write makes partial progress; the write loop continues. */
  readonly shortWrite?: FaultRule;
  /** A low-level write makes no progress: the call fails with SEGLOG_ERR_IO_NO_PROGRESS. */
  readonly zeroWrite?: FaultRule;
  /** fsync succeeds but makes nothing durable (pending writes are dropped, stay visible). */
  readonly lyingSync?: FaultRule;
  /** A read succeeds but one bit of what it returns is flipped. */
  readonly readCorruption?: FaultRule;
  /** EMFILE from open (the process is out of file descriptors); nothing is created. */
  readonly openEmfile?: FaultRule;
  /** ENOSPC once the files' logical sizes would exceed this many bytes. */
  readonly quotaBytes?: number;
}

export type FaultKind = Exclude<keyof SimFaults, 'quotaBytes'> | 'nospc';

export interface CrashPoint {
  readonly point: number;
  readonly op: string;
  readonly path: string;
}

export interface SimIoOptions {
  /** Seed of every random choice (faults, crash outcomes). Default 1. */
  readonly seed?: number;
  /** O_DIRECT alignment for buffers, positions and lengths. Default 4096. */
  readonly directAlignment?: number;
  /**
   * O_DIRECT buffers whose memory is not from an AlignedArena: 'reject' (default,
   * since a plain Buffer is aligned only by chance) or 'allow'.
   */
  readonly unknownDirectBuffers?: 'reject' | 'allow';
  /** Sector size of torn writes. Default 512. */
  readonly sectorBytes?: number;
  /** Powersafe overwrite: a torn write never damages bytes outside its range. Default true. */
  readonly powersafeOverwrite?: boolean;
  /** Relative odds for chaotic power loss; default SQLite's 3/8 full, 3/8 dropped, 1/4 torn. */
  readonly chaos?: { readonly full: number; readonly dropped: number; readonly torn: number };
  /** statfs total bytes when there is no quota. Default 1 TiB. */
  readonly totalBytes?: number;
  readonly faults?: SimFaults;
  /** Halt at this crash point (1-based). */
  readonly crashAt?: number;
  /** Called at every crash point; returning true halts there. */
  readonly onCrashPoint?: (point: CrashPoint) => boolean | void;
}

type Resolved = Required<Omit<SimIoOptions, 'faults' | 'crashAt' | 'onCrashPoint'>> & Pick<SimIoOptions, 'crashAt' | 'onCrashPoint'>;

const faultKinds: readonly FaultKind[] = [
  'writeEio', 'syncEio', 'readEio', 'shortWrite', 'zeroWrite', 'lyingSync', 'readCorruption', 'openEmfile', 'nospc',
];

function zeroCounts(): Record<FaultKind, number> {
  const counts = {} as Record<FaultKind, number>;
  for (const kind of faultKinds) counts[kind] = 0;
  return counts;
}

function pathMatches(filter: FaultRule['path'], path: string): boolean {
  if (filter === undefined) return true;
  if (typeof filter === 'string') return path.startsWith(filter);
  if (filter instanceof RegExp) return filter.test(path);
  return filter(path);
}

/** The shared state of one SimIo and its handles. */
class SimState {
  disk: SimDisk;
  prng: Prng;
  faults: SimFaults;
  readonly options: Resolved;
  readonly matched: Record<FaultKind, number>;
  readonly injected: Record<FaultKind, number>;
  readonly handles: Set<SimFile>;
  /** Paths locked through lock(): the simulated machine's flock table (a crash drops it). */
  readonly locks: Set<string>;
  point: number;
  halted: boolean;

  constructor(options: Resolved, faults: SimFaults) {
    this.disk = new SimDisk();
    this.prng = new Prng(options.seed);
    this.faults = faults;
    this.options = options;
    this.matched = zeroCounts();
    this.injected = zeroCounts();
    this.handles = new Set();
    this.locks = new Set();
    this.point = 0;
    this.halted = false;
  }

  alive(syscall: string, path: string): void {
    if (this.halted) throw new IoError(IoErrorCode.crashed, `${syscall} ${path}: the simulated machine crashed`, { errno: null, syscall, path });
  }

  crashPoint(op: string, path: string): void {
    this.point++;
    const info: CrashPoint = { point: this.point, op, path };
    const requested = this.options.onCrashPoint?.(info) === true;
    if (requested || this.point === this.options.crashAt) {
      this.halt();
      this.alive(op, path);
    }
  }

  halt(): void {
    this.halted = true;
    for (const handle of this.handles) handle.node.openCount--;
    this.handles.clear();
    this.locks.clear();
  }

  fault(kind: Exclude<FaultKind, 'nospc'>, path: string): boolean {
    const rule = this.faults[kind];
    if (rule === undefined || !pathMatches(rule.path, path)) return false;
    const n = ++this.matched[kind];
    let fire = rule.nth !== undefined && (rule.persistent === true ? n >= rule.nth : n === rule.nth);
    if (!fire && rule.probability !== undefined) fire = this.prng.chance(rule.probability);
    if (fire) this.injected[kind]++;
    return fire;
  }

  /** Bytes files may still grow by before ENOSPC (Infinity without a quota). */
  room(): number {
    const quota = this.faults.quotaBytes;
    return quota === undefined ? Infinity : Math.max(0, quota - this.disk.usedBytes());
  }

  nospc(syscall: string, path: string): IoError {
    this.injected.nospc++;
    return ioErrorFromErrno('ENOSPC', syscall, path);
  }

  /** A file sync: durable, or dropped by an injected EIO (thrown) or a lying sync. */
  syncFile(node: SimFileNode, syscall: string, path: string, implicit: boolean): void {
    if (!implicit && this.fault('syncEio', path)) {
      this.disk.sync(node, 'lost');
      throw ioErrorFromErrno('EIO', syscall, path);
    }
    this.disk.sync(node, this.fault('lyingSync', path) ? 'lost' : 'durable');
  }

  /** Flips one bit in `bytes[0..length)` if a read-corruption fault fires. */
  maybeCorrupt(bytes: Uint8Array, length: number, path: string): void {
    if (length > 0 && this.fault('readCorruption', path)) {
      const index = this.prng.int(length);
      bytes[index] = (bytes[index] as number) ^ (1 << this.prng.int(8));
    }
  }
}

class SimFile implements IoFile {
  readonly path: string;
  readonly direct: boolean;
  readonly fd: number;
  readonly node: SimFileNode;
  private readonly state: SimState;
  private readonly readOnly: boolean;
  private readonly dsync: boolean;
  private closed: boolean;

  constructor(state: SimState, path: string, node: SimFileNode, options: OpenOptions) {
    this.path = path;
    this.direct = options.direct === true;
    this.fd = -1;
    this.node = node;
    this.state = state;
    this.readOnly = options.readOnly === true;
    this.dsync = options.dsync === true;
    this.closed = false;
  }

  private usable(syscall: string, mutates: boolean): void {
    this.state.alive(syscall, this.path);
    if (this.closed) throw new IoError(IoErrorCode.closed, `${syscall} ${this.path}: file is closed`, { errno: 'EBADF', syscall, path: this.path });
    if (mutates && this.readOnly) {
      throw new IoError(IoErrorCode.readOnly, `${syscall} ${this.path}: opened read-only`, { errno: 'EBADF', syscall, path: this.path });
    }
  }

  private aligned(syscall: string, position: number, length: number, buffer: Uint8Array | null): void {
    if (!this.direct) return;
    const { directAlignment, unknownDirectBuffers } = this.state.options;
    const error = directAlignmentError(syscall, this.path, directAlignment, position, length, buffer, unknownDirectBuffers);
    if (error !== null) throw error;
  }

  preadSync(buffer: Uint8Array, position: number, length: number = buffer.byteLength): number {
    assert(Number.isSafeInteger(position) && position >= 0, 'pread: position must be a non-negative safe integer');
    assert(Number.isSafeInteger(length) && length >= 0 && length <= buffer.byteLength, 'pread: length must fit the buffer');
    this.usable('pread', false);
    this.aligned('pread', position, length, buffer);
    if (this.state.fault('readEio', this.path)) throw ioErrorFromErrno('EIO', 'pread', this.path);
    const count = this.node.visible.read(position, buffer, 0, length);
    this.state.maybeCorrupt(buffer, count, this.path);
    return count;
  }

  async pread(buffer: Uint8Array, position: number, length: number = buffer.byteLength): Promise<number> {
    return this.preadSync(buffer, position, length);
  }

  pwriteSync(buffer: Uint8Array, position: number): void {
    this.pwritevSync([buffer], position, 'pwrite');
  }

  async pwrite(buffer: Uint8Array, position: number): Promise<void> {
    this.pwritevSync([buffer], position, 'pwrite');
  }

  async pwritev(buffers: readonly Uint8Array[], position: number): Promise<void> {
    this.pwritevSync(buffers, position, 'pwritev');
  }

  private pwritevSync(buffers: readonly Uint8Array[], position: number, syscall: string): void {
    assert(Number.isSafeInteger(position) && position >= 0, 'pwrite: position must be a non-negative safe integer');
    this.usable(syscall, true);
    let at = position;
    for (const buffer of buffers) {
      this.aligned(syscall, at, buffer.byteLength, buffer);
      at += buffer.byteLength;
    }
    assert(Number.isSafeInteger(at), 'pwrite: end must be a safe integer');
    this.state.crashPoint(syscall, this.path);
    at = position;
    for (const buffer of buffers) {
      this.writeAll(buffer, at, syscall);
      at += buffer.byteLength;
    }
    if (this.dsync) this.state.syncFile(this.node, syscall, this.path, true);
  }

  /** The short-write loop over `rawWrite`, the same contract NodeIo keeps. */
  private writeAll(buffer: Uint8Array, position: number, syscall: string): void {
    let done = 0;
    while (done < buffer.byteLength) {
      const n = this.rawWrite(buffer.subarray(done), position + done, syscall);
      if (n === 0) {
        throw new IoError(IoErrorCode.noProgress, `${syscall} ${this.path}: write made no progress`, {
          errno: null, syscall, path: this.path, context: { position: position + done },
        });
      }
      done += n;
    }
  }

  /** One low-level write: may fail, or write fewer bytes (injected short write, quota). */
  private rawWrite(bytes: Uint8Array, position: number, syscall: string): number {
    const { state } = this;
    if (state.fault('writeEio', this.path)) throw ioErrorFromErrno('EIO', syscall, this.path);
    if (state.fault('zeroWrite', this.path)) return 0;
    let n = bytes.byteLength;
    const allowedEnd = this.node.visible.size + state.room();
    if (position + n > allowedEnd) {
      n = Math.max(0, allowedEnd - position);
      if (n === 0) throw state.nospc(syscall, this.path);
    }
    if (n > 1 && state.fault('shortWrite', this.path)) n = 1 + state.prng.int(n - 1);
    // A copy, never a view: the caller owns its buffer again once the write
    // completes (a staging chunk is reused), and a later fsync must make
    // durable the bytes of this write, not whatever the buffer holds then.
    // Buffer#slice is a view; Uint8Array#slice copies.
    state.disk.write(this.node, position, Uint8Array.prototype.slice.call(bytes, 0, n));
    return n;
  }

  async fdatasync(): Promise<void> {
    this.sync('fdatasync');
  }

  /**
   * The write, then the sync, each with its own crash point (as NodeIo's one
   * job makes two syscalls): a crash at the sync's point leaves the write
   * pending, exactly as if the sync never ran, and the call rejects (nothing
   * is acknowledged). A failed write never syncs.
   */
  async pwritevDatasync(buffers: readonly Uint8Array[], position: number): Promise<void> {
    assert(Number.isSafeInteger(position) && position >= 0, 'pwritevDatasync: position must be a non-negative safe integer');
    // NodeIo's checks, in its order, even when there is nothing to write.
    this.usable('pwritev', true);
    let at = position;
    for (const buffer of buffers) {
      this.aligned('pwritev', at, buffer.byteLength, buffer);
      at += buffer.byteLength;
    }
    if (at > position) this.pwritevSync(buffers, position, 'pwritev');
    this.sync('fdatasync');
  }

  async fsync(): Promise<void> {
    this.sync('fsync');
  }

  private sync(syscall: string): void {
    this.usable(syscall, false);
    this.state.crashPoint(syscall, this.path);
    this.state.syncFile(this.node, syscall, this.path, false);
  }

  async truncate(size: number): Promise<void> {
    assert(Number.isSafeInteger(size) && size >= 0, 'truncate: size must be a non-negative safe integer');
    this.usable('ftruncate', true);
    this.state.crashPoint('ftruncate', this.path);
    this.grow('ftruncate', size);
    this.state.disk.truncate(this.node, size);
  }

  async allocate(position: number, length: number, mode: AllocateMode): Promise<void> {
    assert(Number.isSafeInteger(position) && position >= 0, 'allocate: position must be a non-negative safe integer');
    assert(Number.isSafeInteger(length) && length > 0, 'allocate: length must be a positive safe integer');
    this.usable('fallocate', true);
    if (mode === 'zero') this.aligned('fallocate', position, length, null);
    this.state.crashPoint('fallocate', this.path);
    const end = position + length;
    const size = this.node.visible.size;
    // SimIo does not model reserved-but-unused blocks: keep-size changes nothing visible.
    if (mode === 'fallocate-keep-size' || end <= size) return;
    this.grow('fallocate', end);
    if (mode === 'zero') {
      this.state.disk.zero(this.node, size, end - size);
      if (this.dsync) this.state.syncFile(this.node, 'fallocate', this.path, true);
    } else {
      this.state.disk.truncate(this.node, end);
    }
  }

  /** ENOSPC if growing the file to `size` exceeds the quota. */
  private grow(syscall: string, size: number): void {
    if (size - this.node.visible.size > this.state.room()) throw this.state.nospc(syscall, this.path);
  }

  async size(): Promise<number> {
    this.usable('fstat', false);
    return this.node.visible.size;
  }

  async close(): Promise<void> {
    this.usable('close', false);
    this.closed = true;
    this.node.openCount--;
    this.state.handles.delete(this);
  }
}

export class SimIo implements Io {
  readonly directAlignment: number;
  private readonly state: SimState;

  constructor(options: SimIoOptions = {}) {
    const resolved: Resolved = {
      seed: options.seed ?? 1,
      directAlignment: options.directAlignment ?? 4096,
      unknownDirectBuffers: options.unknownDirectBuffers ?? 'reject',
      sectorBytes: options.sectorBytes ?? 512,
      powersafeOverwrite: options.powersafeOverwrite ?? true,
      chaos: options.chaos ?? { full: 3, dropped: 3, torn: 2 },
      totalBytes: options.totalBytes ?? 2 ** 40,
      ...(options.crashAt === undefined ? {} : { crashAt: options.crashAt }),
      ...(options.onCrashPoint === undefined ? {} : { onCrashPoint: options.onCrashPoint }),
    };
    const powerOfTwo = (n: number): boolean => Number.isSafeInteger(n) && n > 0 && (n & (n - 1)) === 0;
    assert(powerOfTwo(resolved.directAlignment), 'SimIo: directAlignment must be a power of two');
    assert(powerOfTwo(resolved.sectorBytes), 'SimIo: sectorBytes must be a power of two');
    this.directAlignment = resolved.directAlignment;
    this.state = new SimState(resolved, options.faults ?? {});
  }

  // ---- simulation control ---------------------------------------------

  /** Crash points reached so far (the number of the last one). */
  get crashPoints(): number {
    return this.state.point;
  }

  get halted(): boolean {
    return this.state.halted;
  }

  /** Stops the simulated machine now: every later call on this SimIo or its handles rejects. */
  halt(): void {
    this.state.halt();
  }

  /**
   * Halts (if not yet halted) and returns a fresh SimIo over what survives a
   * crash of kind `mode`. The new SimIo keeps this one's geometry options
   * (alignment, sectors, PSOW, chaos odds); faults and crash settings come only
   * from `options`. The same halted SimIo can be recovered again.
   */
  recover(mode: CrashMode, options: SimIoOptions = {}): SimIo {
    this.halt();
    const seed = options.seed ?? this.state.prng.fork();
    const prng = new Prng(seed);
    const { directAlignment, unknownDirectBuffers, sectorBytes, powersafeOverwrite, chaos, totalBytes } = this.state.options;
    const disk = this.state.disk.survive({ mode, prng, sectorBytes, powersafeOverwrite, chaos });
    const next = new SimIo({
      directAlignment, unknownDirectBuffers, sectorBytes, powersafeOverwrite, chaos, totalBytes, ...options, seed: prng.fork(),
    });
    next.state.disk = disk;
    return next;
  }

  /** Replaces the injected faults and resets their counters. */
  setFaults(faults: SimFaults): void {
    this.state.faults = faults;
    for (const kind of faultKinds) {
      this.state.matched[kind] = 0;
      this.state.injected[kind] = 0;
    }
  }

  /** How many faults of each kind were injected since the last setFaults. */
  get injected(): Readonly<Record<FaultKind, number>> {
    return this.state.injected;
  }

  /** Paths of handles not yet closed (sorted), for leak checks. */
  openHandles(): string[] {
    return [...this.state.handles].map((h) => h.path).sort();
  }

  /** Pending (not yet durable) data and namespace operations. */
  pendingOperations(): number {
    return this.state.disk.pendingCount();
  }

  // ---- Io --------------------------------------------------------------

  async open(p: string, options: OpenOptions = {}): Promise<IoFile> {
    assert(options.exclusive !== true || options.create === true, 'open: exclusive needs create');
    const path = SimDisk.normalize(p);
    const { state } = this;
    state.alive('open', path);
    if (state.fault('openEmfile', path)) throw ioErrorFromErrno('EMFILE', 'open', path);
    const walk = state.disk.walk(path, 'open');
    if (options.create === true) state.crashPoint('open', path);
    let node = walk.node;
    if (node !== undefined) {
      if (options.create === true && options.exclusive === true) throw ioErrorFromErrno('EEXIST', 'open', path);
      if (node.kind === 'dir') throw ioErrorFromErrno('EISDIR', 'open', path);
    } else {
      if (options.create !== true) throw ioErrorFromErrno('ENOENT', 'open', path);
      if (state.room() <= 0) throw state.nospc('open', path);
      node = state.disk.createFile(walk.parent as SimDirNode, walk.name);
    }
    const file = new SimFile(state, path, node, options);
    node.openCount++;
    state.handles.add(file);
    return file;
  }

  async mkdir(p: string, options: { readonly recursive?: boolean } = {}): Promise<void> {
    const path = SimDisk.normalize(p);
    const { state } = this;
    state.alive('mkdir', path);
    state.crashPoint('mkdir', path);
    if (options.recursive !== true) {
      const walk = state.disk.walk(path, 'mkdir');
      if (walk.node !== undefined) throw ioErrorFromErrno('EEXIST', 'mkdir', path);
      if (state.room() <= 0) throw state.nospc('mkdir', path);
      state.disk.createDir(walk.parent as SimDirNode, walk.name);
      return;
    }
    let dir = state.disk.root;
    const names = path === '/' ? [] : path.split('/').slice(1);
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      const child = state.disk.child(dir, name);
      if (child === undefined) {
        if (state.room() <= 0) throw state.nospc('mkdir', path);
        dir = state.disk.createDir(dir, name);
      } else if (child.kind === 'dir') {
        dir = child;
      } else {
        throw ioErrorFromErrno(i === names.length - 1 ? 'EEXIST' : 'ENOTDIR', 'mkdir', path);
      }
    }
  }

  async readdir(p: string): Promise<string[]> {
    const path = SimDisk.normalize(p);
    this.state.alive('scandir', path);
    const node = this.state.disk.walk(path, 'scandir').node;
    if (node === undefined) throw ioErrorFromErrno('ENOENT', 'scandir', path);
    if (node.kind !== 'dir') throw ioErrorFromErrno('ENOTDIR', 'scandir', path);
    return [...node.entries.keys()].sort();
  }

  async rename(fromPath: string, toPath: string): Promise<void> {
    const from = SimDisk.normalize(fromPath);
    const to = SimDisk.normalize(toPath);
    const { state } = this;
    state.alive('rename', from);
    state.crashPoint('rename', from);
    // Linux's order: both parents, then the source, then ancestry, then types.
    const source = state.disk.walk(from, 'rename');
    const target = state.disk.walk(to, 'rename');
    if (source.node === undefined) throw ioErrorFromErrno('ENOENT', 'rename', from);
    if (source.parent === null || target.parent === null) throw ioErrorFromErrno('EBUSY', 'rename', from);
    if (from === to) return;
    if (to.startsWith(`${from}/`)) throw ioErrorFromErrno('EINVAL', 'rename', from);
    if (from.startsWith(`${to}/`)) throw ioErrorFromErrno('ENOTEMPTY', 'rename', to);
    const existing = target.node;
    if (existing !== undefined) {
      if (existing.id === source.node.id) return;
      if (source.node.kind === 'file' && existing.kind === 'dir') throw ioErrorFromErrno('EISDIR', 'rename', to);
      if (source.node.kind === 'dir' && existing.kind === 'file') throw ioErrorFromErrno('ENOTDIR', 'rename', to);
      if (existing.kind === 'dir' && existing.entries.size > 0) throw ioErrorFromErrno('ENOTEMPTY', 'rename', to);
    }
    if (state.room() <= 0) throw state.nospc('rename', from);
    state.disk.rename(source.parent, source.name, target.parent, target.name);
  }

  async unlink(p: string): Promise<void> {
    const path = SimDisk.normalize(p);
    const { state } = this;
    state.alive('unlink', path);
    state.crashPoint('unlink', path);
    const walk = state.disk.walk(path, 'unlink');
    if (walk.node === undefined) throw ioErrorFromErrno('ENOENT', 'unlink', path);
    if (walk.node.kind === 'dir') throw ioErrorFromErrno('EISDIR', 'unlink', path);
    state.disk.removeEntry(walk.parent as SimDirNode, walk.name);
  }

  async rmdir(p: string): Promise<void> {
    const path = SimDisk.normalize(p);
    const { state } = this;
    state.alive('rmdir', path);
    state.crashPoint('rmdir', path);
    const walk = state.disk.walk(path, 'rmdir');
    if (walk.node === undefined) throw ioErrorFromErrno('ENOENT', 'rmdir', path);
    if (walk.node.kind !== 'dir') throw ioErrorFromErrno('ENOTDIR', 'rmdir', path);
    if (walk.parent === null) throw ioErrorFromErrno('EBUSY', 'rmdir', path);
    if (walk.node.entries.size > 0) throw ioErrorFromErrno('ENOTEMPTY', 'rmdir', path);
    state.disk.removeEntry(walk.parent, walk.name);
  }

  async stat(p: string): Promise<FileStat> {
    const path = SimDisk.normalize(p);
    this.state.alive('stat', path);
    const node = this.state.disk.walk(path, 'stat').node;
    if (node === undefined) throw ioErrorFromErrno('ENOENT', 'stat', path);
    const size = node.kind === 'file' ? node.visible.size : 4096;
    return { size, isFile: node.kind === 'file', isDirectory: node.kind === 'dir', mtimeMs: node.mtimeMs };
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
    const path = SimDisk.normalize(p);
    const { state } = this;
    state.alive('fsync', path);
    state.crashPoint('fsyncDir', path);
    const node = state.disk.walk(path, 'open').node;
    if (node === undefined) throw ioErrorFromErrno('ENOENT', 'open', path);
    if (node.kind === 'file') {
      state.syncFile(node, 'fsync', path, false);
      return;
    }
    if (state.fault('syncEio', path)) throw ioErrorFromErrno('EIO', 'fsync', path);
    // A lying directory sync leaves the namespace operations pending.
    if (!state.fault('lyingSync', path)) state.disk.syncDir(node);
  }

  async statfs(p: string): Promise<FsStat> {
    const path = SimDisk.normalize(p);
    this.state.alive('statfs', path);
    if (this.state.disk.walk(path, 'statfs').node === undefined) throw ioErrorFromErrno('ENOENT', 'statfs', path);
    const totalBytes = this.state.faults.quotaBytes ?? this.state.options.totalBytes;
    return { totalBytes, availableBytes: Math.max(0, totalBytes - this.state.disk.usedBytes()) };
  }

  async readFile(p: string): Promise<Buffer> {
    const path = SimDisk.normalize(p);
    const { state } = this;
    state.alive('open', path);
    const node = state.disk.walk(path, 'open').node;
    if (node === undefined) throw ioErrorFromErrno('ENOENT', 'open', path);
    if (node.kind === 'dir') throw ioErrorFromErrno('EISDIR', 'read', path);
    if (state.fault('readEio', path)) throw ioErrorFromErrno('EIO', 'read', path);
    const bytes = node.visible.toBuffer();
    state.maybeCorrupt(bytes, bytes.byteLength, path);
    return bytes;
  }

  /** Like NodeIo: creates the file, keeps a handle open while locked; a second lock of the path fails. */
  async lock(p: string): Promise<IoLock> {
    const path = SimDisk.normalize(p);
    const { state } = this;
    const file = await this.open(path, { create: true });
    if (state.locks.has(path)) {
      await file.close();
      throw new IoError(IoErrorCode.locked, `lock ${path}: already locked`, { errno: 'EWOULDBLOCK', syscall: 'flock', path });
    }
    state.locks.add(path);
    let released = false;
    return {
      path,
      async release(): Promise<void> {
        if (released) return;
        released = true;
        if (!state.halted) state.locks.delete(path);
        await file.close();
      },
    };
  }
}
