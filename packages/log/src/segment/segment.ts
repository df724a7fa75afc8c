// Segment: one `<20-digit base offset>.log` file with its `.index`,
// `.timeindex` and (lazily) `.txnindex` (reference/kafka-storage.md §1, §2,
// §7, §15, §16, §18, §20, §21).
//
// On-disk format: the .log file is a plain concatenation of record batches v2
// (61-byte header, size = batchLength + 12), no file header, no padding. While
// the segment is active the file may be longer than its logical end: the Log's
// SegmentReservation reserves zeros ahead, and a direct writer pads its tail
// page with zeros. Both are trimmed to the logical size on roll and close;
// after a crash recovery stops at the first all-zero header.
//
// Invariants:
// - size = the logical end: bytes accepted (assigned a position). Positions
//   below readablePosition are in the file (written); readablePosition ≤ size.
//   For a sealed segment readablePosition = size.
// - Batches are contiguous from position 0; their offsets increase (gaps are
//   allowed for verbatim appends); every lastOffset − baseOffset fits int32.
// - Index entries are (batch lastOffset, batch start position) added when more
//   than indexIntervalBytes accumulated since the last entry (checked before
//   adding the batch), with the time-index entry (max timestamp so far, its
//   batch last offset) at the same moment (Kafka's LogSegment.append). The
//   .log file is authoritative: indexes are rebuilt by recover().
// - A trusted index (clean stop, or below the recovery point) is checked on
//   use, not at load: an offset-index entry must start a batch whose last
//   offset is the entry's offset, a time-index entry (T, O) must name the
//   batch ending at O with max timestamp exactly T (the one header read the
//   lookup does anyway, plus one for the time entry). A wrong entry, or a
//   malformed header reached through one, rebuilds the indexes from the
//   .log (rebuildIndexes) and the read is retried once; only a .log whose
//   own headers are bad is SEGLOG_ERR_LOG_CORRUPTION (ENGINE BUGS 5 and 6 in
//   test/reliability-engine-bugs.test.ts).
// - recover() keeps the longest valid prefix: it stops at the first partial,
//   all-zero, corrupt (framing, CRC) or out-of-order batch and cuts the file
//   there.
//
// Reads (offset translation, ranges, timestamp lookups, damage) are
// SegmentReader's, in segment-reader.ts; the recovery scan, index rebuild and
// fsyncgate re-write are in segment-recovery.ts; follower truncation and the
// reset before a recovery scan in segment-truncation.ts. Segment keeps the
// state. open() does not read the .index and .timeindex: every operation
// that looks at entries runs in withIndexes(), which loads them first and
// holds them in memory meanwhile; sealed ones are evicted under the
// LogManager's indexCacheBytes (index-residency.ts).

import type { SealedFacts } from '../log-dir/sealed-sizes.js';
import { assert } from '@seglog/common';
import type { Io, IoFile } from '@seglog/io';
import { RecordBatch } from '@seglog/records';
import { FileNames } from '../file-names.js';
import { deferredOpener, holdWhile, pinSegmentFiles } from '../log-dir/handle-cache.js';
import type { TransientKind } from '../file-names.js';
import { SegmentFileRef } from '../fetch-plan.js';
import type { BatchHeaderReader } from './batch-header-reader.js';
import type { DamagedRange } from '../recovery/damage-survey.js';
import type { LogConfig } from '../log-config.js';
import { forgetIndexes, sanityCheckIndexes, setIndexesPinned, withIndexes } from './index-residency.js';
import { OffsetIndex } from './offset-index.js';
import { ensureSegmentState } from './segment-state.js';
import { TimeIndex } from './time-index.js';
import { loadTrustedState, rebuildIndexesOnce, recoverSegment, rewriteFrom } from './segment-recovery.js';
import type { SegmentRecovery } from './segment-recovery.js';
import { SegmentReader } from './segment-reader.js';
import { resetSegmentState, truncateSegment } from './segment-truncation.js';
import type { SegmentRange, TimestampLookup } from './segment-reader.js';
import { TxnIndex } from './txn-index.js';
import type { AbortedTxn } from './txn-index.js';

const INT32_MAX = 0x7fffffff;

export type { RecoveryStop, SegmentRecovery } from './segment-recovery.js';
export type { SegmentRange, TimestampLookup } from './segment-reader.js';

export interface SegmentCreateOptions {
  readonly nowMs: number;
  /** The random jitter subtracted from segment.ms for this segment. */
  readonly rollJitterMs: number;
}


type FileKind = 'log' | 'index' | 'timeindex' | 'txnindex';

interface SegmentFiles {
  readonly logFile: SegmentFileRef;
  readonly offsetIndex: OffsetIndex;
  readonly timeIndex: TimeIndex;
  readonly txnIndex: TxnIndex | null;
}

interface OpenedParts extends SegmentFiles {
  readonly size: number;
  readonly lastModifiedMs: number;
  readonly indexWasMissing: boolean;
}

/** Segment.open's files: the .log stat'ed unless `known`, the sparse indexes lazily, existence from the listing when there is one. */
async function openParts(io: Io, path: (kind: FileKind) => string, baseOffset: number, config: LogConfig, listing: ReadonlySet<string> | undefined, known: SealedFacts | undefined): Promise<OpenedParts> {
  const stat = known === undefined ? await io.stat(path('log')) : { size: known.size, mtimeMs: known.mtimeMs };
  const listed = (kind: 'index' | 'timeindex' | 'txnindex'): boolean | undefined => listing?.has(FileNames.segmentFileName(baseOffset, kind, null));
  const indexWasMissing = !(listed('index') ?? (await io.exists(path('index'))));
  const logFile = new SegmentFileRef(await io.open(path('log')));
  holdWhile(logFile.file, logFile);
  try {
    const options = { baseOffset, maxIndexBytes: config.segmentIndexBytes, writeBackBytes: config.indexWriteBackBytes, lazy: true };
    const offsetIndex = await OffsetIndex.open(io, path('index'), { ...options, present: !indexWasMissing, knownBytes: known?.indexBytes });
    const timeIndex = await TimeIndex.open(io, path('timeindex'), { ...options, present: listed('timeindex'), knownBytes: known?.timeIndexBytes });
    const txnIndex = await TxnIndex.open(io, path('txnindex'), { baseOffset, present: listed('txnindex') });
    return { logFile, offsetIndex, timeIndex, txnIndex, size: stat.size, lastModifiedMs: stat.mtimeMs, indexWasMissing };
  } catch (error) {
    await logFile.release();
    throw error;
  }
}

/** A recorded sealed segment (both sparse indexes listed, no .txnindex) through a handle cache: built without I/O or awaits. */
function knownParts(io: Io, open: (path: string) => IoFile, path: (kind: FileKind) => string, baseOffset: number, config: LogConfig, known: SealedFacts): SegmentFiles {
  const logFile = new SegmentFileRef(open(path('log')));
  holdWhile(logFile.file, logFile);
  const options = { baseOffset, maxIndexBytes: config.segmentIndexBytes, writeBackBytes: config.indexWriteBackBytes, lazy: true };
  const offsetIndex = OffsetIndex.deferred(io, path('index'), options, open(path('index')), known.indexBytes);
  const timeIndex = TimeIndex.deferred(io, path('timeindex'), options, open(path('timeindex')), known.timeIndexBytes);
  const txnIndex = TxnIndex.absent(io, path('txnindex'), { baseOffset });
  return { logFile, offsetIndex, timeIndex, txnIndex };
}

/** Segment.create's files, leftovers with this base removed first; on failure the ones it made are removed again. */
async function createFiles(io: Io, path: (kind: FileKind) => string, baseOffset: number, config: LogConfig): Promise<SegmentFiles> {
  for (const kind of ['log', 'index', 'timeindex', 'txnindex'] as const) {
    if (await io.exists(path(kind))) await io.unlink(path(kind));
  }
  const file = await io.open(path('log'), { create: true, exclusive: true });
  const logFile = new SegmentFileRef(file);
  holdWhile(file, logFile);
  const opened: Array<{ delete(): Promise<void> }> = [];
  try {
    const indexOptions = { baseOffset, maxIndexBytes: config.segmentIndexBytes, writeBackBytes: config.indexWriteBackBytes };
    const offsetIndex = await OffsetIndex.open(io, path('index'), indexOptions);
    opened.push(offsetIndex);
    const timeIndex = await TimeIndex.open(io, path('timeindex'), indexOptions);
    opened.push(timeIndex);
    // Opening a missing .txnindex creates no file (it appears at the first abort).
    const txnIndex = await TxnIndex.open(io, path('txnindex'), { baseOffset });
    return { logFile, offsetIndex, timeIndex, txnIndex };
  } catch (error) {
    for (const index of opened) await index.delete().catch(() => undefined);
    await logFile.release();
    await io.unlink(path('log')).catch(() => undefined);
    throw error;
  }
}

export class Segment {
  readonly io: Io;
  readonly dir: string;
  readonly baseOffset: number;
  readonly config: LogConfig;
  /** The files' objects; null until first use for a recorded sealed segment (`deferred`: built then, without I/O). */
  private files: SegmentFiles | null;
  private readonly deferred: SealedFacts | null;
  private failureListener: ((error: unknown) => void) | null;
  size: number;
  readablePosition: number;
  /** Offset after the last accepted batch; the base offset when empty. */
  nextOffset: number;
  /** Offset after the last batch below readablePosition. */
  readableNextOffset: number;
  maxTimestampSoFar: number;
  offsetOfMaxTimestampSoFar: number;
  /** Max timestamp of the first batch (time-roll reference), -1 when none. */
  rollingBasedTimestamp: number;
  createdMs: number;
  rollJitterMs: number;
  lastModifiedMs: number;
  bytesSinceLastIndexEntry: number;
  /** The file was ftruncated to segment.bytes and must be trimmed on roll/close. */
  preallocated: boolean;
  /** False while a sealed segment's next offset is an upper bound and its timestamps unknown (segment-state.ts). */
  stateKnown: boolean;
  /** The .index file was missing on open: recover before use. */
  indexWasMissing: boolean;
  /** The size came from a clean close's record, not the file: checked at the first index load (index-residency.ts). */
  sizeUnverified: boolean;
  /** A running rebuildIndexes() (concurrent readers that find the index wrong share it). */
  private indexRebuild: Promise<void> | null;
  /** Offset translation, range and timestamp reads, and the damage they read around. */
  private readonly reader: SegmentReader;

  private constructor(io: Io, dir: string, baseOffset: number, config: LogConfig, parts: { files: SegmentFiles | null; deferred?: SealedFacts; size: number; nowMs: number; rollJitterMs: number; lastModifiedMs: number }) {
    this.io = io;
    this.dir = dir;
    this.baseOffset = baseOffset;
    this.config = config;
    this.files = parts.files;
    this.deferred = parts.deferred ?? null;
    this.failureListener = null;
    this.size = parts.size;
    this.readablePosition = parts.size;
    this.nextOffset = baseOffset;
    this.readableNextOffset = baseOffset;
    this.maxTimestampSoFar = -1;
    this.offsetOfMaxTimestampSoFar = baseOffset;
    this.rollingBasedTimestamp = -1;
    this.createdMs = parts.nowMs;
    this.rollJitterMs = parts.rollJitterMs;
    this.lastModifiedMs = parts.lastModifiedMs;
    this.bytesSinceLastIndexEntry = 0;
    this.preallocated = false;
    this.indexWasMissing = false;
    this.sizeUnverified = false;
    this.stateKnown = true;
    this.indexRebuild = null;
    this.reader = new SegmentReader(this);
  }

  get logFile(): SegmentFileRef { return this.opened().logFile; }
  get offsetIndex(): OffsetIndex { return this.opened().offsetIndex; }
  get timeIndex(): TimeIndex { return this.opened().timeIndex; }
  get txnIndex(): TxnIndex | null { return this.opened().txnIndex; }

  /** What a clean close records (log-dir/sealed-sizes.ts); a segment never used since a clean open gives back its record, unbuilt. */
  sealedFacts(): SealedFacts {
    if (this.files === null && this.deferred !== null && this.size === this.deferred.size) return this.deferred;
    return { size: this.size, mtimeMs: this.lastModifiedMs, indexBytes: this.offsetIndex.fileBytes, timeIndexBytes: this.timeIndex.fileBytes };
  }

  /** The files' objects, built on first use for a recorded sealed segment (synchronously, no I/O: knownParts). */
  private opened(): SegmentFiles {
    if (this.files !== null) return this.files;
    const open = deferredOpener(this.io) as (path: string) => IoFile;
    this.files = knownParts(this.io, open, (kind) => Segment.path(this.dir, this.baseOffset, kind), this.baseOffset, this.config, this.deferred as SealedFacts);
    if (this.failureListener !== null) this.setFailureListener(this.failureListener);
    return this.files;
  }

  static path(dir: string, baseOffset: number, kind: 'log' | 'index' | 'timeindex' | 'txnindex', transient: TransientKind | null = null): string {
    return `${dir}/${FileNames.segmentFileName(baseOffset, kind, transient)}`;
  }

  /**
   * Creates a new empty segment (leftover files with this base are removed
   * first). On failure nothing stays open and the files it created are
   * removed (best effort: a later create removes leftovers anyway), so a
   * refused roll or partition creation (EMFILE, ENOSPC) can be retried.
   */
  static async create(io: Io, dir: string, baseOffset: number, config: LogConfig, options: SegmentCreateOptions): Promise<Segment> {
    assert(Number.isSafeInteger(baseOffset) && baseOffset >= 0, 'Segment.create: baseOffset must be a non-negative safe integer');
    const files = await createFiles(io, (kind) => Segment.path(dir, baseOffset, kind), baseOffset, config);
    const segment = new Segment(io, dir, baseOffset, config, { files, size: 0, nowMs: options.nowMs, rollJitterMs: options.rollJitterMs, lastModifiedMs: options.nowMs });
    segment.pinFiles(true);
    return segment;
  }

  /**
   * Opens an existing segment, its size the file's or `known`'s (a clean close's record, log-dir/sealed-sizes.ts, checked at the first index load;
   * no I/O at all through a handle cache); `listing`: the directory's names (no exists() per index). Then loadState() or recover().
   */
  static async open(io: Io, dir: string, baseOffset: number, config: LogConfig, options: SegmentCreateOptions, listing?: ReadonlySet<string>, known?: SealedFacts): Promise<Segment> {
    const path = (kind: FileKind): string => Segment.path(dir, baseOffset, kind);
    if (known !== undefined && deferredOpener(io) !== null) {
      // Through a handle cache a recorded sealed segment is not even built until used: 100,000 of them cost GC, not I/O.
      const segment = new Segment(io, dir, baseOffset, config, { files: null, deferred: known, size: known.size, lastModifiedMs: known.mtimeMs, nowMs: options.nowMs, rollJitterMs: options.rollJitterMs });
      segment.sizeUnverified = true;
      return segment;
    }
    const parts = await openParts(io, path, baseOffset, config, listing, known);
    const segment = new Segment(io, dir, baseOffset, config, { files: parts, size: parts.size, lastModifiedMs: parts.lastModifiedMs, nowMs: options.nowMs, rollJitterMs: options.rollJitterMs });
    segment.indexWasMissing = parts.indexWasMissing;
    segment.sizeUnverified = known !== undefined;
    return segment;
  }

  get isEmpty(): boolean {
    return this.size === 0;
  }

  /** Kafka's largestTimestamp: the max batch timestamp, else the file's modification time. */
  get largestTimestamp(): number {
    return this.maxTimestampSoFar >= 0 ? this.maxTimestampSoFar : this.lastModifiedMs;
  }

  /** Throws SEGLOG_ERR_INDEX_CORRUPT when an index fails Kafka's sanity check or points past the file. */
  sanityCheck(): void {
    sanityCheckIndexes(this);
  }

  /**
   * For a trusted (cleanly closed) segment: the next offset and the max
   * timestamp, from the last index entries plus a header scan of what follows
   * them; the time-roll reference from the first batch. Returns false when
   * the file does not hold whole batches up to its size (a torn or garbage
   * tail written after the clean shutdown, or a malformed header): the
   * caller must recover() the segment instead. Bad disk data is never an
   * assertion.
   */
  /** Reads the state a clean open left unknown (no-op when known): before time retention, timestamp lookups, the cleaner. */
  ensureState(): Promise<void> {
    return ensureSegmentState(this);
  }
  loadState(): Promise<boolean> {
    return withIndexes(this, () => loadTrustedState(this));
  }

  /**
   * Bookkeeping for one batch about to be written at position `size`
   * (indexes, timestamps, size). The bytes go through the Log's writer.
   */
  appendBatch(sizeInBytes: number, lastOffset: number, maxTimestamp: number, nowMs: number): void {
    assert(lastOffset >= this.nextOffset, 'Segment.appendBatch: offsets must increase');
    assert(lastOffset - this.baseOffset <= INT32_MAX, 'Segment.appendBatch: offset does not fit the segment');
    const position = this.size;
    if (position === 0) this.rollingBasedTimestamp = maxTimestamp;
    if (maxTimestamp > this.maxTimestampSoFar) {
      this.maxTimestampSoFar = maxTimestamp;
      this.offsetOfMaxTimestampSoFar = lastOffset;
    }
    if (this.bytesSinceLastIndexEntry > this.config.indexIntervalBytes) {
      this.offsetIndex.append(lastOffset, position);
      this.timeIndex.maybeAppend(this.maxTimestampSoFar, this.offsetOfMaxTimestampSoFar);
      this.bytesSinceLastIndexEntry = 0;
    }
    this.size = position + sizeInBytes;
    this.bytesSinceLastIndexEntry += sizeInBytes;
    this.nextOffset = lastOffset + 1;
    this.lastModifiedMs = nowMs;
  }

  /**
   * Appends an aborted transaction (its ABORT marker is in this segment) to
   * the .txnindex. Returns true when this creates the file (the directory
   * must be fsynced by the next flush).
   */
  appendAbortedTxn(txn: AbortedTxn): boolean {
    const index = this.txnIndex;
    assert(index !== null, 'Segment.appendAbortedTxn: no transaction index');
    assert(txn.lastOffset >= this.baseOffset, 'Segment.appendAbortedTxn: the marker is below this segment');
    const created = index.isEmpty();
    index.append(txn);
    return created;
  }

  /**
   * Calls `onBatch` with a reused view of every batch with lastOffset ≥
   * `fromOffset` below the readable position, in order (producer-state
   * replay over written, trusted bytes; CRCs are not checked).
   */
  forEachBatch(fromOffset: number, onBatch: (batch: RecordBatch) => void): Promise<void> {
    return withIndexes(this, () => this.reader.forEachBatch(fromOffset, onBatch));
  }

  /** Kafka's shouldRoll (§15), for an append of `sizeInBytes` bytes ending at `lastOffset`. */
  shouldRoll(sizeInBytes: number, maxTimestamp: number, lastOffset: number, nowMs: number): boolean {
    if (this.size > this.config.segmentBytes - sizeInBytes) return true;
    if (this.size > 0) {
      const waited = this.rollingBasedTimestamp >= 0 && maxTimestamp >= 0 ? maxTimestamp - this.rollingBasedTimestamp : nowMs - this.createdMs;
      if (waited > this.config.segmentMs - this.rollJitterMs) return true;
    }
    if (this.offsetIndex.isFull() || this.timeIndex.isFull()) return true;
    const relative = lastOffset - this.baseOffset;
    return relative < 0 || relative > INT32_MAX;
  }

  /**
   * The batch holding `offset` (the first with lastOffset ≥ offset) below
   * `limit`: true with its header in `reader`, false when there is none.
   */
  translateOffset(offset: number, reader: BatchHeaderReader, limit = this.readablePosition): Promise<boolean> {
    return withIndexes(this, () => this.reader.translateOffset(offset, reader, limit));
  }

  /** The damaged ranges of the written bytes (recovery/damage-survey.ts), surveyed once and kept. */
  surveyDamage(): Promise<readonly DamagedRange[]> {
    return this.reader.surveyDamage();
  }

  /** The damaged ranges found so far (empty until a read found damage). */
  get damagedRanges(): readonly DamagedRange[] {
    return this.reader.damagedRanges;
  }

  /**
   * Whole batches from the one holding `startOffset`: at most `maxBytes`
   * (unless minOneMessage and the first batch alone is larger), only batches
   * with lastOffset < boundOffset, only written bytes. null when no batch
   * below the written position holds startOffset or later; length 0 when the
   * first batch does not fit. With `into`, the range's bytes may come back
   * in it (SegmentReader.readRange).
   */
  readRange(startOffset: number, maxBytes: number, boundOffset: number, minOneMessage: boolean, into: Buffer | null = null): Promise<SegmentRange | null> {
    return withIndexes(this, () => this.reader.readRange(startOffset, maxBytes, boundOffset, minOneMessage, into));
  }

  /**
   * Kafka's findOffsetByTimestamp: the first record with timestamp ≥
   * `timestamp` and offset ≥ `startingOffset`, or null.
   */
  findOffsetByTimestamp(timestamp: number, startingOffset: number): Promise<TimestampLookup | null> {
    return withIndexes(this, () => this.reader.findOffsetByTimestamp(timestamp, startingOffset));
  }

  /**
   * Rebuilds the indexes and state from the .log file (§21): scans from
   * position 0, checks framing and CRC of every batch, stops at the first
   * partial, all-zero, corrupt or out-of-order batch and cuts the file there.
   * `onBatch` sees every valid batch (leader-epoch rebuild); `checkBeforeCut`
   * may throw to refuse the cut (the file is then left as it was).
   */
  recover(onBatch: (batch: RecordBatch) => void, checkBeforeCut?: (result: SegmentRecovery) => void): Promise<SegmentRecovery> {
    return withIndexes(this, () => recoverSegment(this, () => this.resetForRecovery(), onBatch, checkBeforeCut), false);
  }

  /**
   * Rebuilds the offset and time indexes of the written bytes from the .log
   * (a header scan, same entry rule as appendBatch) without cutting
   * anything: a read found a trusted index wrong (ENGINE BUGS 5 and 6 in
   * test/reliability-engine-bugs.test.ts: one damaged byte must cost a
   * rebuild, not the durable records behind it). A malformed header in the
   * .log is real corruption and throws SEGLOG_ERR_LOG_CORRUPTION. Safe beside
   * concurrent reads and appends: the new entries are installed in one
   * synchronous step; entries the active segment added at or past the
   * scanned limit are kept (dropping an entry only lengthens a scan).
   * Concurrent callers share one rebuild.
   */
  rebuildIndexes(): Promise<void> {
    if (this.indexRebuild === null) {
      this.indexRebuild = withIndexes(this, () => rebuildIndexesOnce(this), false).finally(() => {
        this.indexRebuild = null;
      });
    }
    return this.indexRebuild;
  }


  /**
   * fsyncgate (reliability.md §2.1): re-writes, unchanged, the bytes of the
   * batches holding offsets ≥ `fromOffset` and fdatasyncs the file, so bytes
   * whose writeback failed before an unclean stop really become durable
   * (segment-recovery.ts). Returns the bytes re-written.
   */
  rewriteFrom(fromOffset: number): Promise<number> {
    return withIndexes(this, () => rewriteFrom(this, fromOffset));
  }

  /**
   * Follower truncation (§18): cuts the file at the start of the first batch
   * with lastOffset ≥ offset and drops index entries ≥ offset. Returns the
   * bytes cut. The caller has drained pending writes (segment-truncation.ts).
   */
  truncateTo(offset: number, nowMs: number): Promise<number> {
    this.reader.forgetCheckedFraming();
    return withIndexes(this, () => truncateSegment(this, offset, nowMs));
  }

  private resetForRecovery(): Promise<void> {
    this.reader.forgetCheckedFraming();
    return resetSegmentState(this);
  }

  /** On roll (Kafka's onBecomeInactive): final time-index entry, trim indexes and a preallocated file. */
  async onBecomeInactive(): Promise<void> {
    this.timeIndex.maybeAppend(this.maxTimestampSoFar, this.offsetOfMaxTimestampSoFar, true);
    await this.offsetIndex.trim();
    await this.timeIndex.trim();
    await this.trimLog();
  }

  /**
   * Active segments keep their descriptors and indexes (pinned); a sealed
   * one's are the handle cache's and index budget's to drop while idle
   * (handle-cache.ts, index-residency.ts). Pinned by create() and
   * resizeIndexes(); the roll unpins the old segment once its successor
   * exists, so a refused roll resumes with its descriptors open.
   */
  pinFiles(pinned: boolean): void {
    const kinds = ['log', 'index', 'timeindex', 'txnindex'] as const;
    pinSegmentFiles(this.io, kinds.map((kind) => Segment.path(this.dir, this.baseOffset, kind)), pinned);
    setIndexesPinned(this, pinned);
  }

  /** Cuts a preallocated file to the logical size. */
  async trimLog(): Promise<void> {
    if (!this.preallocated) return;
    await this.logFile.file.truncate(this.size);
    this.preallocated = false;
  }

  /** Restores the indexes' capacity (the active segment after load and truncation). */
  resizeIndexes(): Promise<void> {
    return withIndexes(this, async () => {
      this.pinFiles(true);
      await this.offsetIndex.resize(this.config.segmentIndexBytes);
      await this.timeIndex.resize(this.config.segmentIndexBytes);
    });
  }

  /**
   * Routes the first failure of any index file operation (background
   * write-backs nobody awaits included) to `listener`: the owning Log's
   * fail-stop, so the failure takes the log offline before any later
   * acknowledgement instead of surfacing at close().
   */
  setFailureListener(listener: (error: unknown) => void): void {
    this.failureListener = listener;
    if (this.files === null) return; // applied when the files are built
    this.offsetIndex.setFailureListener(listener);
    this.timeIndex.setFailureListener(listener);
    this.txnIndex?.setFailureListener(listener);
  }

  /** Waits for the indexes' pending write-backs (no fdatasync); rejects with the first failure. */
  async drainIndexes(): Promise<void> {
    if (this.files === null) return;
    await this.offsetIndex.drain();
    await this.timeIndex.drain();
    if (this.txnIndex !== null) await this.txnIndex.drain();
  }

  /** Every index write-back has landed (drainIndexes() would find nothing to wait for). */
  get indexesSettled(): boolean {
    return this.files === null || (this.offsetIndex.settled && this.timeIndex.settled && (this.txnIndex?.settled ?? true));
  }

  /** Writes back and fdatasyncs the indexes (rebuildable, so off the hot path). */
  async flushIndexes(): Promise<void> {
    if (this.files === null) return;
    await this.offsetIndex.flush();
    await this.timeIndex.flush();
    if (this.txnIndex !== null) await this.txnIndex.flush();
  }

  /** Renames every file to `<name>.deleted`; the segment stays readable through open handles. */
  async renameToDeleted(): Promise<void> {
    const logPath = Segment.path(this.dir, this.baseOffset, 'log');
    await this.io.rename(logPath, `${logPath}.deleted`);
    await this.offsetIndex.renameTo(Segment.path(this.dir, this.baseOffset, 'index', 'deleted'));
    await this.timeIndex.renameTo(Segment.path(this.dir, this.baseOffset, 'timeindex', 'deleted'));
    if (this.txnIndex !== null) await this.txnIndex.renameTo(Segment.path(this.dir, this.baseOffset, 'txnindex', 'deleted'));
  }

  /** Closes the indexes (trimmed, not synced) and drops the owner's reference on the .log handle. */
  async close(): Promise<void> {
    forgetIndexes(this);
    if (this.files === null) return; // never used: nothing is open
    const results = await Promise.allSettled([
      this.offsetIndex.close(),
      this.timeIndex.close(),
      this.txnIndex === null ? Promise.resolve() : this.txnIndex.close(),
      this.logFile.isClosed ? Promise.resolve() : this.logFile.release(),
    ]);
    for (const result of results) if (result.status === 'rejected') throw result.reason;
  }
}

