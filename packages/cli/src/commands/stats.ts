// `seglog stats <dir>`: partitions, segments, bytes, batches, records, log
// start/end offsets, timestamps and open transactions, per partition and in
// total. Scans every batch header (read only), so the end offset is what the
// files hold, not what a checkpoint claims. A transaction is open from a
// producer's first transactional data batch to its next COMMIT/ABORT marker
// (what holds the LSO; the transaction coordinator aborts those past their
// timeout once the broker runs).

import path from 'node:path';
import { FileNames } from '@seglog/log';
import { COMMON_OPTIONS } from '../command-spec.js';
import type { CommandSpec } from '../command-spec.js';
import type { CliContext } from '../internal/cli-context.js';
import { readOffsetCheckpoint } from '../internal/checkpoints.js';
import { describeEnd } from '../internal/dump-log.js';
import { listSegments, resolveLogDirs } from '../internal/log-dirs.js';
import type { PartitionDir } from '../internal/log-dirs.js';
import type { Progress } from '../internal/progress.js';
import { SegmentScanner } from '../internal/segment-scanner.js';
import { cleanerStateOf, cleanerText, readCleanerCheckpoint } from '../internal/cleaner-state.js';
import type { CleanerCheckpoint, CleanerFileState } from '../internal/cleaner-state.js';

export interface PartitionStats {
  partition: string;
  segments: number;
  logBytes: number;
  otherBytes: number;
  /** Bytes of the sealed segments' .index and .timeindex files: the memory they take when every one is loaded (issue 24). */
  sealedIndexBytes: number;
  batches: number;
  records: number;
  logStartOffset: number;
  logEndOffset: number;
  oldestTimestamp: number;
  newestTimestamp: number;
  /** Segments whose scan did not end cleanly (see `seglog verify`). */
  damagedSegments: string[];
  /** Batches carrying a delete horizon (attribute bit 6: tombstones or empty-transaction markers the cleaner will drop). */
  deleteHorizonBatches?: number;
  /** Batches with no records (what the cleaner leaves of a producer's last batch). */
  emptyBatches?: number;
  /** The cleaner's state (cleaner-offset-checkpoint, cleaner-stats), when it has cleaned this partition. */
  cleaner?: CleanerFileState;
  /** Transactions without a marker yet: producer id and first offset, by first offset. */
  openTransactions: { producerId: number; firstOffset: number }[];
}

async function partitionStats(ctx: CliContext, partition: PartitionDir, logStartCheckpoint: number | undefined, progress: Progress, cleaner: CleanerCheckpoint): Promise<PartitionStats> {
  const segments = await listSegments(ctx.io, partition.dir);
  const stats: PartitionStats = {
    partition: partition.name, segments: segments.length, logBytes: 0, otherBytes: 0, sealedIndexBytes: 0, batches: 0, records: 0,
    logStartOffset: Math.max(logStartCheckpoint ?? 0, segments[0]?.baseOffset ?? 0), logEndOffset: segments[0]?.baseOffset ?? 0,
    oldestTimestamp: -1, newestTimestamp: -1, damagedSegments: [], openTransactions: [],
  };
  let horizons = 0;
  let empty = 0;
  const open = new Map<number, number>();
  for (const name of await ctx.io.readdir(partition.dir)) {
    if (name.endsWith('.log')) continue;
    const size = (await ctx.io.stat(path.join(partition.dir, name))).size;
    stats.otherBytes += size;
    const parsed = FileNames.parseSegmentFileName(name);
    const active = segments.at(-1)?.baseOffset;
    if (parsed !== null && parsed.transient === null && (parsed.kind === 'index' || parsed.kind === 'timeindex') && parsed.offset !== active) stats.sealedIndexBytes += size;
  }
  for (const segment of segments) {
    stats.logBytes += segment.logBytes;
    stats.logEndOffset = Math.max(stats.logEndOffset, segment.baseOffset);
    const scanner = await SegmentScanner.open(ctx.io, segment.log);
    try {
      for (let next = await scanner.next(); next !== null; next = await scanner.next()) {
        const batch = next.batch;
        progress.advance(batch.sizeInBytes);
        stats.batches++;
        try {
          stats.records += Math.max(0, batch.recordsCount);
          if (batch.hasDeleteHorizon) horizons++;
          if (batch.recordsCount === 0) empty++;
          stats.logEndOffset = Math.max(stats.logEndOffset, batch.nextOffset);
          const ts = batch.maxTimestamp;
          if (ts >= 0 && (stats.oldestTimestamp < 0 || ts < stats.oldestTimestamp)) stats.oldestTimestamp = ts;
          if (ts > stats.newestTimestamp) stats.newestTimestamp = ts;
          if (batch.isTransactional && batch.producerId >= 0) {
            if (batch.isControl) open.delete(batch.producerId);
            else if (!open.has(batch.producerId)) open.set(batch.producerId, batch.baseOffset);
          }
        } catch {
          // An unreadable header: verify reports it; stats counts the batch only.
        }
      }
      const end = scanner.end;
      if (end !== null && end.stop !== 'end' && end.stop !== 'zero') stats.damagedSegments.push(`${path.basename(segment.log)}: ${describeEnd(end)}`);
      progress.advance(end?.trailingBytes ?? 0);
    } finally {
      await scanner.close();
    }
  }
  const state = cleanerStateOf(cleaner, partition.name, segments);
  if (state !== null || horizons > 0 || empty > 0) {
    stats.deleteHorizonBatches = horizons;
    stats.emptyBatches = empty;
  }
  if (state !== null) stats.cleaner = state;
  stats.openTransactions = [...open].map(([producerId, firstOffset]) => ({ producerId, firstOffset })).sort((a, b) => a.firstOffset - b.firstOffset);
  return stats;
}

function timeText(ts: number): string {
  return ts < 0 ? '-' : `${ts} (${new Date(ts).toISOString()})`;
}

function statsLine(s: PartitionStats): string {
  return `${s.partition}: segments ${s.segments}, log bytes ${s.logBytes}, index and other bytes ${s.otherBytes}, batches ${s.batches}, records ${s.records}, ` +
    `log start offset ${s.logStartOffset}, log end offset ${s.logEndOffset}, oldest timestamp ${timeText(s.oldestTimestamp)}, newest timestamp ${timeText(s.newestTimestamp)}, ` +
    `open transactions ${s.openTransactions.length}${s.openTransactions.length === 0 ? '' : ` (${s.openTransactions.map((t) => `producer ${t.producerId} from offset ${t.firstOffset}`).join(', ')})`}`;
}

interface TotalStats {
  partitions: number;
  segments: number;
  logBytes: number;
  otherBytes: number;
  sealedIndexBytes: number;
  batches: number;
  records: number;
  oldestTimestamp: number;
  newestTimestamp: number;
  openTransactions: number;
}

/**
 * What serving this directory costs (issue 24): descriptors held by the
 * active segments (3 per partition: .log, .index, .timeindex) on top of the
 * handle cache, and the memory every sealed index takes once loaded, the
 * most --index-cache-bytes can usefully be.
 */
function resourcesLine(t: TotalStats): string {
  return `resources when served: ${t.partitions * 3} descriptors for active segments (3 per partition) + the handle cache (--max-open-segment-files), ` +
    `sealed indexes ${(t.sealedIndexBytes / 1048576).toFixed(1)} MiB when all loaded (--index-cache-bytes bounds what stays in memory)`;
}

function totalLine(t: TotalStats): string {
  return `total: partitions ${t.partitions}, segments ${t.segments}, log bytes ${t.logBytes}, index and other bytes ${t.otherBytes}, batches ${t.batches}, records ${t.records}, ` +
    `oldest timestamp ${timeText(t.oldestTimestamp)}, newest timestamp ${timeText(t.newestTimestamp)}, open transactions ${t.openTransactions}`;
}

export const statsCommand: CommandSpec = {
  name: 'stats',
  summary: 'partitions, segments, bytes, offsets, timestamps and open transactions, per partition and in total',
  args: '<data-dir|partition-dir>',
  description: [
    'Scans every batch header of every segment (read only). Log start offset: the larger of the first segment\'s',
    'base and the log-start-offset checkpoint; log end offset: the offset after the last whole batch on disk.',
    'Timestamps are batch max timestamps (oldest = smallest, newest = largest; -1 and missing are skipped).',
    'Compacted partitions get a cleaner line: first dirty offset (cleaner-offset-checkpoint), dirty ratio by',
    'segments, the checkpoint\'s time (the last pass that moved it), the last clean and the bytes saved by every pass',
    '(cleaner-stats; - when not recorded), batches with a delete horizon, empty batches.',
    'Open transactions: producers with a transactional batch after their last COMMIT/ABORT marker (they hold the LSO).',
  ],
  options: {
    json: { type: 'boolean', description: 'print one JSON object per partition, then one for the total' },
    ...COMMON_OPTIONS,
  },
  positionals: 1,
  async run(ctx, positionals, values) {
    const dirs = await resolveLogDirs(ctx.io, positionals[0] as string);
    const logStart = await readOffsetCheckpoint(ctx.io, dirs.dataDir, FileNames.logStartOffsetCheckpoint);
    let totalBytes = 0;
    for (const p of dirs.partitions) for (const s of await listSegments(ctx.io, p.dir)) totalBytes += s.logBytes;
    const progress = ctx.progress('stats', totalBytes);
    const all: PartitionStats[] = [];
    try {
      const cleaner = await readCleanerCheckpoint(ctx.io, dirs.dataDir);
      for (const partition of dirs.partitions) all.push(await partitionStats(ctx, partition, logStart.offsets.get(partition.name), progress, cleaner));
    } finally {
      progress.done();
    }
    const json = values['json'] === true;
    const timestamps = all.map((s) => s.oldestTimestamp).filter((t) => t >= 0);
    const total: TotalStats = {
      partitions: all.length,
      segments: sum(all, (s) => s.segments), logBytes: sum(all, (s) => s.logBytes), otherBytes: sum(all, (s) => s.otherBytes), sealedIndexBytes: sum(all, (s) => s.sealedIndexBytes),
      batches: sum(all, (s) => s.batches), records: sum(all, (s) => s.records),
      oldestTimestamp: timestamps.length === 0 ? -1 : Math.min(...timestamps),
      newestTimestamp: Math.max(-1, ...all.map((s) => s.newestTimestamp)),
      openTransactions: sum(all, (s) => s.openTransactions.length),
    };
    for (const s of all) {
      ctx.out(json ? JSON.stringify({ type: 'partition', ...s }) : statsLine(s));
      if (!json) for (const damaged of s.damagedSegments) ctx.out(`  warning: ${damaged} (run seglog verify)`);
      if (!json && s.deleteHorizonBatches !== undefined) {
        ctx.out(`  ${s.cleaner === undefined ? 'cleaner: not cleaned yet' : cleanerText(s.cleaner)}, delete-horizon batches ${s.deleteHorizonBatches}, empty batches ${s.emptyBatches ?? 0}`);
      }
    }
    ctx.out(json ? JSON.stringify({ type: 'total', ...total }) : totalLine(total));
    if (!json) ctx.out(resourcesLine(total));
    return 0;
  },
};

function sum<T>(items: readonly T[], f: (item: T) => number): number {
  let total = 0;
  for (const item of items) total += f(item);
  return total;
}
