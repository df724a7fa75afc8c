// The log cleaner's worker thread (cleaner-compute.ts starts it): answers
// each WorkerRequest with the WindowCleaner of its pass. map/filter: windows
// arrive as moved ArrayBuffers and go back the same way, with the kept
// batches as one buffer. mapAt/filterAt: the worker preads the window itself
// from an fd of the caller's (held open by the pass until the answer) into a
// buffer of its own, and writes the kept batches to the `.cleaned` file's fd;
// only counts go back. No log, no Io, no timer of its own.
import { readSync, writeSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { asBuffer, CLEANER_WORKER_NICE } from './cleaner-compute.js';
import type { CleanedOut, WindowRead, WorkerPolicy, WorkerReply, WorkerRequest } from './cleaner-compute.js';
import { WindowCleaner } from './window-cleaner.js';

const port = parentPort;
if (port === null) throw new Error('cleaner-worker.ts runs only as a worker thread');
// The lowest CPU priority, for this thread only (on Linux setpriority(PRIO_PROCESS, 0) sets the calling
// thread's nice value): on a machine with as many busy threads as cores, the event loop and the libuv
// threads doing the callers' I/O win over the cleaner, which gets what they leave. Raising a nice value
// needs no privilege; where it fails, the worker runs at the process's priority. (SCHED_IDLE, through
// the addon, was measured too: caller-append p99 while cleaning 1.29x idle against 1.34x with nice 19,
// medians of 11 invocations each, no difference the noise allows one to see; not kept.)
let policy: WorkerPolicy = 'default';
try {
  setPriority(CLEANER_WORKER_NICE);
  policy = 'nice';
} catch {
  // Not permitted or not supported here: the default priority.
}
const passes = new Map<number, WindowCleaner>();
/**
 * The window mapAt/filterAt read into, grown for a larger batch. Shared by every pass: a request reads,
 * walks and writes in one synchronous turn and keeps no view of it, and requests run one at a time.
 * Dropped at a pass's end when it grew past WINDOW_KEEP_BYTES.
 */
let window: Buffer = Buffer.alloc(0);
const WINDOW_KEEP_BYTES = 1024 * 1024;

/** A failed read or write of the worker's own: its errno goes back with the reply. */
class SyscallError extends Error {
  readonly errno: string;
  readonly syscall: string;
  readonly path: string;

  constructor(cause: unknown, syscall: string, path: string) {
    super(cause instanceof Error ? cause.message : String(cause));
    const code = (cause as { code?: unknown } | null)?.code;
    this.errno = typeof code === 'string' ? code : 'EIO';
    this.syscall = syscall;
    this.path = path;
  }
}

/** preads [position, position + length) into the window; fewer bytes only at the end of the file. */
function readWindow(read: WindowRead): number {
  if (window.length < read.windowBytes) window = Buffer.allocUnsafeSlow(read.windowBytes);
  let done = 0;
  try {
    while (done < read.length) {
      const n = readSync(read.fd, window, done, read.length - done, read.position + done);
      if (n === 0) break;
      done += n;
    }
  } catch (error) {
    throw new SyscallError(error, 'pread', read.path);
  }
  return done;
}

/** Writes the buffers in order at out.position; returns the bytes written. */
function writeOut(output: readonly Buffer[], out: CleanedOut): number {
  let at = out.position;
  try {
    for (const bytes of output) {
      let done = 0;
      while (done < bytes.length) done += writeSync(out.fd, bytes, done, bytes.length - done, at + done);
      at += bytes.length;
    }
  } catch (error) {
    throw new SyscallError(error, 'pwrite', out.path);
  }
  return at - out.position;
}

/** Test hook (a 'fault' request): after `after` more answers, exit (code 3) or answer nothing more, as a worker stuck in a loop. */
let fault: { kind: 'exit' | 'hang'; after: number } | null = null;
let hung = false;

function passOf(id: number): WindowCleaner {
  const cleaner = passes.get(id);
  if (cleaner === undefined) throw new Error(`no pass ${id} in the cleaner worker`);
  return cleaner;
}

/** The kept batches as one buffer of their own (moved back, not copied). */
function joined(output: readonly Buffer[]): Uint8Array {
  let bytes = 0;
  for (const b of output) bytes += b.length;
  const out = new Uint8Array(new ArrayBuffer(bytes));
  let at = 0;
  for (const b of output) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

function answer(request: WorkerRequest): { result: unknown; transfer: ArrayBuffer[] } {
  switch (request.op) {
    case 'begin':
      passes.set(request.pass, new WindowCleaner(request.setup));
      return { result: null, transfer: [] };
    case 'map': {
      const window = asBuffer(request.window);
      const r = passOf(request.pass).mapWindow(window, request.from, request.to, request.span, Number.POSITIVE_INFINITY);
      return { result: { ...r, window: request.window }, transfer: [request.window.buffer as ArrayBuffer] };
    }
    case 'startFilter':
      return { result: passOf(request.pass).startFilter(request.mapEndOffset), transfer: [] };
    case 'filter': {
      const window = asBuffer(request.window);
      const r = passOf(request.pass).filterWindow(window, request.from, request.to, request.span, { lastSegment: request.lastSegment, maxBytes: Number.POSITIVE_INFINITY });
      const output = joined(r.output);
      return { result: { ...r, output, window: request.window }, transfer: [request.window.buffer as ArrayBuffer, output.buffer as ArrayBuffer] };
    }
    case 'mapAt': {
      const read = readWindow(request.read);
      if (read < request.read.length) return { result: { consumed: 0, stopped: false, needBytes: 0, corrupt: null, mapEnd: 0, read }, transfer: [] };
      const r = passOf(request.pass).mapWindow(window, 0, read, { position: request.read.position, limit: request.read.limit }, Number.POSITIVE_INFINITY);
      return { result: { ...r, read }, transfer: [] };
    }
    case 'filterAt': {
      const read = readWindow(request.read);
      if (read < request.read.length) return { result: { consumed: 0, stopped: false, needBytes: 0, corrupt: null, removedRecords: 0, written: 0, read }, transfer: [] };
      const { output, ...r } = passOf(request.pass).filterWindow(window, 0, read, { position: request.read.position, limit: request.read.limit }, { lastSegment: request.lastSegment, maxBytes: Number.POSITIVE_INFINITY });
      const written = writeOut(output, request.out);
      return { result: { ...r, read, written }, transfer: [] };
    }
    case 'horizon':
      return { result: passOf(request.pass).earliestHorizonMs, transfer: [] };
    case 'end':
      passes.delete(request.pass);
      if (window.length > WINDOW_KEEP_BYTES) window = Buffer.alloc(0);
      return { result: null, transfer: [] };
    case 'fault':
      fault = { kind: request.kind, after: request.after };
      return { result: null, transfer: [] };
  }
}

port.on('message', (request: WorkerRequest) => {
  if (hung) return;
  if (fault !== null && fault.after-- <= 0) {
    if (fault.kind === 'exit') process.exit(3);
    hung = true;
    return;
  }
  let reply: WorkerReply;
  let transfer: ArrayBuffer[] = [];
  try {
    const answered = answer(request);
    reply = { id: request.id, ok: true, result: answered.result };
    transfer = answered.transfer;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    reply = error instanceof SyscallError
      ? { id: request.id, ok: false, error: message, errno: error.errno, syscall: error.syscall, path: error.path }
      : { id: request.id, ok: false, error: message };
  }
  port.postMessage(reply, transfer);
});
port.postMessage({ ready: policy });
