// MemoryPool: one byte budget for the request frames a broker holds, being
// received or received and not yet answered (Kafka's queued.max.request.bytes
// and its SimpleMemoryPool). A FrameReader reserves a frame's declared size
// from it as soon as the 4-byte size prefix is in (the size is already
// bounded by socket.request.max.bytes); the connection releases the frame's
// size once the request has been answered or dropped.
//
// Invariants:
// - Non-strict, as Kafka's broker pool: a reservation succeeds while any
//   budget is left, so the reserved total overshoots the capacity by less than
//   one frame, and a large frame is never starved by a stream of small ones.
// - A refused reservation leaves nothing reserved; the caller stops reading
//   (pauses its socket) and waits: waiters are woken in arrival order while
//   budget is left after a release, each once.
// - released ≤ reserved at all times (checked).

import { assert } from '@seglog/common';

export class MemoryPool {
  readonly capacityBytes: number;
  private availableBytes: number;
  private readonly waiters: Set<() => void>;

  constructor(capacityBytes: number) {
    assert(Number.isSafeInteger(capacityBytes) && capacityBytes > 0, 'MemoryPool: capacityBytes must be a positive integer');
    this.capacityBytes = capacityBytes;
    this.availableBytes = capacityBytes;
    this.waiters = new Set();
  }

  /** Bytes reserved and not yet released (may exceed the capacity by less than one frame). */
  get reservedBytes(): number {
    return this.capacityBytes - this.availableBytes;
  }

  get waiting(): number {
    return this.waiters.size;
  }

  /** Reserves `bytes` when any budget is left (0 bytes always succeed). */
  tryReserve(bytes: number): boolean {
    assert(Number.isSafeInteger(bytes) && bytes >= 0, 'MemoryPool.tryReserve: bytes must be a non-negative integer');
    if (bytes === 0) return true;
    if (this.availableBytes <= 0) return false;
    this.availableBytes -= bytes;
    return true;
  }

  release(bytes: number): void {
    assert(Number.isSafeInteger(bytes) && bytes >= 0, 'MemoryPool.release: bytes must be a non-negative integer');
    this.availableBytes += bytes;
    assert(this.availableBytes <= this.capacityBytes, 'MemoryPool.release: more released than reserved');
    for (const wake of this.waiters) {
      if (this.availableBytes <= 0) break;
      this.waiters.delete(wake);
      wake();
    }
  }

  /** Calls `wake` once, after a release leaves budget. */
  waitForMemory(wake: () => void): void {
    this.waiters.add(wake);
  }

  cancelWait(wake: () => void): void {
    this.waiters.delete(wake);
  }
}
