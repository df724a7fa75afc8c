// TailCache: the newest bytes of one log's active segment, in memory, so
// followers and tailing consumers read them without touching the file
// (ARCHITECTURE.md "Tail cache"; Redpanda's batch cache, reference §1.5).
//
// Layout: a contiguous window [start, end) of segment positions held in
// chunks of `chunkBytes`, oldest first; chunk i+1 starts where chunk i's
// valid bytes end. Appends copy into the newest chunk (one copy per appended
// byte, bounded memory, no reference to the producer's request buffer).
//
// Invariants:
// - Bytes at or after `writtenPosition` (not yet in the file) are pinned:
//   eviction never drops a chunk holding one, so a reader of unwritten bytes
//   always hits.
// - A hit returns Buffer views of chunk memory, never a copy.
// - Memory handed to a reader is never written again: eviction and roll drop
//   chunks (a dropped chunk is recycled only if no reader ever got a view of
//   it, otherwise it is left to the GC), and a truncation that cuts below
//   bytes already lent seals the chunk so later appends go to a new chunk.
//   So a slice stays valid (same bytes) after truncation, eviction or roll;
//   no reference counting or release call is needed on the read path.
// - Limits: per cache `maxBytes` of chunk memory, enforced on append and
//   markWritten by dropping the oldest unpinned chunks (reference drops, no I/O, O(1) each,
//   so not worth a pool hop); across caches a TailCacheBudget whose reclaim()
//   asks the least-recently-used caches to shrink (lru-cache), run inline or
//   scheduled by its owner (LogManager: on the pool, Priority.eviction).
//   Pinned bytes may exceed both limits; they are bounded by the writer's
//   queue.
// - truncate(position) invalidates exactly the bytes at or after position;
//   roll(position) drops everything (the next segment starts a new window).

import { assert } from '@seglog/common';
import { LRUCache } from 'lru-cache';

export interface TailCacheOptions {
  /** Chunk memory this cache may hold (pinned bytes excepted). */
  readonly maxBytes: number;
  /** Bytes per chunk. Default 256 KiB. */
  readonly chunkBytes?: number;
  /** Never-lent chunks kept for reuse after eviction. Default 2. */
  readonly spareChunksMax?: number;
  /** Global budget shared by every log of a LogManager. */
  readonly budget?: TailCacheBudget;
}

class CacheChunk {
  readonly buffer: Buffer;
  /** Segment position of buffer[0]. */
  start: number;
  /** Valid bytes from buffer[0]. */
  used: number;
  /** End (buffer offset) of the furthest view handed to a reader; 0 = never lent. */
  lentEnd: number;
  /** No more appends: a truncation cut below lent bytes. */
  sealed: boolean;

  constructor(buffer: Buffer, start: number) {
    this.buffer = buffer;
    this.start = start;
    this.used = 0;
    this.lentEnd = 0;
    this.sealed = false;
  }
}

export class TailCache {
  readonly maxBytes: number;
  readonly chunkBytes: number;
  private readonly spareChunksMax: number;
  private readonly budget: TailCacheBudget | null;
  private readonly chunks: CacheChunk[];
  private readonly spares: Buffer[];
  private startValue: number;
  private endValue: number;
  private writtenValue: number;
  private closed: boolean;
  hits: number;
  misses: number;
  /** Chunks dropped by eviction (per-log limit or budget), and their memory. */
  evictions: number;
  evictedBytes: number;

  constructor(options: TailCacheOptions) {
    this.chunkBytes = options.chunkBytes ?? 256 * 1024;
    this.maxBytes = options.maxBytes;
    this.spareChunksMax = options.spareChunksMax ?? 2;
    assert(Number.isSafeInteger(this.chunkBytes) && this.chunkBytes > 0, 'TailCache: chunkBytes must be positive');
    assert(Number.isSafeInteger(this.maxBytes) && this.maxBytes >= 0, 'TailCache: maxBytes must be a non-negative integer');
    assert(Number.isSafeInteger(this.spareChunksMax) && this.spareChunksMax >= 0, 'TailCache: spareChunksMax must be a non-negative integer');
    this.budget = options.budget ?? null;
    this.chunks = [];
    this.spares = [];
    this.startValue = 0;
    this.endValue = 0;
    this.writtenValue = 0;
    this.closed = false;
    this.hits = 0;
    this.misses = 0;
    this.evictions = 0;
    this.evictedBytes = 0;
    this.budget?.register(this);
  }

  /** First cached position. */
  get start(): number {
    return this.startValue;
  }

  /** Position after the last cached byte. */
  get end(): number {
    return this.endValue;
  }

  /** Bytes below this are in the file (unpinned). */
  get writtenPosition(): number {
    return this.writtenValue;
  }

  /** Cached data bytes (end - start). */
  get bytes(): number {
    return this.endValue - this.startValue;
  }

  /** Chunk memory held (what the limits count). */
  get memoryBytes(): number {
    return this.chunks.length * this.chunkBytes;
  }

  /** Whether every byte from `position` to the end is cached (a read there needs no file). */
  covers(position: number): boolean {
    return position >= this.startValue && position <= this.endValue;
  }

  /**
   * Caches bytes appended at `position` (the cache's end; any position when
   * the cache is empty). They stay pinned until markWritten passes them.
   */
  append(position: number, bytes: Uint8Array): void {
    assert(!this.closed, 'TailCache.append: closed');
    if (this.chunks.length === 0) {
      this.startValue = position;
      this.endValue = position;
    }
    assert(position === this.endValue, 'TailCache.append: position must be the cache end');
    let from = 0;
    let added = 0;
    while (from < bytes.length) {
      let last = this.chunks[this.chunks.length - 1];
      if (last === undefined || last.sealed || last.used === this.chunkBytes) {
        last = this.addChunk(this.endValue);
        added++;
      }
      const n = Math.min(this.chunkBytes - last.used, bytes.length - from);
      last.buffer.set(bytes.subarray(from, from + n), last.used);
      last.used += n;
      this.endValue += n;
      from += n;
    }
    // Charged once the bytes are in place (and pinned), so an inline reclaim cannot drop them.
    if (this.budget !== null) {
      this.budget.touch(this);
      if (added > 0) this.budget.charge(added * this.chunkBytes);
    }
    if (this.memoryBytes > this.maxBytes) this.evict(this.memoryBytes - this.maxBytes);
  }

  /** Bytes below `position` are in the file: they may be evicted. */
  markWritten(position: number): void {
    if (position <= this.writtenValue) return;
    this.writtenValue = position;
    // Bytes just unpinned may be over the per-log limit (append could not drop them).
    if (this.memoryBytes > this.maxBytes) this.evict(this.memoryBytes - this.maxBytes);
  }

  /**
   * On a hit (the whole range cached) pushes views of [position,
   * position+length) to `out` (one per chunk crossed) and returns true; on a
   * miss pushes nothing and returns false.
   */
  read(position: number, length: number, out: Buffer[]): boolean {
    assert(Number.isSafeInteger(length) && length >= 0, 'TailCache.read: length must be a non-negative integer');
    if (position < this.startValue || position + length > this.endValue || this.chunks.length === 0) {
      this.misses++;
      return false;
    }
    let index = this.chunkIndex(position);
    let at = position;
    const end = position + length;
    while (at < end) {
      const chunk = this.chunks[index] as CacheChunk;
      const offset = at - chunk.start;
      const n = Math.min(chunk.used - offset, end - at);
      out.push(chunk.buffer.subarray(offset, offset + n));
      if (offset + n > chunk.lentEnd) chunk.lentEnd = offset + n;
      at += n;
      index++;
    }
    this.hits++;
    this.budget?.touch(this);
    return true;
  }

  /**
   * Copies [position, position+length) into `target` (at 0) without lending
   * chunk memory (batch-header scans); false, copying nothing, unless the
   * whole range is cached. Counts neither a hit nor a miss.
   */
  peek(position: number, length: number, target: Buffer): boolean {
    assert(length <= target.length, 'TailCache.peek: target too small');
    if (position < this.startValue || position + length > this.endValue || this.chunks.length === 0) return false;
    let index = this.chunkIndex(position);
    let at = position;
    let out = 0;
    while (out < length) {
      const chunk = this.chunks[index] as CacheChunk;
      const offset = at - chunk.start;
      const n = Math.min(chunk.used - offset, length - out);
      chunk.buffer.copy(target, out, offset, offset + n);
      out += n;
      at += n;
      index++;
    }
    return true;
  }

  /**
   * Drops the oldest chunks whose bytes are all written until at least
   * `bytes` of chunk memory is freed or none is evictable. Returns the memory
   * freed. Pool work when asked by the budget.
   */
  evict(bytes: number): number {
    let freed = 0;
    while (freed < bytes && this.chunks.length > 0) {
      const first = this.chunks[0] as CacheChunk;
      if (first.start + first.used > this.writtenValue) break;
      this.chunks.shift();
      this.dropChunk(first);
      freed += this.chunkBytes;
      this.evictions++;
      this.evictedBytes += this.chunkBytes;
      const next = this.chunks[0];
      this.startValue = next === undefined ? this.endValue : next.start;
    }
    return freed;
  }

  /** Invalidates exactly the bytes at or after `position` (log truncation). */
  truncate(position: number): void {
    if (position >= this.endValue) return;
    if (this.writtenValue > position) this.writtenValue = position;
    if (position <= this.startValue) {
      this.dropAll(position);
      return;
    }
    while (this.chunks.length > 0) {
      const last = this.chunks[this.chunks.length - 1] as CacheChunk;
      if (last.start < position) break;
      this.chunks.pop();
      this.dropChunk(last);
    }
    const last = this.chunks[this.chunks.length - 1] as CacheChunk;
    last.used = position - last.start;
    if (last.lentEnd > last.used) last.sealed = true;
    this.endValue = position;
  }

  /** Drops everything; the next segment's window starts at `position` (its bytes below it are written). */
  roll(position = 0): void {
    this.dropAll(position);
    this.writtenValue = position;
  }

  /** Drops everything and leaves the budget. */
  close(): void {
    if (this.closed) return;
    this.dropAll(this.endValue);
    this.spares.length = 0;
    this.closed = true;
    this.budget?.unregister(this);
  }

  private dropAll(position: number): void {
    while (this.chunks.length > 0) this.dropChunk(this.chunks.pop() as CacheChunk);
    this.startValue = position;
    this.endValue = position;
  }

  private addChunk(start: number): CacheChunk {
    const buffer = this.spares.pop() ?? Buffer.allocUnsafeSlow(this.chunkBytes);
    const chunk = new CacheChunk(buffer, start);
    this.chunks.push(chunk);
    return chunk;
  }

  private dropChunk(chunk: CacheChunk): void {
    this.budget?.charge(-this.chunkBytes);
    if (chunk.lentEnd === 0 && this.spares.length < this.spareChunksMax) this.spares.push(chunk.buffer);
  }

  /** Index of the chunk holding `position` (start ≤ position < end). */
  private chunkIndex(position: number): number {
    let low = 0;
    let high = this.chunks.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >>> 1;
      if ((this.chunks[mid] as CacheChunk).start <= position) low = mid;
      else high = mid - 1;
    }
    return low;
  }
}

export interface TailCacheBudgetOptions {
  /** Chunk memory all caches together may hold (pinned bytes excepted). */
  readonly maxBytes: number;
  /** Caches that may register. Default 100 000. */
  readonly maxLogs?: number;
  /**
   * Called once when the total passes maxBytes (until reclaim() runs): the
   * owner schedules reclaim() (on the pool). Without it reclaim runs inline.
   */
  readonly onOverBudget?: () => void;
}

/** The global tail-cache budget across logs, LRU between logs. */
export class TailCacheBudget {
  readonly maxBytes: number;
  private readonly lru: LRUCache<TailCache, TailCache>;
  private readonly maxLogs: number;
  private readonly onOverBudget: (() => void) | null;
  private bytesValue: number;
  private scheduled: boolean;
  /** reclaim() runs and the memory they freed. */
  reclaims: number;
  reclaimedBytes: number;

  constructor(options: TailCacheBudgetOptions) {
    this.maxBytes = options.maxBytes;
    this.maxLogs = options.maxLogs ?? 100_000;
    assert(Number.isSafeInteger(this.maxBytes) && this.maxBytes >= 0, 'TailCacheBudget: maxBytes must be a non-negative integer');
    assert(Number.isSafeInteger(this.maxLogs) && this.maxLogs > 0, 'TailCacheBudget: maxLogs must be positive');
    this.lru = new LRUCache<TailCache, TailCache>({ max: this.maxLogs });
    this.onOverBudget = options.onOverBudget ?? null;
    this.bytesValue = 0;
    this.scheduled = false;
    this.reclaims = 0;
    this.reclaimedBytes = 0;
  }

  /** Chunk memory held by all caches. */
  get bytes(): number {
    return this.bytesValue;
  }

  get logs(): number {
    return this.lru.size;
  }

  register(cache: TailCache): void {
    assert(!this.lru.has(cache), 'TailCacheBudget.register: already registered');
    assert(this.lru.size < this.maxLogs, 'TailCacheBudget.register: maxLogs reached');
    this.lru.set(cache, cache);
  }

  unregister(cache: TailCache): void {
    this.lru.delete(cache);
  }

  /** Marks `cache` most recently used. */
  touch(cache: TailCache): void {
    this.lru.get(cache);
  }

  /** Accounts chunk memory taken (positive) or given back (negative). */
  charge(delta: number): void {
    this.bytesValue += delta;
    assert(this.bytesValue >= 0, 'TailCacheBudget: negative total');
    if (delta <= 0 || this.bytesValue <= this.maxBytes || this.scheduled) return;
    if (this.onOverBudget === null) {
      this.reclaim();
      return;
    }
    this.scheduled = true;
    this.onOverBudget();
  }

  /** Asks the least-recently-used caches to shrink until the total fits. Returns the memory freed. */
  reclaim(): number {
    this.scheduled = false;
    this.reclaims++;
    let freed = 0;
    for (const cache of this.lru.rkeys()) {
      if (this.bytesValue <= this.maxBytes) break;
      freed += cache.evict(this.bytesValue - this.maxBytes);
    }
    this.reclaimedBytes += freed;
    return freed;
  }
}
