// ChunkRecycler: tail-cache chunk buffers that no reader ever saw, kept for
// the next cache that needs one instead of being left to the GC.
//
// Why (issue 18): a log appending 1 MiB batches fills four 256 KiB chunks
// per batch and evicts as many once they are written. With only a cache's
// own two spares, half of its chunks were fresh ArrayBuffers: first-touch
// page faults inside the copy, and external memory that drives V8's GC.
// Direct appends of 1 MiB batches spent ~30 % less CPU with the chunks
// reused (bench/hotpath-append-style loop, see the bench README).
//
// Rules:
// - Only never-lent chunks come here (TailCache.dropChunk's rule): no reader
//   holds a view of their memory, so rewriting it is invisible.
// - Bounded: at most `maxBytes` of buffers are kept (all chunk sizes
//   together); give() beyond it drops the buffer (the GC takes it).
// - take(bytes) returns a buffer of exactly `bytes`, most recently given
//   first (the warmest memory), or null.
// - Not counted in a TailCacheBudget: a recycled chunk holds no log's bytes.
//   The process-wide default keeps at most DEFAULT_RECYCLER_BYTES.

import { assert } from '@seglog/common';

/** What the process-wide recycler keeps at most. */
export const DEFAULT_RECYCLER_BYTES = 16 * 1024 * 1024;

export class ChunkRecycler {
  readonly maxBytes: number;
  private readonly bySize: Map<number, Buffer[]>;
  private held: number;
  /** Buffers handed out again, and buffers dropped because the recycler was full. */
  reused: number;
  dropped: number;

  constructor(maxBytes: number) {
    assert(Number.isSafeInteger(maxBytes) && maxBytes >= 0, 'ChunkRecycler: maxBytes must be a non-negative integer');
    this.maxBytes = maxBytes;
    this.bySize = new Map();
    this.held = 0;
    this.reused = 0;
    this.dropped = 0;
  }

  /** Bytes of buffers kept now. */
  get heldBytes(): number {
    return this.held;
  }

  take(bytes: number): Buffer | null {
    const list = this.bySize.get(bytes);
    const buffer = list?.pop();
    if (buffer === undefined) return null;
    this.held -= bytes;
    this.reused++;
    return buffer;
  }

  /** Keeps `buffer` (no reader may hold a view of it) unless that would exceed maxBytes. */
  give(buffer: Buffer): void {
    if (this.held + buffer.length > this.maxBytes) {
      this.dropped++;
      return;
    }
    let list = this.bySize.get(buffer.length);
    if (list === undefined) {
      list = [];
      this.bySize.set(buffer.length, list);
    }
    list.push(buffer);
    this.held += buffer.length;
  }
}

/** The recycler every TailCache uses unless given another (or null). */
export const sharedChunkRecycler = new ChunkRecycler(DEFAULT_RECYCLER_BYTES);
