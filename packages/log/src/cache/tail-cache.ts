// TailCache: the newest bytes of one log's active segment, in memory, so
// followers and tailing consumers read them without touching the file
// (ARCHITECTURE.md "Tail cache"; Redpanda's batch cache, reference §1.5).
//
// Layout: a contiguous window [start, end) of segment positions: first
// chunks of `chunkBytes` (copies), oldest first, chunk i+1 starting where
// chunk i's valid bytes end; then the pending pieces [pendingStart, end):
// appended buffers themselves, by reference, all unwritten.
//
// An append copies its bytes into the newest chunk at once (hot in the CPU
// cache) while the writer is close behind: at most maxBytes unwritten,
// counting them, so they are still in the window when written. Further
// behind (a buffered writer runs up to its 64 MiB queue behind a caller that
// does not yield), a copy would be wasted: the bytes leave the window as soon
// as they are written. Then, when the caller says the buffer stays alive and
// unchanged until written anyway (`byReference`: the buffered writer queues
// the same buffer, so this costs no memory; a direct writer copies into
// staging and lets go, so it does not), and after any piece (the window
// stays in order), the append records the buffer as a pending piece. markWritten gives the reference up: a written piece is
// dropped if the window must shrink anyway, else copied into the newest
// chunk. A read or truncation that needs pending bytes as chunk memory
// copies them first. So a byte is copied at most once, and no reference to
// a caller's buffer outlives its write.
//
// Measured (bench/hotpath-append.ts, issue 18): copying every appended byte
// was 9.7% of the buffered append loop's busy samples; behind a 64 MiB
// writer queue nothing of it is copied now. Copying every byte at
// markWritten instead (cold, and holding buffers the direct writer had let
// go) cost the direct loop 7.5% and more GC: hence the copy at append while
// the writer keeps up, and always for direct writers.
//
// Invariants:
// - Bytes at or after `writtenPosition` (not yet in the file) are pinned:
//   eviction never drops a chunk or piece holding one, so a reader of
//   unwritten bytes always hits.
// - Every pending piece starts at or after `writtenPosition` (a piece the
//   written position reaches is dropped or copied in that markWritten).
//   Pending bytes count in memoryBytes and in the budget, byte for byte.
// - A hit returns Buffer views of chunk memory, never a copy, and never a
//   view of a pending piece (the caller's buffer).
// - Memory handed to a reader is never written again: eviction and roll drop
//   chunks (a dropped chunk is recycled, as this cache's spare or through the
//   shared ChunkRecycler, only if no reader ever got a view of it, otherwise
//   it is left to the GC), and a truncation that cuts below
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
import { sharedChunkRecycler, type ChunkRecycler } from './chunk-recycler.js';

export interface TailCacheOptions {
  /** Chunk memory this cache may hold (pinned bytes excepted). */
  readonly maxBytes: number;
  /** Bytes per chunk. Default 256 KiB. */
  readonly chunkBytes?: number;
  /** Never-lent chunks this cache keeps for reuse after eviction. Default 2. */
  readonly spareChunksMax?: number;
  /** Where never-lent chunks beyond the spares go, and new chunks come from first. Default the process-wide one; null: none. */
  readonly recycler?: ChunkRecycler | null;
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
  private readonly recycler: ChunkRecycler | null;
  /** Appended buffers not copied yet, oldest first, from pendingHead on; all unwritten. */
  private readonly pending: (Uint8Array | undefined)[];
  private pendingHead: number;
  /** Segment position of pending[pendingHead] (= end when nothing is pending). */
  private pendingStart: number;
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
    this.recycler = options.recycler === undefined ? sharedChunkRecycler : options.recycler;
    this.pending = [];
    this.pendingHead = 0;
    this.pendingStart = 0;
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

  /** Chunk memory held plus pending bytes (what the limits count). */
  get memoryBytes(): number {
    return this.chunks.length * this.chunkBytes + this.endValue - this.pendingStart;
  }

  /** Appended bytes held by reference, not copied (all unwritten). */
  get pendingBytes(): number {
    return this.endValue - this.pendingStart;
  }

  /** Whether every byte from `position` to the end is cached (a read there needs no file). */
  covers(position: number): boolean {
    return position >= this.startValue && position <= this.endValue;
  }

  /**
   * Caches bytes appended at `position` (the cache's end; any position when
   * the cache is empty). They stay pinned until markWritten passes them.
   * `byReference`: the caller keeps `bytes` alive and unchanged until they
   * are written anyway (a buffered writer queues the same buffer), so the
   * cache may hold them as a pending piece instead of copying them now.
   */
  append(position: number, bytes: Uint8Array, byReference = false): void {
    assert(!this.closed, 'TailCache.append: closed');
    assert(bytes.length > 0, 'TailCache.append: empty bytes');
    if (this.chunks.length === 0 && this.pendingStart === this.endValue) {
      this.startValue = position;
      this.endValue = position;
      this.pendingStart = position;
    }
    assert(position === this.endValue, 'TailCache.append: position must be the cache end');
    assert(position >= this.writtenValue, 'TailCache.append: position below the written position');
    if (this.budget !== null) this.budget.touch(this);
    const piece = this.pendingHead < this.pending.length || (byReference && position + bytes.length - this.writtenValue > this.maxBytes);
    if (!piece) {
      // The writer is close behind: these bytes will still be in the window when written. Copied
      // now, while they are hot in the CPU cache (a copy at markWritten reads them cold).
      this.copyIn(bytes, position);
      this.endValue += bytes.length;
      this.pendingStart = this.endValue;
    } else {
      // More than maxBytes unwritten: these bytes are likely dropped as soon as they are written.
      this.pending.push(bytes);
      this.endValue += bytes.length;
      // Charged once the bytes are in place (and pinned), so an inline reclaim cannot drop them.
      this.budget?.charge(bytes.length);
    }
    if (this.memoryBytes > this.maxBytes) this.evict(this.memoryBytes - this.maxBytes);
  }

  /** Bytes below `position` are in the file: they may be evicted. */
  markWritten(position: number): void {
    if (position <= this.writtenValue) return;
    this.writtenValue = position;
    // Bytes just unpinned may be over the per-log limit (append could not drop them).
    if (this.memoryBytes > this.maxBytes) this.evict(this.memoryBytes - this.maxBytes);
    // Pieces the written position reached and eviction left: copied, so no reference outlives the write.
    // Once the writer is close behind again, every piece is: later appends copy at once (hot) again.
    if (this.pendingStart < position) this.copyPending(this.endValue - position <= this.maxBytes ? this.endValue : position);
    if (this.memoryBytes > this.maxBytes) this.evict(this.memoryBytes - this.maxBytes);
  }

  /**
   * On a hit (the whole range cached) pushes views of [position,
   * position+length) to `out` (one per chunk crossed) and returns true; on a
   * miss pushes nothing and returns false.
   */
  read(position: number, length: number, out: Buffer[]): boolean {
    assert(Number.isSafeInteger(length) && length >= 0, 'TailCache.read: length must be a non-negative integer');
    if (position < this.startValue || position + length > this.endValue || this.startValue === this.endValue) {
      this.misses++;
      return false;
    }
    // Readers get chunk memory only: pending pieces in the range are copied first.
    if (position + length > this.pendingStart) this.copyPending(position + length);
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
    if (position < this.startValue || position + length > this.endValue || this.startValue === this.endValue) return false;
    let at = position;
    let out = 0;
    if (at < this.pendingStart) {
      let index = this.chunkIndex(at);
      while (out < length && at < this.pendingStart) {
        const chunk = this.chunks[index] as CacheChunk;
        const offset = at - chunk.start;
        const n = Math.min(chunk.used - offset, length - out);
        chunk.buffer.copy(target, out, offset, offset + n);
        out += n;
        at += n;
        index++;
      }
    }
    let pieceStart = this.pendingStart;
    for (let i = this.pendingHead; out < length; i++) {
      const piece = this.pending[i] as Uint8Array;
      const pieceEnd = pieceStart + piece.length;
      if (at < pieceEnd) {
        const offset = at - pieceStart;
        const n = Math.min(piece.length - offset, length - out);
        target.set(piece.subarray(offset, offset + n), out);
        out += n;
        at += n;
      }
      pieceStart = pieceEnd;
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
      this.startValue = next === undefined ? this.pendingStart : next.start;
    }
    // With no chunk left, the oldest pieces the written position passed go: dropped, never copied.
    while (freed < bytes && this.chunks.length === 0 && this.pendingHead < this.pending.length) {
      const piece = this.pending[this.pendingHead] as Uint8Array;
      if (this.pendingStart + piece.length > this.writtenValue) break;
      this.shiftPending();
      freed += piece.length;
      this.evictions++;
      this.evictedBytes += piece.length;
      this.budget?.charge(-piece.length);
      this.startValue = this.pendingStart;
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
    if (position > this.pendingStart) {
      this.truncatePending(position);
      return;
    }
    this.dropPending();
    this.endValue = this.pendingStart;
    if (position >= this.endValue) return;
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
    this.pendingStart = position;
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
    for (const spare of this.spares) this.recycler?.give(spare);
    this.spares.length = 0;
    this.closed = true;
    this.budget?.unregister(this);
  }

  private dropAll(position: number): void {
    this.dropPending();
    while (this.chunks.length > 0) this.dropChunk(this.chunks.pop() as CacheChunk);
    this.startValue = position;
    this.endValue = position;
    this.pendingStart = position;
  }

  /** Copies the pending pieces that start below `position` into chunks (in order: they follow the chunks). */
  private copyPending(position: number): void {
    while (this.pendingHead < this.pending.length && this.pendingStart < position) {
      const piece = this.pending[this.pendingHead] as Uint8Array;
      this.copyIn(piece, this.pendingStart);
      this.shiftPending();
      this.budget?.charge(-piece.length);
    }
  }

  /** Copies `bytes`, whose first byte is at segment position `at` (the chunks' end), into the newest chunk(s). */
  private copyIn(bytes: Uint8Array, at: number): void {
    let from = 0;
    let added = 0;
    while (from < bytes.length) {
      let last = this.chunks[this.chunks.length - 1];
      if (last === undefined || last.sealed || last.used === this.chunkBytes) {
        last = this.addChunk(at + from);
        added++;
      }
      const n = Math.min(this.chunkBytes - last.used, bytes.length - from);
      last.buffer.set(bytes.subarray(from, from + n), last.used);
      last.used += n;
      from += n;
    }
    // Charged once the bytes are in place (and pinned), so an inline reclaim cannot drop them.
    if (added > 0) this.budget?.charge(added * this.chunkBytes);
  }

  /** Drops pieces at and after `position` (> pendingStart); a piece across it keeps its head. */
  private truncatePending(position: number): void {
    let pieceEnd = this.endValue;
    while (this.pending.length > this.pendingHead) {
      const last = this.pending[this.pending.length - 1] as Uint8Array;
      const pieceStart = pieceEnd - last.length;
      if (pieceStart < position) {
        this.pending[this.pending.length - 1] = last.subarray(0, position - pieceStart);
        break;
      }
      this.pending.pop();
      pieceEnd = pieceStart;
    }
    this.budget?.charge(-(this.endValue - position));
    this.endValue = position;
  }

  private shiftPending(): void {
    const piece = this.pending[this.pendingHead] as Uint8Array;
    this.pending[this.pendingHead] = undefined;
    this.pendingHead++;
    this.pendingStart += piece.length;
    if (this.pendingHead === this.pending.length) {
      this.pending.length = 0;
      this.pendingHead = 0;
    } else if (this.pendingHead > 1024 && this.pendingHead * 2 > this.pending.length) {
      this.pending.splice(0, this.pendingHead);
      this.pendingHead = 0;
    }
  }

  /** Forgets every pending piece (their bytes leave the window: the caller moves end/start). */
  private dropPending(): void {
    const bytes = this.endValue - this.pendingStart;
    if (bytes > 0) this.budget?.charge(-bytes);
    this.pending.length = 0;
    this.pendingHead = 0;
    this.endValue = this.pendingStart;
  }

  private addChunk(start: number): CacheChunk {
    const buffer = this.spares.pop() ?? this.recycler?.take(this.chunkBytes) ?? Buffer.allocUnsafeSlow(this.chunkBytes);
    const chunk = new CacheChunk(buffer, start);
    this.chunks.push(chunk);
    return chunk;
  }

  private dropChunk(chunk: CacheChunk): void {
    this.budget?.charge(-this.chunkBytes);
    if (chunk.lentEnd !== 0) return; // a reader may hold a view: left to the GC
    if (this.spares.length < this.spareChunksMax) this.spares.push(chunk.buffer);
    else this.recycler?.give(chunk.buffer);
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
