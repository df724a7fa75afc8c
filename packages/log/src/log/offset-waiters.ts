// OffsetWaiters: promises waiting for a log position (written, durable) to
// pass an offset. Kept as parallel arrays sorted by offset with a moving
// head, so releasing a prefix is a loop and adding in increasing order (the
// common case) is a push. Callers waiting for the same offset share one
// promise; there is one entry per waited batch, never per record.

import { assert } from '@seglog/common';

type Resolve = () => void;
type Reject = (error: unknown) => void;

export class OffsetWaiters {
  private readonly offsets: number[];
  private readonly promises: Promise<void>[];
  private readonly resolves: Resolve[];
  private readonly rejects: Reject[];
  private head: number;
  private pendingResolve: Resolve | null;
  private pendingReject: Reject | null;
  private readonly executor: (resolve: Resolve, reject: Reject) => void;

  constructor() {
    this.offsets = [];
    this.promises = [];
    this.resolves = [];
    this.rejects = [];
    this.head = 0;
    this.pendingResolve = null;
    this.pendingReject = null;
    // One executor for every promise: it parks the resolvers on `this`.
    this.executor = (resolve, reject) => {
      this.pendingResolve = resolve;
      this.pendingReject = reject;
    };
  }

  get size(): number {
    return this.offsets.length - this.head;
  }

  /** The smallest offset waited for, or undefined. */
  minOffset(): number | undefined {
    return this.head < this.offsets.length ? this.offsets[this.head] : undefined;
  }

  /** A promise resolved by releaseBelow(p) for some p > offset. */
  add(offset: number): Promise<void> {
    assert(Number.isSafeInteger(offset), 'OffsetWaiters.add: offset must be a safe integer');
    const last = this.offsets.length - 1;
    if (last >= this.head && this.offsets[last] === offset) return this.promises[last] as Promise<void>;
    const promise = new Promise<void>(this.executor);
    const resolve = this.pendingResolve as Resolve;
    const reject = this.pendingReject as Reject;
    let at = this.offsets.length;
    if (last >= this.head && (this.offsets[last] as number) > offset) at = this.insertionPoint(offset);
    if (at === this.offsets.length) {
      this.offsets.push(offset);
      this.promises.push(promise);
      this.resolves.push(resolve);
      this.rejects.push(reject);
    } else {
      this.offsets.splice(at, 0, offset);
      this.promises.splice(at, 0, promise);
      this.resolves.splice(at, 0, resolve);
      this.rejects.splice(at, 0, reject);
    }
    return promise;
  }

  /** Resolves every waiter with offset < position. */
  releaseBelow(position: number): void {
    let i = this.head;
    while (i < this.offsets.length && (this.offsets[i] as number) < position) {
      (this.resolves[i] as Resolve)();
      i++;
    }
    this.dropUntil(i);
  }

  /** Rejects every waiter. */
  rejectAll(error: unknown): void {
    for (let i = this.head; i < this.offsets.length; i++) (this.rejects[i] as Reject)(error);
    this.dropUntil(this.offsets.length);
  }

  private insertionPoint(offset: number): number {
    let lo = this.head;
    let hi = this.offsets.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.offsets[mid] as number) <= offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private dropUntil(index: number): void {
    this.head = index;
    if (this.head === this.offsets.length) {
      this.offsets.length = 0;
      this.promises.length = 0;
      this.resolves.length = 0;
      this.rejects.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.offsets.length) {
      this.offsets.splice(0, this.head);
      this.promises.splice(0, this.head);
      this.resolves.splice(0, this.head);
      this.rejects.splice(0, this.head);
      this.head = 0;
    }
  }
}
