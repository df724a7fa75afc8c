// Where the streaming accumulator's merges run (franz-go merges on the sink
// goroutine, outside the buffer lock, so producing never waits on
// compression; here the equivalent is a worker thread): a process-wide pool
// of `size` merge workers (merge-worker.ts), one job at a time each, jobs
// queued in order. Size 0 runs each job on the calling thread in a later
// macrotask (setImmediate): the same asynchronous contract, no parallelism.
//
// Workers start on the first job (or `warm()`) and stay for later runs; an
// idle worker is unref'd, so it never keeps the process alive. A worker that
// fails (an 'error' event, or an exit) fails its job with a MergeResult whose
// `failure` says so (the accumulator demotes; no record is lost) and is
// replaced on the next job. A worker that has not answered its job within
// the pool's deadline (counted from when the worker has loaded) is taken as hung: it is terminated and the job fails
// the same way. From source (this file is .ts: tsx, the
// 'source' export condition) the worker registers tsx first; from dist it
// loads merge-worker.js directly.

import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startSiblingWorker } from '@seglog/common';
import type { MergeJob, MergeResult } from './merge-job.js';
import { failedMerge, runMergeJob } from './merge-job.js';

/** How long a merge job may take before its worker is taken as hung (a 1 MiB zstd merge takes milliseconds). */
export const DEFAULT_MERGE_DEADLINE_MS = 10_000;

/** Merge workers by default: the cores beyond the producer's own thread, 1..4. */
export function defaultMergeWorkers(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

interface Pending {
  readonly job: MergeJob;
  readonly resolve: (result: MergeResult) => void;
}

class MergeWorker {
  readonly worker: Worker;
  job: Pending | null;
  /** The running job's deadline (null when idle). */
  deadline: NodeJS.Timeout | null;
  readonly ready: Promise<void>;

  constructor(onResult: (w: MergeWorker, result: MergeResult) => void, onGone: (w: MergeWorker, why: string) => void) {
    this.job = null;
    this.deadline = null;
    this.worker = startWorker();
    this.worker.unref();
    let markReady: () => void = () => undefined;
    this.ready = new Promise<void>((resolve) => (markReady = resolve));
    this.worker.on('message', (message: MergeResult | 'ready') => {
      if (message === 'ready') markReady();
      else onResult(this, message);
    });
    this.worker.on('error', (error: Error) => {
      markReady();
      onGone(this, `merge worker failed: ${error.message}`);
    });
    this.worker.on('exit', (code: number) => {
      markReady();
      onGone(this, `merge worker exited with code ${code}`);
    });
  }
}

function startWorker(): Worker {
  return startSiblingWorker(import.meta.url, 'merge-worker');
}

/** The job's own buffers move to the worker instead of being copied. */
function transferable(job: MergeJob): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  for (const view of [job.values, job.timestamps]) {
    const owner = view.buffer;
    if (owner instanceof ArrayBuffer && view.byteOffset === 0 && view.byteLength === owner.byteLength) out.push(owner);
  }
  return out;
}

export class MergePool {
  private static readonly pools = new Map<string, MergePool>();
  readonly size: number;
  /** A job not answered within this many ms fails and its worker is terminated. */
  readonly deadlineMs: number;
  private readonly workers: MergeWorker[];
  private readonly queue: Pending[];
  private nextId: number;

  private constructor(size: number, deadlineMs: number) {
    this.size = size;
    this.deadlineMs = deadlineMs;
    this.workers = [];
    this.queue = [];
    this.nextId = 1;
  }

  /** The process-wide pool of `size` workers whose jobs must answer within `deadlineMs`. */
  static shared(size: number, deadlineMs: number = DEFAULT_MERGE_DEADLINE_MS): MergePool {
    const key = `${size}/${deadlineMs}`;
    let pool = MergePool.pools.get(key);
    if (pool === undefined) {
      pool = new MergePool(size, deadlineMs);
      MergePool.pools.set(key, pool);
    }
    return pool;
  }

  /** Job ids, unique in the process. */
  newJobId(): number {
    return this.nextId++;
  }

  /** Starts every worker and resolves when each has loaded (a benchmark's untimed setup). */
  async warm(): Promise<void> {
    while (this.workers.length < this.size) this.spawn();
    await Promise.all(this.workers.map((w) => w.ready));
  }

  /** Runs `job`; never rejects: a failed worker gives a result with `failure`. */
  run(job: MergeJob): Promise<MergeResult> {
    return new Promise<MergeResult>((resolve) => {
      if (this.size === 0) {
        // The same contract on this thread: a 'hang' job never answers and its deadline fails it.
        const deadline = setTimeout(() => resolve(failedMerge(job.id, `merge hung: no answer in ${this.deadlineMs} ms (in-thread)`)), this.deadlineMs);
        setImmediate(() => {
          if (job.fault === 'hang') return;
          clearTimeout(deadline);
          resolve(job.fault === 'exit' ? failedMerge(job.id, 'merge exited (in-thread)') : runMergeJob(job));
        });
        return;
      }
      this.queue.push({ job, resolve });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let idle = this.workers.find((w) => w.job === null);
      if (idle === undefined && this.workers.length < this.size) {
        try {
          idle = this.spawn();
        } catch (error) {
          // No worker can start here (e.g. tsx not resolvable from the source tree): every queued job fails, merging demotes.
          const why = `merge worker did not start: ${error instanceof Error ? error.message : String(error)}`;
          for (const pending of this.queue.splice(0)) pending.resolve(failedMerge(pending.job.id, why));
          return;
        }
      }
      if (idle === undefined) return;
      const pending = this.queue.shift() as Pending;
      idle.job = pending;
      idle.worker.ref(); // a job in flight keeps the process alive until it settles
      // The deadline counts from when the worker has loaded (a fresh worker's start-up is not the job's time).
      const w = idle;
      void w.ready.then(() => {
        if (w.job === pending && w.deadline === null) w.deadline = setTimeout(() => this.onGone(w, `merge worker hung: no answer in ${this.deadlineMs} ms`), this.deadlineMs);
      });
      idle.worker.postMessage(pending.job, transferable(pending.job));
    }
  }

  private spawn(): MergeWorker {
    const w = new MergeWorker((from, result) => this.onResult(from, result), (from, why) => this.onGone(from, why));
    this.workers.push(w);
    return w;
  }

  private onResult(w: MergeWorker, result: MergeResult): void {
    const pending = w.job;
    this.settle(w);
    if (pending !== null) pending.resolve(result.id === pending.job.id ? result : failedMerge(pending.job.id, 'merge worker answered another job'));
    this.dispatch();
  }

  /** The worker's job is over (answered, failed or timed out): it is idle and no longer keeps the process alive. */
  private settle(w: MergeWorker): void {
    if (w.deadline !== null) clearTimeout(w.deadline);
    w.deadline = null;
    w.job = null;
    w.worker.unref();
  }

  private onGone(w: MergeWorker, why: string): void {
    const at = this.workers.indexOf(w);
    if (at < 0) return; // 'error' and 'exit' both come
    this.workers.splice(at, 1);
    void w.worker.terminate();
    const pending = w.job;
    this.settle(w);
    if (pending !== null) pending.resolve(failedMerge(pending.job.id, why));
    this.dispatch();
  }
}

/** Starts the process-wide pool of `size` merge workers and waits until they have loaded (a benchmark's untimed setup). */
export function warmMergeWorkers(size: number = defaultMergeWorkers(), deadlineMs: number = DEFAULT_MERGE_DEADLINE_MS): Promise<void> {
  return MergePool.shared(size, deadlineMs).warm();
}
