// Where a cleaning pass's CPU work runs (window-cleaner.ts: batch walks, CRC
// checks, key mapping, filtering, rebuilt batches). The pass itself, all its
// I/O (through Io, so SimIo's crash and fault schedules cover it), the
// throttle and the swap stay on the caller's thread either way.
//
// - 'inline': on the event loop, in slices of SLICE_BYTES with a macrotask
//   turn between them, so a request waits behind at most about one batch of
//   the cleaner's CPU.
// - 'worker': in one process-wide worker thread (cleaner-worker.ts), a whole
//   window per message; the window's ArrayBuffer moves there and back
//   (transferred, not copied), the kept bytes come back as one buffer. The
//   event loop then holds only a message per 256 KiB window. Issue 20's
//   target (caller-append p99 within 1.5x of idle while a pass runs at full
//   speed) was missed inline: a batch of filtering per slice on the event
//   loop, 8-10 k slices a second at ~100 MB/s (bench/compaction.bench.ts).
//
// In worker mode on a file with an OS fd that is not O_DIRECT (NodeIo; never
// SimIo), the worker also does the window's file I/O itself (mapAt,
// filterAt): it preads the window into a buffer of its own with readSync and
// writes the kept bytes to the `.cleaned` file with writeSync, at nice 19, and
// answers with counts only. The event loop then neither dispatches nor
// completes a pool job for the cleaner's reads and writes, nor receives a
// window's bytes (every transferred ArrayBuffer is external memory on its heap:
// ~2 per window drove its GC). What stays on the caller's thread through Io
// is what crash safety rests on: opening, fdatasync, close, rename and swap.
// SimIo's files have no fd (-1), so its crash-point and fault suites run the
// pool path; test/cleaner-worker-io.test.ts covers the fd path on disk.
//
// The worker starts on the first pass that asks for it and stays (unref'd
// while no request is outstanding, so it never keeps a process alive). A
// worker that errs, exits, or does not answer a request within
// WORKER_DEADLINE_MS fails every pass waiting on it (before any swap of
// theirs: the cleaner retries them later) and is replaced at the next pass.
// A pass whose worker cannot start runs inline (fallbacks counts them).

import { startSiblingWorker } from '@seglog/common';
import { ioErrorFromErrno } from '@seglog/io';
import type { Worker } from 'node:worker_threads';
import { WindowCleaner } from './window-cleaner.js';
import type { FilterResult, MapResult, PassSetup, WalkResult, WindowSpan } from './window-cleaner.js';

/** Bytes an inline step walks before it yields a macrotask turn (a batch or two of 100 B-1 KiB records). */
export const SLICE_BYTES = 8 * 1024;
/** The worker thread's nice value (cleaner-worker.ts): the lowest priority, as Kafka's cleaner is background work. */
export const CLEANER_WORKER_NICE = 19;
/** A window takes milliseconds; a worker silent for this long is taken as hung and terminated. */
export const WORKER_DEADLINE_MS = 60_000;

export type ComputeMode = 'inline' | 'worker';

/** The worker thread's CPU priority (cleaner-worker.ts): nice 19, or the process's where setPriority failed. */
export type WorkerPolicy = 'nice' | 'default';

/** A window the compute reads itself: [position, position + length) of fd, a file of `limit` bytes, into a buffer of at least windowBytes. */
export interface WindowRead {
  readonly fd: number;
  /** For errors only. */
  readonly path: string;
  readonly position: number;
  readonly length: number;
  readonly windowBytes: number;
  readonly limit: number;
}

/** Where filterAt writes the kept bytes: the .cleaned file's fd, at position. */
export interface CleanedOut {
  readonly fd: number;
  readonly position: number;
  readonly path: string;
}

/** mapAt/filterAt: the bytes read (short: the file ended before length). */
export interface ReadCount {
  readonly read: number;
}

export type FilterAtResult = WalkResult & ReadCount & { readonly removedRecords: number; readonly written: number };

/** What the I/O of mapAt/filterAt needs to know of a file (IoFile has both). */
export interface FileHandle {
  readonly fd: number;
  readonly direct: boolean;
}

/** One pass's compute. Every window handed in may be moved away: use the one returned in its place. */
export interface PassCompute {
  readonly mode: ComputeMode;
  /** Bytes one call walks at most (the caller yields between calls); Infinity for the worker. */
  readonly sliceBytes: number;
  mapWindow(window: Buffer, from: number, to: number, span: WindowSpan): Promise<MapResult & { window: Buffer }>;
  startFilter(mapEndOffset: number): Promise<number>;
  filterWindow(window: Buffer, from: number, to: number, span: WindowSpan, lastSegment: boolean): Promise<FilterResult & { window: Buffer }>;
  earliestHorizonMs(): Promise<number>;
  /** Whether mapAt/filterAt can do the I/O of `file` on the compute's own thread (a worker; an OS fd; not O_DIRECT). */
  ownsIo(file: FileHandle): boolean;
  /** Reads a window of a file of its own (ownsIo) and maps its batches from byte 0; the window stays with the compute. */
  mapAt(read: WindowRead): Promise<MapResult & ReadCount>;
  /** Reads and filters a window as mapAt, and writes the kept bytes to out.fd at out.position (ownsIo of both files). */
  filterAt(read: WindowRead, lastSegment: boolean, out: CleanedOut): Promise<FilterAtResult>;
  /** Frees the pass's state (the offset map). Idempotent; never throws. */
  end(): void;
}

class InlineCompute implements PassCompute {
  readonly mode = 'inline';
  readonly sliceBytes = SLICE_BYTES;
  private readonly cleaner: WindowCleaner;

  constructor(setup: PassSetup) {
    this.cleaner = new WindowCleaner(setup);
  }

  mapWindow(window: Buffer, from: number, to: number, span: WindowSpan): Promise<MapResult & { window: Buffer }> {
    return Promise.resolve({ ...this.cleaner.mapWindow(window, from, to, span, this.sliceBytes), window });
  }

  startFilter(mapEndOffset: number): Promise<number> {
    return Promise.resolve(this.cleaner.startFilter(mapEndOffset));
  }

  filterWindow(window: Buffer, from: number, to: number, span: WindowSpan, lastSegment: boolean): Promise<FilterResult & { window: Buffer }> {
    return Promise.resolve({ ...this.cleaner.filterWindow(window, from, to, span, { lastSegment, maxBytes: this.sliceBytes }), window });
  }

  earliestHorizonMs(): Promise<number> {
    return Promise.resolve(this.cleaner.earliestHorizonMs);
  }

  ownsIo(): boolean {
    return false;
  }

  mapAt(): Promise<MapResult & ReadCount> {
    return Promise.reject(new Error('inline compute does no I/O (ownsIo is false)'));
  }

  filterAt(): Promise<FilterAtResult> {
    return Promise.reject(new Error('inline compute does no I/O (ownsIo is false)'));
  }

  end(): void {}
}

// ---- the worker's side of the wire (cleaner-worker.ts answers these) ------------

export type WorkerRequest =
  | { readonly id: number; readonly pass: number; readonly op: 'begin'; readonly setup: PassSetup }
  | { readonly id: number; readonly pass: number; readonly op: 'map'; readonly window: Uint8Array; readonly from: number; readonly to: number; readonly span: WindowSpan }
  | { readonly id: number; readonly pass: number; readonly op: 'startFilter'; readonly mapEndOffset: number }
  | { readonly id: number; readonly pass: number; readonly op: 'filter'; readonly window: Uint8Array; readonly from: number; readonly to: number; readonly span: WindowSpan; readonly lastSegment: boolean }
  | { readonly id: number; readonly pass: number; readonly op: 'mapAt'; readonly read: WindowRead }
  | { readonly id: number; readonly pass: number; readonly op: 'filterAt'; readonly read: WindowRead; readonly lastSegment: boolean; readonly out: CleanedOut }
  | { readonly id: number; readonly pass: number; readonly op: 'horizon' }
  | { readonly id: number; readonly pass: number; readonly op: 'end' }
  /** Test hook: after `after` more answers the worker exits, or answers nothing more. */
  | { readonly id: number; readonly pass: number; readonly op: 'fault'; readonly kind: 'exit' | 'hang'; readonly after: number };

/** A failed request: errno and syscall when a read or write of the worker's failed (mapped to an IoError on the caller's side). */
export type WorkerReply =
  | { readonly id: number; readonly ok: true; readonly result: unknown }
  | { readonly id: number; readonly ok: false; readonly error: string; readonly errno?: string; readonly syscall?: string; readonly path?: string };

/** The error a rejected request gives its caller: an IoError for a failed syscall of the worker's, else a plain Error. */
function replyError(reply: Extract<WorkerReply, { ok: false }>): Error {
  if (reply.errno !== undefined) return ioErrorFromErrno(reply.errno, `cleaner worker ${reply.syscall ?? 'io'}`, reply.path ?? null, new Error(reply.error));
  return new Error(`cleaner worker: ${reply.error}`);
}

/** The window's whole ArrayBuffer, when it can move (never a slice of Node's shared pool). */
function movable(view: Uint8Array): ArrayBuffer[] {
  const owner = view.buffer;
  return owner instanceof ArrayBuffer && view.byteOffset === 0 && view.byteLength === owner.byteLength ? [owner] : [];
}

export function asBuffer(view: Uint8Array): Buffer {
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength);
}

interface Waiting {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
}

/** The process-wide worker: requests in order, one message each. */
class CleanerWorker {
  private readonly worker: Worker;
  private readonly waiting: Map<number, Waiting>;
  private nextId: number;
  private deadline: NodeJS.Timeout | null;
  private failure: Error | null;
  readonly ready: Promise<void>;

  constructor() {
    this.worker = startSiblingWorker(import.meta.url, 'cleaner-worker');
    this.waiting = new Map();
    this.nextId = 1;
    this.deadline = null;
    this.failure = null;
    let markReady: () => void = () => undefined;
    let markFailed: (error: Error) => void = () => undefined;
    this.ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      markFailed = reject;
    });
    this.ready.catch(() => undefined);
    this.worker.on('message', (message: WorkerReply | { readonly ready: WorkerPolicy }) => {
      if (!('ready' in message)) {
        this.settle(message);
        return;
      }
      lastPolicy = message.ready;
      // Referenced while it starts (someone awaits `ready`); idle from now on until a request.
      if (this.waiting.size === 0) this.worker.unref();
      markReady();
    });
    this.worker.on('error', (error: Error) => {
      const failure = new Error(`cleaner worker failed: ${error.message}`, { cause: error });
      markFailed(failure);
      this.fail(failure);
    });
    this.worker.on('exit', (code: number) => {
      const failure = new Error(`cleaner worker exited with code ${code}`);
      markFailed(failure);
      this.fail(failure);
    });
  }

  get failed(): boolean {
    return this.failure !== null;
  }

  request<T>(message: WorkerRequest, transfer: ArrayBuffer[] = []): Promise<T> {
    if (this.failure !== null) return Promise.reject(this.failure);
    const id = this.nextId++;
    const sent = { ...message, id } as WorkerRequest;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (value: unknown) => void, reject });
      if (this.waiting.size === 1) {
        this.worker.ref(); // a request in flight keeps the process alive until it settles
        this.armDeadline();
      }
      this.worker.postMessage(sent, transfer);
    });
  }

  terminate(): void {
    this.fail(new Error('cleaner worker terminated'));
  }

  private settle(reply: WorkerReply): void {
    const waiting = this.waiting.get(reply.id);
    if (waiting === undefined) return;
    this.waiting.delete(reply.id);
    if (this.waiting.size === 0) {
      this.worker.unref();
      this.clearDeadline();
    } else {
      this.armDeadline();
    }
    if (reply.ok) waiting.resolve(reply.result);
    else waiting.reject(replyError(reply));
  }

  private fail(error: Error): void {
    if (this.failure === null) this.failure = error;
    this.clearDeadline();
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of waiting) w.reject(this.failure);
    if (shared === this) shared = null;
    void this.worker.terminate();
  }

  private armDeadline(): void {
    this.clearDeadline();
    this.deadline = setTimeout(() => this.fail(new Error(`cleaner worker did not answer within ${deadlineMs} ms`)), deadlineMs);
    this.deadline.unref();
  }

  private clearDeadline(): void {
    if (this.deadline !== null) clearTimeout(this.deadline);
    this.deadline = null;
  }
}

let shared: CleanerWorker | null = null;
let nextPass = 1;
let deadlineMs = WORKER_DEADLINE_MS;
let workerIo = true;
let lastPolicy: WorkerPolicy | null = null;

/** The CPU scheduling the last worker started got (null: none started yet in this process). */
export function cleanerWorkerPolicy(): WorkerPolicy | null {
  return lastPolicy;
}

/** Test and bench seam: false makes the worker compute only (its windows read and written on the pool by the pass). */
export function setWorkerIo(enabled: boolean): void {
  workerIo = enabled;
}

/** Test seam: the deadline for later requests. */
export function setWorkerDeadlineMs(ms: number): void {
  deadlineMs = ms;
}

/** Test seam: after `after` more requests the shared worker exits ('exit') or stops answering ('hang'). */
export async function injectWorkerFault(kind: 'exit' | 'hang', after: number): Promise<void> {
  const worker = await sharedWorker();
  await worker.request({ id: 0, pass: 0, op: 'fault', kind, after });
}

/** Ends the shared worker (a later pass starts a new one). */
export function terminateCleanerWorker(): void {
  shared?.terminate();
}

async function sharedWorker(): Promise<CleanerWorker> {
  if (shared === null || shared.failed) shared = new CleanerWorker();
  const worker = shared;
  await worker.ready;
  return worker;
}

class WorkerCompute implements PassCompute {
  readonly mode = 'worker';
  readonly sliceBytes = Number.POSITIVE_INFINITY;
  private readonly worker: CleanerWorker;
  private readonly pass: number;
  private ended: boolean;

  constructor(worker: CleanerWorker, pass: number) {
    this.worker = worker;
    this.pass = pass;
    this.ended = false;
  }

  async mapWindow(window: Buffer, from: number, to: number, span: WindowSpan): Promise<MapResult & { window: Buffer }> {
    const r = await this.worker.request<MapResult & { window: Uint8Array }>({ id: 0, pass: this.pass, op: 'map', window, from, to, span }, movable(window));
    return { ...r, window: asBuffer(r.window) };
  }

  startFilter(mapEndOffset: number): Promise<number> {
    return this.worker.request<number>({ id: 0, pass: this.pass, op: 'startFilter', mapEndOffset });
  }

  async filterWindow(window: Buffer, from: number, to: number, span: WindowSpan, lastSegment: boolean): Promise<FilterResult & { window: Buffer }> {
    const r = await this.worker.request<Omit<FilterResult, 'output'> & { window: Uint8Array; output: Uint8Array }>(
      { id: 0, pass: this.pass, op: 'filter', window, from, to, span, lastSegment }, movable(window));
    return { ...r, output: r.output.length === 0 ? [] : [asBuffer(r.output)], window: asBuffer(r.window) };
  }

  earliestHorizonMs(): Promise<number> {
    return this.worker.request<number>({ id: 0, pass: this.pass, op: 'horizon' });
  }

  ownsIo(file: FileHandle): boolean {
    return workerIo && file.fd >= 0 && !file.direct;
  }

  mapAt(read: WindowRead): Promise<MapResult & ReadCount> {
    computeCounters.ioWindows++;
    return this.worker.request<MapResult & ReadCount>({ id: 0, pass: this.pass, op: 'mapAt', read });
  }

  filterAt(read: WindowRead, lastSegment: boolean, out: CleanedOut): Promise<FilterAtResult> {
    computeCounters.ioWindows++;
    return this.worker.request<FilterAtResult>({ id: 0, pass: this.pass, op: 'filterAt', read, lastSegment, out });
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (!this.worker.failed) void this.worker.request({ id: 0, pass: this.pass, op: 'end' }).catch(() => undefined);
  }
}

/** Passes per mode; fallbacks: passes that asked for the worker and ran inline because it could not start; ioWindows: windows the worker read itself (mapAt, filterAt). */
export const computeCounters = { workerPasses: 0, inlinePasses: 0, fallbacks: 0, ioWindows: 0 };

/** A pass's compute in `mode`; a worker that cannot start gives an inline one (counted in fallbacks). */
export async function beginCompute(mode: ComputeMode, setup: PassSetup): Promise<PassCompute> {
  if (mode === 'worker') {
    try {
      const worker = await sharedWorker();
      const pass = nextPass++;
      await worker.request({ id: 0, pass, op: 'begin', setup });
      computeCounters.workerPasses++;
      return new WorkerCompute(worker, pass);
    } catch {
      computeCounters.fallbacks++;
    }
  }
  computeCounters.inlinePasses++;
  return new InlineCompute(setup);
}
