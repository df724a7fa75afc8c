// Options of writeFetch / writeFetchToFd and their defaults. Every default
// comes from `pnpm bench fetch` (bench/fetch.bench.ts); README.md quotes the
// run that chose it.

import { assert } from '@seglog/common';
import type { SendfileLimiter } from './sendfile-limiter.js';

/**
 * How to send a plan:
 * - 'auto': coalesce below coalesceBelowBytes; otherwise inline parts by
 *   corked writev and file parts by sendfile at or above sendfileMinBytes
 *   (when available), else pread + write.
 * - 'coalesce': copy every byte (file parts by pread) into staging buffers, one write per buffer.
 * - 'writev': inline parts as writev slices; file parts by pread (never sendfile).
 * - 'sendfile': every file part by sendfile when possible (no size minimum); inline parts by writev.
 * - 'pread': file parts by pread + write; inline parts by writev (same as 'writev').
 */
export type FetchWriteStrategy = 'auto' | 'coalesce' | 'writev' | 'sendfile' | 'pread';

export interface FetchWriteOptions {
  readonly strategy?: FetchWriteStrategy;
  /** 'auto' copies the whole response (header + parts) into one buffer and writes once below this many bytes. */
  readonly coalesceBelowBytes?: number;
  /** Slices per corked batch (one writev each); 1..1024 (IOV_MAX). */
  readonly maxIovecs?: number;
  /** 'auto' sends a file range by sendfile only from this length up. */
  readonly sendfileMinBytes?: number;
  /** Size of each staging buffer that file bytes are pread into (two per response at most). */
  readonly preadChunkBytes?: number;
  /** A sendfile without progress for this long fails with SEGLOG_ERR_FETCH_PEER_TIMEOUT. */
  readonly sendfileIdleTimeoutMs?: number;
  /** Concurrency bound for sendfile; default the process-wide `sendfileLimiter`. */
  readonly limiter?: SendfileLimiter;
}

export interface ResolvedFetchWriteOptions {
  readonly strategy: FetchWriteStrategy;
  readonly coalesceBelowBytes: number;
  readonly maxIovecs: number;
  readonly sendfileMinBytes: number;
  readonly preadChunkBytes: number;
  readonly sendfileIdleTimeoutMs: number;
}

// From `pnpm bench fetch` (2 vCPUs, loopback, 7 runs; README.md has the table):
// - coalesceBelowBytes 64 KiB: one copied write beat corked writev for every
//   response up to 64 KiB (1 KiB x 64: 1128 vs 1028 MB/s, 0.48 vs 0.71 ms
//   CPU/MiB); from 256 KiB writev won (16 KiB x 16: 980 vs 563 MB/s).
// - sendfileMinBytes 64 KiB: sendfile lost to pread at 16 KiB fragments
//   (347 vs 458 MB/s at x64) and won from 64 KiB (1455 vs 1043 at x16).
// - maxIovecs 256: 200 x 1 KiB slices, 1620 MB/s vs 1463 at 64, 717 at 8.
// - preadChunkBytes 256 KiB: 1492 MB/s vs 1044 at 64 KiB; 1 MiB gave 1745
//   but quadruples the staging memory per response in flight (2 buffers).
export const FETCH_WRITE_DEFAULTS: ResolvedFetchWriteOptions = Object.freeze({
  strategy: 'auto',
  coalesceBelowBytes: 64 * 1024,
  maxIovecs: 256,
  sendfileMinBytes: 64 * 1024,
  preadChunkBytes: 256 * 1024,
  sendfileIdleTimeoutMs: 30_000,
});

const STRATEGIES: ReadonlySet<string> = new Set(['auto', 'coalesce', 'writev', 'sendfile', 'pread']);

export function resolveFetchWriteOptions(options: FetchWriteOptions | undefined): ResolvedFetchWriteOptions {
  if (options === undefined) return FETCH_WRITE_DEFAULTS;
  const resolved: ResolvedFetchWriteOptions = {
    strategy: options.strategy ?? FETCH_WRITE_DEFAULTS.strategy,
    coalesceBelowBytes: options.coalesceBelowBytes ?? FETCH_WRITE_DEFAULTS.coalesceBelowBytes,
    maxIovecs: options.maxIovecs ?? FETCH_WRITE_DEFAULTS.maxIovecs,
    sendfileMinBytes: options.sendfileMinBytes ?? FETCH_WRITE_DEFAULTS.sendfileMinBytes,
    preadChunkBytes: options.preadChunkBytes ?? FETCH_WRITE_DEFAULTS.preadChunkBytes,
    sendfileIdleTimeoutMs: options.sendfileIdleTimeoutMs ?? FETCH_WRITE_DEFAULTS.sendfileIdleTimeoutMs,
  };
  assert(STRATEGIES.has(resolved.strategy), 'fetch options: unknown strategy');
  assert(Number.isSafeInteger(resolved.coalesceBelowBytes), 'fetch options: coalesceBelowBytes must be an integer >= 0');
  assert(resolved.coalesceBelowBytes >= 0, 'fetch options: coalesceBelowBytes must be an integer >= 0');
  assert(Number.isInteger(resolved.maxIovecs), 'fetch options: maxIovecs must be an integer in [1, 1024]');
  assert(resolved.maxIovecs >= 1 && resolved.maxIovecs <= 1024, 'fetch options: maxIovecs must be an integer in [1, 1024]');
  assert(Number.isSafeInteger(resolved.sendfileMinBytes), 'fetch options: sendfileMinBytes must be an integer >= 0');
  assert(resolved.sendfileMinBytes >= 0, 'fetch options: sendfileMinBytes must be an integer >= 0');
  assert(Number.isInteger(resolved.preadChunkBytes), 'fetch options: preadChunkBytes must be an integer in [4096, 64 MiB]');
  assert(resolved.preadChunkBytes >= 4096 && resolved.preadChunkBytes <= 64 * 1024 * 1024, 'fetch options: preadChunkBytes must be an integer in [4096, 64 MiB]');
  // One staging buffer must hold a whole coalesced response (one write).
  assert(resolved.coalesceBelowBytes <= resolved.preadChunkBytes, 'fetch options: coalesceBelowBytes must not exceed preadChunkBytes');
  assert(Number.isInteger(resolved.sendfileIdleTimeoutMs), 'fetch options: sendfileIdleTimeoutMs must be an integer in [1, 2^31 - 1]');
  assert(resolved.sendfileIdleTimeoutMs >= 1 && resolved.sendfileIdleTimeoutMs <= 0x7fffffff, 'fetch options: sendfileIdleTimeoutMs must be an integer in [1, 2^31 - 1]');
  return resolved;
}
