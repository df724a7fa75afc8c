// DirResources: what the logs of one data directory share (ARCHITECTURE.md
// "Placement", "Tail cache"): one BlockingPool for every log's pool work,
// one AlignedArena for direct-mode staging and one TailCacheBudget (LRU
// between the logs' tail caches), and the handle cache bounding the
// descriptors of sealed segment files (handle-cache.ts), and the byte budget
// of sealed segments' in-memory indexes (segment/index-residency.ts). No files.
//
// Invariants: the pool and the budget exist from the LogManager's
// construction to its close (LogManager closes the pool); the arena is made
// when the first direct-mode log opens and then shared by every later one.
// The budget's reclaim runs on the pool (Priority.eviction), inline when the
// pool has no room (it only drops references, so it never waits).
import { assert } from '@seglog/common';
import { AlignedArena, BlockingPool, Priority } from '@seglog/io';
import type { Io } from '@seglog/io';
import { TailCacheBudget } from '../cache/tail-cache.js';
import type { LogConfig } from '../log-config.js';
import type { LogOpenOptions } from '../log/log-types.js';
import { indexCacheStats, setIndexCacheBytes } from '../segment/index-residency.js';
import type { IndexCacheStats } from '../segment/index-residency.js';
import { CachingIo, DEFAULT_MAX_OPEN_SEGMENT_FILES, HandleCache } from './handle-cache.js';

/** Default byte budget of sealed segments' loaded indexes per LogManager (LogManagerOptions.indexCacheBytes). */
export const DEFAULT_INDEX_CACHE_BYTES = 128 * 1024 * 1024;

/** LogManagerOptions' pool, arena and tailCache (see there). */
export interface DirResourceOptions {
  readonly pool?: { readonly concurrency?: number; readonly maxQueued?: number; readonly reservedQueued?: number };
  readonly arena?: { readonly chunkBytes?: number; readonly chunkCount?: number };
  readonly tailCache?: { readonly perLogBytes?: number; readonly totalBytes?: number; readonly chunkBytes?: number };
  readonly maxOpenSegmentFiles?: number;
  readonly indexCacheBytes?: number;
}

export class DirResources {
  /** The pool every log's blocking work runs on. */
  readonly pool: BlockingPool;
  /** The tail-cache budget across logs (LRU between logs). */
  readonly tailCacheBudget: TailCacheBudget;
  /** The descriptors of sealed segment files, shared by every log. */
  readonly handles: HandleCache;
  private arena: AlignedArena | null;
  private cachingIo: CachingIo | null = null;
  private readonly indexCacheBytes: number;
  private readonly arenaOptions: { readonly chunkBytes?: number; readonly chunkCount?: number };
  private readonly tailCacheOptions: { readonly perLogBytes?: number; readonly chunkBytes?: number };

  constructor(options: DirResourceOptions) {
    const poolOptions = options.pool ?? {};
    this.pool = new BlockingPool({
      concurrency: poolOptions.concurrency ?? 4,
      maxQueued: poolOptions.maxQueued ?? 4096,
      reservedQueued: poolOptions.reservedQueued ?? 64,
    });
    this.tailCacheBudget = new TailCacheBudget({
      maxBytes: options.tailCache?.totalBytes ?? 256 * 1024 * 1024,
      onOverBudget: () => this.scheduleReclaim(),
    });
    this.handles = new HandleCache(options.maxOpenSegmentFiles ?? DEFAULT_MAX_OPEN_SEGMENT_FILES);
    this.indexCacheBytes = options.indexCacheBytes ?? DEFAULT_INDEX_CACHE_BYTES;
    assert(Number.isSafeInteger(this.indexCacheBytes) && this.indexCacheBytes >= 0, 'DirResources: indexCacheBytes must be a non-negative integer');
    this.arena = null;
    this.arenaOptions = options.arena ?? {};
    this.tailCacheOptions = options.tailCache ?? {};
  }

  /** The shared parts of Log.open's options for a log with `config`: the pool, the arena (direct mode) and the tail-cache budget. */
  forLog(config: LogConfig): Pick<LogOpenOptions, 'pool' | 'arena' | 'tailCache'> {
    const arena = this.arenaFor(config);
    const cache = this.tailCacheOptions;
    return {
      pool: this.pool,
      ...(arena === null ? {} : { arena }),
      tailCache: {
        budget: this.tailCacheBudget,
        ...(cache.perLogBytes === undefined ? {} : { maxBytes: cache.perLogBytes }),
        ...(cache.chunkBytes === undefined ? {} : { chunkBytes: cache.chunkBytes }),
      },
    };
  }

  /** The Io every log of the directory uses: `io` with segment files through the handle cache. */
  ioFor(io: Io): Io {
    if (this.cachingIo === null) {
      this.cachingIo = new CachingIo(io, this.handles);
      setIndexCacheBytes(this.cachingIo, this.indexCacheBytes);
    }
    return this.cachingIo;
  }

  /** The sealed indexes' budget and use (before the first log opens: nothing loaded). */
  indexStats(): IndexCacheStats {
    if (this.cachingIo === null) return { budgetBytes: this.indexCacheBytes, usedBytes: 0, residentSegments: 0, loads: 0, evictions: 0 };
    return indexCacheStats(this.cachingIo);
  }

  /** Tail-cache eviction is pool work; when the pool is full it runs inline (it only drops references). */
  private scheduleReclaim(): void {
    const budget = this.tailCacheBudget;
    if (!this.pool.hasRoom(Priority.eviction)) {
      budget.reclaim();
      return;
    }
    void this.pool.submit(async () => budget.reclaim(), Priority.eviction).catch(() => undefined);
  }

  /** The staging arena of direct-mode logs (made on first use). */
  private arenaFor(config: LogConfig): AlignedArena | null {
    if (config.writeMode !== 'direct') return this.arena;
    this.arena ??= new AlignedArena({ chunkBytes: this.arenaOptions.chunkBytes ?? 1024 * 1024, chunkCount: this.arenaOptions.chunkCount ?? 64 });
    return this.arena;
  }
}
