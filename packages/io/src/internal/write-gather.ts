// WriteGather: the buffered writes NodeIo's handles issue in one turn of the
// event loop, to any files, go to the threadpool as one job (the addon's
// pwritevMany) instead of one job each.
//
// Why (issue 18): every node:fs write is a libuv threadpool job, a worker
// wake-up and an event-loop completion. A broker's produce request appends
// to many partitions at once; with a job per write, their dispatch was the
// storing broker's largest item in the profile, and on a 2-vCPU VM the woken
// worker preempts the event loop.
//
// Rules:
// - add() queues a write and, for the first one of a turn, schedules flush()
//   as a microtask: the writes issued by the same synchronous code and the
//   microtasks queued before the flush share the job.
// - A turn with a single write issues it alone (node:fs, the usual path);
//   more go in jobs of at most MAX_PER_JOB writes (several jobs run on
//   several threads).
// - Each write ends by itself: its bytes all written, or its own error (an
//   IoError as node:fs's would map); one failing write never fails another.
// - Only buffered (non-O_DIRECT) files are gathered: a job runs its writes in
//   turn, which would serialise O_DIRECT writes that the disk can overlap.
// - The caller holds its handle's in-flight count from add() until the
//   write's promise settles (close() waits for it), so the fd a job writes is
//   never closed or reused under it (the addon does not dup() it).

import type { ManyWrite } from '@seglog/native';

/** A write's outcome: null, or the IoError to reject with (mapped by the caller's `fail`). */
type Settle = (error: unknown) => void;

/** What a gathered write needs of its handle. */
export interface GatherFile {
  readonly fd: number;
}

interface Pending<F extends GatherFile> {
  readonly file: F;
  readonly buffers: readonly Uint8Array[];
  readonly position: number;
  readonly settle: Settle;
}

/** Writes per pwritevMany job. */
export const MAX_PER_JOB = 64;

export class WriteGather<F extends GatherFile> {
  private readonly many: (writes: readonly ManyWrite[]) => Promise<unknown[]>;
  private readonly alone: (file: F, buffers: readonly Uint8Array[], position: number, settle: Settle) => void;
  private pending: Pending<F>[];
  private readonly flushNow: () => void;
  /** Counts jobs of two or more writes, and the writes in them (NodeIo's stats). */
  private readonly counters: { gatherJobs: number; gatheredWrites: number };

  /**
   * `many`: the addon's pwritevMany. `alone`: issues one write the usual way
   * and calls settle(null | error) when it ends.
   */
  constructor(many: (writes: readonly ManyWrite[]) => Promise<unknown[]>,
    alone: (file: F, buffers: readonly Uint8Array[], position: number, settle: Settle) => void,
    counters: { gatherJobs: number; gatheredWrites: number }) {
    this.many = many;
    this.alone = alone;
    this.pending = [];
    this.flushNow = () => this.flush();
    this.counters = counters;
  }

  /** Queues one write; `settle` gets null when every byte is written, else the write's native error. */
  add(file: F, buffers: readonly Uint8Array[], position: number, settle: Settle): void {
    if (this.pending.length === 0) queueMicrotask(this.flushNow);
    this.pending.push({ file, buffers, position, settle });
  }

  private flush(): void {
    const all = this.pending;
    this.pending = [];
    for (let from = 0; from < all.length; from += MAX_PER_JOB) {
      const part = all.slice(from, from + MAX_PER_JOB);
      if (part.length === 1) {
        const only = part[0]!;
        this.alone(only.file, only.buffers, only.position, only.settle);
        continue;
      }
      this.counters.gatherJobs++;
      this.counters.gatheredWrites += part.length;
      this.many(part.map((p) => ({ fd: p.file.fd, position: p.position, buffers: p.buffers }))).then(
        (slots) => {
          for (let i = 0; i < part.length; i++) part[i]!.settle(slots[i] ?? null);
        },
        // pwritevMany never rejects for an operating error; anything else (a TypeError) fails every write.
        (error: unknown) => {
          for (const p of part) p.settle(error);
        },
      );
    }
  }
}
