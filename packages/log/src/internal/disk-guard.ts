// DiskGuard: the free-space floor of one data directory (ARCHITECTURE.md,
// "Errors and faults"): appends are refused with a retriable
// SEGLOG_ERR_LOG_DISK_FULL while the file system has fewer than
// `minFreeBytes` available, long before the kernel's ENOSPC would take the
// directory offline.
//
// Cost on the append path: one comparison. statfs runs at most once per
// `checkIntervalMs` (by the injected clock), started by the first check after
// the interval and not awaited: the append is decided on the estimate,
// which is the last statfs result minus the bytes accepted since that statfs
// was issued (so a burst between two checks cannot overshoot the floor by a
// whole interval's worth of writes). It errs low by space freed since the
// statfs (towards refusing), and high by bytes accepted before the statfs
// but not yet written when it ran (bounded by the log's write queue). When
// space returns, appends are accepted again after the first check that runs
// once the interval has passed (the append that starts it is still decided
// on the old value; callers retry).
//
// The floor is LogManagerOptions.minFreeBytes (default the LogConfig's
// minFreeBytes, 64 MiB; the broker's --min-free-bytes). An append is
// accepted while available − its bytes ≥ the floor.
//
// A failing statfs keeps the previous value (the guard is advisory; the data
// path's own I/O errors still take the directory offline) and is counted.

import { assert, SeglogError } from '@seglog/common';
import type { Io } from '@seglog/io';

export interface DiskGuardOptions {
  /** Refuse appends while fewer bytes than this are available. 0 disables the guard. */
  readonly minFreeBytes: number;
  /** Minimum time between two statfs calls. */
  readonly checkIntervalMs: number;
  readonly now: () => number;
}

const UNITS = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'] as const;

/** A size for people: `512 B`, `1.5 KiB`, `64 MiB` (one decimal, trailing .0 dropped). */
export function formatBytes(bytes: number): string {
  const sign = bytes < 0 ? '-' : '';
  let value = Math.abs(bytes);
  if (value < 1024) return `${sign}${value} B`;
  let unit = -1;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const text = value.toFixed(1).replace(/\.0$/, '');
  return `${sign}${text} ${UNITS[unit] as string}`;
}

/**
 * The refusal of an append of `requestedBytes` that would leave fewer than
 * `minFreeBytes` available. The message names what accepting it would leave
 * (not what is available now, which may still be at or above the floor),
 * in human sizes; exact bytes are added where the rounded forms would look
 * equal.
 */
export function diskFull(dir: string, availableBytes: number, minFreeBytes: number, requestedBytes: number): SeglogError {
  const sizes = [Math.max(0, availableBytes - requestedBytes), minFreeBytes, Math.max(0, availableBytes)];
  const rounded = sizes.map(formatBytes);
  // Rounded forms that collide ("64 MiB … below the floor of 64 MiB") get their exact bytes.
  const shown = rounded.map((text, i) => (rounded.indexOf(text) !== i || rounded.lastIndexOf(text) !== i ? `${text} (${sizes[i] as number} B)` : text));
  return new SeglogError('SEGLOG_ERR_LOG_DISK_FULL',
    `data directory ${dir}: accepting ${formatBytes(requestedBytes)} would leave ${shown[0] as string} free, below the floor of ${shown[1] as string} ` +
    `(${shown[2] as string} available; minFreeBytes, broker --min-free-bytes; 0 disables the guard)`, {
      kafka: 'KAFKA_STORAGE_ERROR',
      retriable: true,
      context: { dir, availableBytes, requestedBytes, minFreeBytes },
    });
}

export class DiskGuard {
  readonly dir: string;
  readonly minFreeBytes: number;
  readonly checkIntervalMs: number;
  /** statfs calls completed (successfully or not). */
  checks: number;
  /** statfs calls that failed. */
  checkErrors: number;
  /** Appends refused. */
  refusals: number;
  private readonly io: Io;
  private readonly now: () => number;
  private availableAtCheck: number;
  private bytesSinceCheck: number;
  private lastCheckMs: number;
  private inflight: Promise<void> | null;

  constructor(io: Io, dir: string, options: DiskGuardOptions) {
    assert(Number.isSafeInteger(options.minFreeBytes) && options.minFreeBytes >= 0, 'DiskGuard: minFreeBytes must be a non-negative safe integer');
    assert(Number.isSafeInteger(options.checkIntervalMs) && options.checkIntervalMs >= 0, 'DiskGuard: checkIntervalMs must be a non-negative safe integer');
    this.dir = dir;
    this.minFreeBytes = options.minFreeBytes;
    this.checkIntervalMs = options.checkIntervalMs;
    this.checks = 0;
    this.checkErrors = 0;
    this.refusals = 0;
    this.io = io;
    this.now = options.now;
    this.availableAtCheck = Number.MAX_SAFE_INTEGER;
    this.bytesSinceCheck = 0;
    this.lastCheckMs = -Infinity;
    this.inflight = null;
  }

  /** The estimate appends are decided on: last statfs minus bytes accepted since. */
  get availableBytes(): number {
    return this.availableAtCheck - this.bytesSinceCheck;
  }

  /**
   * Accepts an append of `bytes` or throws SEGLOG_ERR_LOG_DISK_FULL
   * (retriable). Starts a statfs in the background when the last one is
   * older than the interval.
   */
  check(bytes: number): void {
    if (this.minFreeBytes === 0) return;
    if (this.inflight === null && this.now() - this.lastCheckMs >= this.checkIntervalMs) void this.refresh();
    const available = this.availableBytes;
    if (available - bytes < this.minFreeBytes) {
      this.refusals++;
      throw diskFull(this.dir, available, this.minFreeBytes, bytes);
    }
    this.bytesSinceCheck += bytes;
  }

  /** Runs a statfs now (or joins the one in flight) and updates the estimate. Never rejects. */
  refresh(): Promise<void> {
    if (this.inflight !== null) return this.inflight;
    this.lastCheckMs = this.now();
    // Bytes accepted from here on are not reflected in the statfs result.
    const sinceBefore = this.bytesSinceCheck;
    this.inflight = this.io.statfs(this.dir).then(
      (stat) => {
        this.availableAtCheck = stat.availableBytes;
        this.bytesSinceCheck -= sinceBefore;
      },
      () => {
        this.checkErrors++;
      },
    ).finally(() => {
      this.checks++;
      this.inflight = null;
    });
    return this.inflight;
  }

  /** Resolves when no statfs is in flight (tests, close). */
  async idle(): Promise<void> {
    if (this.inflight !== null) await this.inflight;
  }
}
