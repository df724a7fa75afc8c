// The log cleaner's worker thread (cleaner-compute.ts starts it): answers
// each WorkerRequest with the WindowCleaner of its pass. Windows arrive as
// moved ArrayBuffers and go back the same way, with the kept batches as one
// buffer. Nothing else is shared with the caller's thread: no file, no log.
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { asBuffer, CLEANER_WORKER_NICE } from './cleaner-compute.js';
import type { WorkerReply, WorkerRequest } from './cleaner-compute.js';
import { WindowCleaner } from './window-cleaner.js';

const port = parentPort;
if (port === null) throw new Error('cleaner-worker.ts runs only as a worker thread');
// The lowest CPU priority, for this thread only (on Linux setpriority(PRIO_PROCESS, 0) sets the calling
// thread's nice value): on a machine with as many busy threads as cores, the event loop and the libuv
// threads doing the callers' I/O win over the cleaner, which gets what they leave. Raising a nice value
// needs no privilege; where it fails, the worker runs at the process's priority.
try {
  setPriority(CLEANER_WORKER_NICE);
} catch {
  // Not permitted or not supported here: the default priority.
}
const passes = new Map<number, WindowCleaner>();
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
    case 'horizon':
      return { result: passOf(request.pass).earliestHorizonMs, transfer: [] };
    case 'end':
      passes.delete(request.pass);
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
    reply = { id: request.id, ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply, transfer);
});
port.postMessage('ready');
