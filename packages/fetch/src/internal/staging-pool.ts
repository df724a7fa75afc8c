// StagingPool: reused buffers that file bytes are pread into (and small
// responses are coalesced into) before a write. A response holds at most two
// (double buffering: one being written while the next is read), so buffers
// in use are bounded by responses in flight; the pool keeps at most
// `maxIdlePerSize` idle buffers of each size. A buffer whose write did not
// complete (the peer failed) is never returned: the kernel or the socket
// queue may still read it.

import { assert } from '@seglog/common';

export class StagingPool {
  private readonly idle: Map<number, Buffer[]>;
  private readonly maxIdlePerSize: number;
  /** Buffers allocated because none of the size was idle. */
  allocations: number;

  constructor(maxIdlePerSize: number) {
    assert(Number.isInteger(maxIdlePerSize) && maxIdlePerSize >= 0, 'StagingPool: maxIdlePerSize must be an integer >= 0');
    this.idle = new Map();
    this.maxIdlePerSize = maxIdlePerSize;
    this.allocations = 0;
  }

  acquire(size: number): Buffer {
    const list = this.idle.get(size);
    const reused = list?.pop();
    if (reused !== undefined) return reused;
    this.allocations++;
    // Not from Node's shared 8 KiB slab: the buffer is ours to reuse.
    return Buffer.allocUnsafeSlow(size);
  }

  release(buffer: Buffer): void {
    let list = this.idle.get(buffer.length);
    if (list === undefined) {
      list = [];
      this.idle.set(buffer.length, list);
    }
    if (list.length < this.maxIdlePerSize) list.push(buffer);
  }

  idleCount(size: number): number {
    return this.idle.get(size)?.length ?? 0;
  }
}

/** The process-wide pool: 16 idle buffers per size (4 MiB at the 256 KiB default). */
export const stagingPool: StagingPool = new StagingPool(16);
