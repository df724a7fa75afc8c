// Loading a partition directory (reference/kafka-storage.md §21): leftover
// cleanup, segment opening, recovery after an unclean stop, and the positions
// the Log starts from.
//
// Rules (and where they deliberately differ from Kafka):
// - Cleaner leftovers first (cleaner/swap-recovery.ts, §21 step 1): `.cleaned`
//   files are deleted, a `.log.swap` replaces the regular segments its offsets
//   cover. Then `.deleted` and `.tmp` files are removed; index files without a
//   `.log` are removed; the directory is fsynced if anything was removed.
// - Clean shutdown: no scan, except segments whose `.index` is missing or
//   whose indexes fail the sanity check, and segments whose .log does not
//   end on a batch boundary (bytes appended after the clean close, a torn
//   tail): those are recovered, and an index that fails its check is rebuilt
//   from the .log — it never licenses cutting the .log.
// - Unclean: every segment from floor(recoveryPoint) is recovered (CRC
//   checked, indexes rebuilt, torn tail cut); with the recovery point
//   unknown (null: the checkpoint could not be read), every segment.
// - What a scan may cut, and whether the later segments go, is decided by
//   recoveryVerdict (recovery-verdict.ts), the one decision `seglog recover`
//   and `seglog verify` share: never at or below the recovery point, never a
//   sealed segment after a clean shutdown, never anything but a zero tail
//   when the recovery point is unknown; a refusal is
//   SEGLOG_ERR_LOG_CORRUPTION (kafka KAFKA_STORAGE_ERROR) with the file,
//   position and offset, and changes nothing on disk. onCorruption
//   'truncate' is Kafka's behaviour instead (cut at the first invalid batch,
//   delete every later segment), an operator's explicit choice. A log that
//   ends below a known recovery point is refused too, after a clean stop as
//   after an unclean one (a clean close checkpoints recovery point = LEO).
// - fsyncgate (reliability.md §2.1, ENGINE BUG 8 in
//   test/reliability-engine-bugs.test.ts): after an unclean stop, the bytes
//   of every recovered segment from the batch holding the recovery point on
//   are re-written unchanged and fdatasynced (Segment.rewriteFrom), then the
//   directory is fsynced. A process that died after a failed fsync leaves
//   page-cache copies that Linux marked clean: recovery would read them as
//   valid, a plain fdatasync would persist nothing, and the next flush would
//   report them durable; a power loss then leaves a hole below the recovery
//   point. Re-writing dirties them again, so after open every byte below
//   the LEO is durable by an fdatasync of this process or the checkpoint.
//   Cost: one more write of the unflushed tail, which recovery reads anyway.
// - Then: a log ending below logStartOffset loses every segment; an empty
//   directory gets one empty segment at logStartOffset; the active segment's
//   indexes get their full capacity back; the leader-epoch cache is cut at
//   both ends; recovery point = LEO after a clean stop or when it was
//   unknown (every segment was then scanned and re-written), else
//   min(recoveryPoint, LEO).
// - Producer state (§21 step 7): stray snapshots are removed; snapshots
//   above the first recovered segment's base go too (its .txnindex was reset
//   and must be rebuilt from state that is exact at its base); the newest
//   valid snapshot above the first segment's base is loaded (none: the
//   state starts at that base — the segment holding the log start offset,
//   as Kafka's, or an earlier one an interrupted retention left — not at the
//   log start offset) and the log replayed from it to the LEO with
//   replication origin, re-adding the aborted transactions of recovered
//   segments to their .txnindex; snapshots are taken at the last two segment
//   bases crossed and at the LEO. Deviation: Kafka skips the replay after a
//   clean stop with no snapshot (its upgrade path); we always replay, so a
//   directory written before producer state existed loads exactly.

import type { Io } from '@seglog/io';
import type { RecordBatch } from '@seglog/records';
import { FileNames } from '../file-names.js';
import { LeaderEpochCache } from '../checkpoint/leader-epoch-cache.js';
import type { LogConfig } from '../log-config.js';
import { ProducerStateManager } from '../producer/producer-state-manager.js';
import { withIndexes } from '../segment/index-residency.js';
import { assumeSealedState } from '../segment/segment-state.js';
import { Segment } from '../segment/segment.js';
import type { SegmentRecovery } from '../segment/segment.js';
import { recoveryVerdict } from './recovery-verdict.js';
import type { RecoveryFacts } from './recovery-verdict.js';
import { logCorruption } from '../internal/log-errors.js';
import { seams } from '../internal/test-seams.js';
import { recoverCleanerLeftovers } from '../cleaner/swap-recovery.js';
import type { SealedFacts } from '../log-dir/sealed-sizes.js';

export type CorruptionPolicy = 'fail' | 'truncate';

export interface LoadOptions {
  /** The checkpointed recovery point; null when the checkpoint could not be read (nothing may be cut without refusal). */
  readonly recoveryPoint: number | null;
  readonly logStartOffset: number;
  readonly hadCleanShutdown: boolean;
  /** With hadCleanShutdown: what the clean close knew of the sealed segments (log-dir/sealed-sizes.ts). */
  readonly sealedSizes?: ReadonlyMap<number, SealedFacts>;
  readonly onCorruption: CorruptionPolicy;
  readonly nowMs: number;
  readonly jitter: () => number;
}

export interface LoadedLog {
  readonly segments: Segment[];
  readonly epochCache: LeaderEpochCache;
  readonly producerState: ProducerStateManager;
  readonly recoveryPoint: number;
  readonly logStartOffset: number;
  readonly logEndOffset: number;
  /** Segments scanned by recovery. */
  readonly recoveredSegments: number;
  /** Bytes cut from torn tails, plus the sizes of later segments deleted. */
  readonly truncatedBytes: number;
}

/** Removes transient and orphan files; returns the base offsets that have a .log file, ascending, and the names left. */
async function cleanDirectory(io: Io, dir: string): Promise<{ bases: number[]; listing: Set<string> }> {
  const first = await io.readdir(dir);
  // The listing is read again only when the cleaner's leftovers changed it.
  const names = (await recoverCleanerLeftovers(io, dir, first)) > 0 ? await io.readdir(dir) : first;
  const logs = new Set<number>();
  const indexes: { name: string; offset: number }[] = [];
  let removed = 0;
  const listing = new Set(names);
  for (const name of names) {
    if (name.endsWith('.tmp')) {
      listing.delete(name);
      await io.unlink(`${dir}/${name}`);
      removed++;
      continue;
    }
    const parsed = FileNames.parseSegmentFileName(name);
    if (parsed === null) continue;
    if (parsed.transient !== null) {
      await io.unlink(`${dir}/${name}`);
      listing.delete(name);
      removed++;
    } else if (parsed.kind === 'log') {
      logs.add(parsed.offset);
    } else if (parsed.kind !== 'snapshot') {
      indexes.push({ name, offset: parsed.offset });
    }
  }
  for (const index of indexes) {
    if (logs.has(index.offset)) continue;
    await io.unlink(`${dir}/${index.name}`);
    listing.delete(index.name);
    removed++;
  }
  if (removed > 0) await io.fsyncDir(dir);
  return { bases: [...logs].sort((a, b) => a - b), listing };
}

function needsRebuild(segment: Segment): boolean {
  if (segment.indexWasMissing) return true;
  try {
    segment.sanityCheck();
    return false;
  } catch {
    return true;
  }
}

/** The index of the last segment with base ≤ offset (0 when offset is below every base). */
function floorIndex(segments: readonly Segment[], offset: number): number {
  let found = 0;
  for (let i = 0; i < segments.length; i++) if ((segments[i] as Segment).baseOffset <= offset) found = i;
  return found;
}

async function deleteSegmentFiles(io: Io, segment: Segment): Promise<void> {
  await segment.close();
  for (const kind of ['log', 'index', 'timeindex', 'txnindex'] as const) {
    const path = Segment.path(segment.dir, segment.baseOffset, kind);
    if (await io.exists(path)) await io.unlink(path);
  }
}

async function closeAll(segments: readonly Segment[]): Promise<void> {
  await Promise.allSettled(segments.map((segment) => segment.close()));
}

/** Epochs seen during recovery: only PLE ≥ 0 above the latest cached epoch (Kafka). */
function epochAssigner(cache: LeaderEpochCache, pending: Promise<boolean>[]): (batch: RecordBatch) => void {
  return (batch) => {
    const epoch = batch.partitionLeaderEpoch;
    if (epoch < 0 || epoch <= (cache.latestEpoch() ?? -1)) return;
    pending.push(cache.assign(epoch, batch.baseOffset));
  };
}

/** The facts recoveryVerdict judges, for one scanned segment. */
function factsOf(result: SegmentRecovery, options: LoadOptions, next: Segment | undefined): RecoveryFacts {
  return {
    hadCleanShutdown: options.hadCleanShutdown,
    recoveryPoint: options.recoveryPoint,
    stop: result.stop,
    nextOffset: result.nextOffset,
    truncatedBytes: result.truncatedBytes,
    nextSegmentBase: next === undefined ? null : next.baseOffset,
  };
}

/** Throws SEGLOG_ERR_LOG_CORRUPTION (file, position, offset) when the verdict refuses; the segment is then unchanged. */
function checkRecovery(segment: Segment, result: SegmentRecovery, options: LoadOptions, next: Segment | undefined): void {
  const verdict = recoveryVerdict(factsOf(result, options, next));
  if (verdict.action !== 'refuse') return;
  throw logCorruption(Segment.path(segment.dir, segment.baseOffset, 'log'), verdict.reason, {
    baseOffset: segment.baseOffset,
    position: result.validBytes,
    offset: result.nextOffset,
    recoveryPoint: options.recoveryPoint,
    stop: result.stop,
  }, result.error);
}

interface RecoveryOutcome {
  readonly segments: Segment[];
  /** Segments scanned by recovery (their .txnindex was reset). */
  readonly rebuilt: Set<Segment>;
  readonly recovered: number;
  readonly truncatedBytes: number;
}

/** Recovers or loads every segment in order; deletes the ones after a segment that lost bytes (when the verdict allows). */
async function recoverSegments(io: Io, segments: Segment[], cache: LeaderEpochCache, options: LoadOptions): Promise<RecoveryOutcome> {
  const start = recoveryStart(segments, options);
  const pending: Promise<boolean>[] = [];
  const onBatch = epochAssigner(cache, pending);
  // Kafka's rule (cut, delete later segments) only when the operator asked for it, or a test mutant.
  const mayRefuse = options.onCorruption !== 'truncate' && !seams.truncateBelowDurable;
  let recovered = 0;
  let truncatedBytes = 0;
  const rebuilt = new Set<Segment>();
  let rewritten = false;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] as Segment;
    // A clean segment whose scan does not end at its file size is recovered as after an unclean stop.
    let trusted = options.hadCleanShutdown;
    const following = segments[i + 1];
    // After a clean stop a sealed segment is not read: its state loads on first need (segment-state.ts).
    if (options.hadCleanShutdown && following !== undefined && !segment.indexWasMissing) {
      assumeSealedState(segment, following.baseOffset);
      continue;
    }
    if (i < start) {
      const found = await withIndexes(segment, async () => (needsRebuild(segment) ? 'rebuild' : (await segment.loadState()) ? 'loaded' : 'torn'), false);
      if (found === 'loaded') continue;
      if (found === 'torn') trusted = false;
    }
    // An index that fails its check is rebuilt from the .log; it never licenses a cut: the verdict decides.
    const result = await segment.recover(onBatch, mayRefuse ? (scanned) => checkRecovery(segment, scanned, options, following) : undefined);
    recovered++;
    rebuilt.add(segment);
    // fsyncgate: bytes beyond the recovery point are made durable before anything may report them so.
    if (!trusted && (await segment.rewriteFrom(options.recoveryPoint ?? segment.baseOffset)) > 0) rewritten = true;
    if (i < segments.length - 1) {
      await segment.offsetIndex.trim();
      await segment.timeIndex.trim();
      await segment.flushIndexes();
    }
    truncatedBytes += result.truncatedBytes;
    if (!deletesLater(result, options, following, mayRefuse)) continue;
    const later = segments.splice(i + 1);
    for (const doomed of later) {
      truncatedBytes += doomed.size;
      await deleteSegmentFiles(io, doomed);
    }
    if (later.length > 0) await io.fsyncDir(segments[0]?.dir ?? '');
  }
  await Promise.all(pending);
  // The segment files' directory entries too: a file created before the stop may not be durable yet.
  if (rewritten) await io.fsyncDir(segments[0]?.dir ?? '');
  return { segments, rebuilt, recovered, truncatedBytes };
}

/** The index of the first segment recovery scans: none after a clean stop, all when the recovery point is unknown. */
function recoveryStart(segments: readonly Segment[], options: LoadOptions): number {
  if (options.hadCleanShutdown) return segments.length;
  return options.recoveryPoint === null ? 0 : floorIndex(segments, options.recoveryPoint);
}

/**
 * Whether the segments after a recovered one go. With refusals on, the
 * verdict already passed (a refusal threw before anything changed), so it
 * says cut or keep. With onCorruption 'truncate' (Kafka's rule): any bytes
 * cut, except zeros right before the next segment, delete the later ones, as
 * does a gap after an unclean stop at or beyond the recovery point.
 */
function deletesLater(result: SegmentRecovery, options: LoadOptions, next: Segment | undefined, refusing: boolean): boolean {
  if (next === undefined) return false;
  const verdict = recoveryVerdict(factsOf(result, options, next));
  if (verdict.action === 'cut') return verdict.deleteLater;
  if (refusing || verdict.action === 'keep') return false;
  return !(result.stop === 'zero' && next.baseOffset === result.nextOffset);
}

function checkEnd(segments: readonly Segment[], logEndOffset: number, options: LoadOptions): void {
  if (options.onCorruption === 'truncate' || options.recoveryPoint === null || logEndOffset >= options.recoveryPoint) return;
  if (seams.truncateBelowDurable) return; // mutant
  const last = segments[segments.length - 1];
  const path = last === undefined ? '(none)' : Segment.path(last.dir, last.baseOffset, 'log');
  throw logCorruption(path, 'the log ends below the recovery point (durable data is missing)', {
    baseOffset: last?.baseOffset ?? -1,
    position: last?.size ?? 0,
    offset: logEndOffset,
    recoveryPoint: options.recoveryPoint,
  });
}

/** The recorded facts of a sealed segment whose .index and .timeindex are listed and that has no .txnindex (which loads eagerly). */
function knownFacts(sizes: ReadonlyMap<number, SealedFacts> | undefined, base: number, listing: ReadonlySet<string>): SealedFacts | undefined {
  const facts = sizes?.get(base);
  if (facts === undefined) return undefined;
  const has = (kind: 'index' | 'timeindex' | 'txnindex'): boolean => listing.has(FileNames.segmentFileName(base, kind, null));
  return has('index') && has('timeindex') && !has('txnindex') ? facts : undefined;
}

async function openSegments(io: Io, dir: string, config: LogConfig, options: LoadOptions): Promise<Segment[]> {
  const segments: Segment[] = [];
  try {
    const { bases, listing } = await cleanDirectory(io, dir);
    for (let i = 0; i < bases.length; i++) {
      const base = bases[i] as number;
      // A sealed segment the clean close recorded is opened without a stat, if the listing agrees with the record.
      const known = options.hadCleanShutdown && i < bases.length - 1 ? knownFacts(options.sealedSizes, base, listing) : undefined;
      segments.push(await Segment.open(io, dir, base, config, { nowMs: options.nowMs, rollJitterMs: options.jitter() }, listing, known));
    }
  } catch (error) {
    await closeAll(segments);
    throw error;
  }
  return segments;
}

/** Loads (and if needed recovers) the log in `dir`. */
export async function loadLog(io: Io, dir: string, config: LogConfig, options: LoadOptions): Promise<LoadedLog> {
  const existed = await io.exists(dir);
  if (!existed) await io.mkdir(dir, { recursive: true });
  // Always after an unclean stop, not only after our own mkdir: a crash
  // between an earlier open's mkdir and this fsync leaves the directory entry
  // pending, and records acknowledged later would vanish on power loss
  // (ENGINE BUG 1 in test/crash-points.test.ts). An existing directory after
  // a clean shutdown is already durable: the process that made it fsynced
  // the parent (here or in LogManager's create), and the clean-shutdown
  // marker's rename fsynced the data directory, its parent.
  if (!existed || !options.hadCleanShutdown) await io.fsyncDir(dir.slice(0, Math.max(1, dir.lastIndexOf('/'))));
  let segments = await openSegments(io, dir, config, options);
  let outcome: RecoveryOutcome;
  let cache: LeaderEpochCache;
  try {
    cache = await LeaderEpochCache.load(io, `${dir}/${FileNames.leaderEpochCheckpoint}`);
    outcome = await recoverSegments(io, segments, cache, options);
    segments = outcome.segments;
    const last = segments[segments.length - 1];
    checkEnd(segments, last === undefined ? options.logStartOffset : last.nextOffset, options);
    if (last !== undefined && last.nextOffset < options.logStartOffset) {
      for (const doomed of segments.splice(0)) await deleteSegmentFiles(io, doomed);
      await io.fsyncDir(dir);
    }
    if (segments.length === 0) {
      segments.push(await Segment.create(io, dir, options.logStartOffset, config, { nowMs: options.nowMs, rollJitterMs: options.jitter() }));
      await io.fsyncDir(dir);
    }
    await (segments[segments.length - 1] as Segment).resizeIndexes();
  } catch (error) {
    await closeAll(segments);
    throw error;
  }
  const first = segments[0] as Segment;
  const logEndOffset = (segments[segments.length - 1] as Segment).nextOffset;
  const logStartOffset = Math.max(options.logStartOffset, first.baseOffset);
  cache.truncateFromEnd(logEndOffset);
  cache.truncateFromStart(logStartOffset);
  // The truncations write the checkpoint in the background; a log is handed
  // out only once that write is done, so open() leaves no .tmp behind it and
  // a failed write refuses the open instead of surfacing later.
  try {
    await cache.flush();
  } catch (error) {
    await closeAll(segments);
    throw error;
  }
  // Unknown recovery point after an unclean stop: every segment was scanned and re-written (fsyncgate), so all is durable.
  const recoveryPoint = options.hadCleanShutdown || options.recoveryPoint === null ? logEndOffset : Math.min(options.recoveryPoint, logEndOffset);
  let producerState: ProducerStateManager;
  try {
    producerState = await loadProducerState(io, dir, config, segments, outcome.rebuilt, { logStartOffset, logEndOffset, nowMs: options.nowMs });
  } catch (error) {
    await closeAll(segments);
    throw error;
  }
  return { segments, epochCache: cache, producerState, recoveryPoint, logStartOffset, logEndOffset, recoveredSegments: outcome.recovered, truncatedBytes: outcome.truncatedBytes };
}

/** §21 step 7: the producer state at the LEO, from the newest usable snapshot and a replay of the log after it. */
async function loadProducerState(
  io: Io,
  dir: string,
  config: LogConfig,
  segments: readonly Segment[],
  rebuilt: ReadonlySet<Segment>,
  positions: { readonly logStartOffset: number; readonly logEndOffset: number; readonly nowMs: number },
): Promise<ProducerStateManager> {
  const psm = await ProducerStateManager.open({ io, dir, producerIdExpirationMs: config.producerIdExpirationMs });
  await psm.removeStraySnapshots(segments.map((segment) => segment.baseOffset));
  const firstRebuilt = segments.find((segment) => rebuilt.has(segment));
  if (firstRebuilt !== undefined) await psm.deleteSnapshotsAbove(firstRebuilt.baseOffset);
  // Kafka replays from the base of the segment holding the log start offset, not from the log start offset:
  // a producer whose batches all lie below it (deleteRecords inside a segment) must still be known, or its
  // retry is written again at a new offset (issue 23 item 1). We start at the first segment: the same one,
  // unless an interrupted retention left whole segments below it, whose batches still tell the exact first
  // offset of a transaction open across the log start (test/crash-points.test.ts, "log start inside a
  // segment", k=84: the rebuilt .txnindex said 3@13 where the transaction began at 9). Snapshots above that
  // base stay usable.
  const replayFrom = (segments[0] as Segment).baseOffset;
  await psm.truncateAndReload(Math.min(replayFrom, positions.logStartOffset), positions.logEndOffset, positions.nowMs);
  const snapshotBases = segments.slice(-2).map((segment) => segment.baseOffset);
  await replayProducerState(psm, segments, { upTo: positions.logEndOffset, rebuilt, snapshotBases });
  await psm.takeSnapshot();
  return psm;
}

export interface ReplayOptions {
  /** Replay batches below this offset only. */
  readonly upTo: number;
  /** Segments whose .txnindex was reset: their aborted transactions are re-added. */
  readonly rebuilt: ReadonlySet<Segment> | null;
  /** Segment bases at which to take a snapshot when the replay crosses them. */
  readonly snapshotBases: readonly number[];
}

/**
 * Replays the batches from the manager's map end offset up to `upTo`
 * (replication origin) into `psm`, segment by segment (Kafka's
 * loadProducersFromRecords, plus the .txnindex rebuild of recovered segments).
 */
export async function replayProducerState(psm: ProducerStateManager, segments: readonly Segment[], options: ReplayOptions): Promise<void> {
  for (const segment of segments) {
    if (segment.baseOffset >= options.upTo) break;
    if (segment.nextOffset <= psm.mapEndOffset) continue;
    if (options.snapshotBases.includes(segment.baseOffset) && segment.baseOffset > psm.mapEndOffset) {
      psm.updateMapEndOffset(segment.baseOffset);
      await psm.takeSnapshot();
    }
    const rebuild = options.rebuilt?.has(segment) ?? false;
    await segment.forEachBatch(psm.mapEndOffset, (batch) => {
      if (batch.lastOffset >= options.upTo) return;
      const replayed = psm.replayBatch(batch);
      if (replayed === null || !replayed.txn.isAborted || !rebuild) return;
      const txn = replayed.txn;
      segment.appendAbortedTxn({ producerId: txn.producerId, firstOffset: txn.firstOffset, lastOffset: txn.lastOffset, lastStableOffset: replayed.lastStableOffset });
    });
  }
  // The log may end past its last batch (an empty rolled segment, a truncation inside a batch).
  if (psm.mapEndOffset < options.upTo) psm.updateMapEndOffset(options.upTo);
}
