// WriteQueue: how the active segment is written. It owns the segment's
// SegmentWriter (buffered, or direct over a second O_DIRECT handle with
// staging chunks from the arena), its SegmentReservation (preallocated
// steps), and the tail-cache window's segment. Accepted bytes are booked in
// the active segment by the caller, then queued here at the segment's
// logical end; completed writes advance the written position and release
// written() waiters.
//
// Invariants:
// - Exactly one writer at a time, over the active segment; `ready` is false
//   while it is being made or replaced (open, roll, truncation, close), and
//   the caller path never queues then.
// - Queued positions are contiguous; nothing is queued past the reserved end
//   while the reservation grows (growth runs after drain(): the zero fill
//   starts at the file's current size, which an in-flight write could still
//   be extending).
// - Direct falls back to buffered for one segment when no staging chunk is
//   free (SEGLOG_ERR_LOG_STAGING_EXHAUSTED), the file system refuses
//   O_DIRECT, or no descriptor is left for the second handle.
// - Out of space or descriptors while growing the reservation is a retriable
//   refusal (SEGLOG_ERR_LOG_RESOURCE_UNAVAILABLE), not fail-stop: the fill
//   writes only past the logical end.
//
// Hot path: enqueue() runs per accepted append (caller or pool); it
// allocates nothing (the writer's listener closures are made once per
// segment, in activate()). A write carries the fdatasync (one pool job)
// when the flusher says a durable() waiter or the flush policy wants bytes
// it covers (LogFlusher.wantsSyncWith); its completion then acknowledges
// (LogFlusher.syncedByWrite) without a flush round.

import { AlignedArena } from '@seglog/io';
import type { Io, IoFile } from '@seglog/io';
import type { LogConfig } from '../log-config.js';
import type { ActiveWriteMode, DirectFallback, LogMetrics } from './log-types.js';
import { Segment } from '../segment/segment.js';
import type { TailCache } from '../cache/tail-cache.js';
import { DirectSegmentWriter } from '../segment/direct-segment-writer.js';
import type { LogFlusher } from './log-flusher.js';
import { isTransientResourceError, logResourceUnavailable } from '../internal/log-errors.js';
import type { LogPositions } from './log-positions.js';
import type { OffsetWaiters } from './offset-waiters.js';
import type { PlacementReason } from './placement.js';
import { DEFAULT_PREALLOCATE_MODE, SegmentReservation } from '../segment/segment-reservation.js';
import { BufferedSegmentWriter } from '../segment/segment-writer.js';
import type { BufferedWriterLimits, SegmentWriter } from '../segment/segment-writer.js';

const MiB = 1024 * 1024;
const BUFFERED_ALIGNMENT = 4096;
const noop = (): void => undefined;

export interface WriteQueueDeps {
  readonly io: Io;
  readonly dir: string;
  readonly config: LogConfig;
  readonly positions: LogPositions;
  readonly tailCache: TailCache;
  readonly writtenWaiters: OffsetWaiters;
  readonly flusher: LogFlusher;
  readonly metrics: LogMetrics;
  /** Staging memory of direct writers; null: a private 8 × 1 MiB arena made for the first direct segment. */
  readonly arena: AlignedArena | null;
  readonly writerLimits: BufferedWriterLimits;
  readonly reservationStepBytes: number;
  /** Fail-stop: the log goes offline. */
  readonly onFailure: (error: unknown) => void;
  /** Told of each segment that falls back from direct to buffered; null: nobody. */
  readonly onDirectFallback?: ((fallback: DirectFallback) => void) | null;
}

export class WriteQueue {
  private readonly io: Io;
  private readonly dir: string;
  private readonly config: LogConfig;
  private readonly positions: LogPositions;
  private readonly tailCache: TailCache;
  private readonly writtenWaiters: OffsetWaiters;
  private readonly flusher: LogFlusher;
  private readonly metrics: LogMetrics;
  private readonly writerLimits: BufferedWriterLimits;
  private readonly reservationStepBytes: number;
  private readonly onFailure: (error: unknown) => void;
  private readonly onDirectFallback: ((fallback: DirectFallback) => void) | null;
  private arena: AlignedArena | null;
  private segment: Segment;
  private writer: SegmentWriter;
  private writerWrites: number;
  private reservation: SegmentReservation;
  /** The active segment's O_DIRECT handle (direct mode), else null. */
  private directFile: IoFile | null;
  private activeMode: ActiveWriteMode;
  /** False while the active segment's writer is being made (open, roll, truncation). */
  private writerReady: boolean;
  /** Base offset of the segment whose bytes the tail cache holds. */
  private cacheBaseOffset: number;

  /** A placeholder over `segment` until activate() makes its writer and reservation. */
  constructor(deps: WriteQueueDeps, segment: Segment) {
    this.io = deps.io;
    this.dir = deps.dir;
    this.config = deps.config;
    this.positions = deps.positions;
    this.tailCache = deps.tailCache;
    this.writtenWaiters = deps.writtenWaiters;
    this.flusher = deps.flusher;
    this.metrics = deps.metrics;
    this.writerLimits = deps.writerLimits;
    this.reservationStepBytes = deps.reservationStepBytes;
    this.onFailure = deps.onFailure;
    this.onDirectFallback = deps.onDirectFallback ?? null;
    this.arena = deps.arena;
    this.segment = segment;
    this.writerWrites = 0;
    this.writer = this.newBufferedWriter(segment);
    this.reservation = new SegmentReservation(deps.io, segment.logFile.file, segment.size, {
      mode: 'none', segmentBytes: deps.config.segmentBytes, alignment: BUFFERED_ALIGNMENT, dir: deps.dir,
    });
    this.directFile = null;
    this.activeMode = 'buffered';
    this.writerReady = false;
    this.cacheBaseOffset = segment.baseOffset;
  }

  /** How the active segment is written now ('direct' may fall back to 'buffered' per segment). */
  get mode(): ActiveWriteMode {
    return this.activeMode;
  }

  /** Whether the active segment has a writer (the caller path needs one). */
  get ready(): boolean {
    return this.writerReady;
  }

  /** Base offset of the segment whose bytes the tail cache holds. */
  get cacheBase(): number {
    return this.cacheBaseOffset;
  }

  /** A roll's trim changes the file (direct page padding, a preallocated tail): it must be synced. */
  get trimChangesFile(): boolean {
    return this.activeMode === 'direct' || this.reservation.mode !== 'none';
  }

  /** The caller path's storage rules for `sizeInBytes` more: reserved room, then writer room. */
  roomFor(sizeInBytes: number): PlacementReason | null {
    if (this.reservation.needsGrowth(this.segment.size + sizeInBytes)) return 'reservation';
    if (!this.writer.hasRoom(sizeInBytes)) return 'room';
    return null;
  }

  /**
   * Pool side of an append of `sizeInBytes`: grows the reservation first when
   * needed (after draining: the zero fill starts at the file's current size),
   * then waits for writer room. Nothing is enqueued past reservedEnd while
   * grow runs: this runs inside the append's mutation.
   */
  async ensureRoom(sizeInBytes: number): Promise<void> {
    const end = this.segment.size + sizeInBytes;
    if (this.reservation.needsGrowth(end)) {
      await this.writer.drain();
      await this.growReservation(end);
    }
    if (!this.writer.hasRoom(sizeInBytes)) await this.writer.whenRoom();
  }

  /**
   * Grows the active segment's reservation. Out of space or descriptors
   * here is a retriable refusal (SEGLOG_ERR_LOG_RESOURCE_UNAVAILABLE), not
   * fail-stop: the fill writes only past the logical end, no batch byte is
   * at risk, and the next append tries again from the same reserved end.
   */
  async growReservation(end: number): Promise<void> {
    try {
      await this.reservation.grow(end);
    } catch (error) {
      if (isTransientResourceError(error)) throw logResourceUnavailable(this.dir, 'growing the segment reservation', error);
      throw error;
    }
  }

  /** Queues accepted bytes (already booked in the active segment) and caches them. */
  enqueue(bytes: Buffer, lastOffset: number): void {
    const position = this.segment.size - bytes.length;
    // A buffered writer queues `bytes` itself until written: the cache may hold it instead of copying.
    this.tailCache.append(position, bytes, this.activeMode === 'buffered');
    this.writer.enqueue(bytes, position, lastOffset);
  }

  /** Resolves when every queued byte is written; rejects with the first write failure. */
  drain(): Promise<void> {
    return this.writer.drain();
  }

  /** Issues now a write still waiting for its microtask (a durable() waiter just arrived: see SegmentWriter.issueQueued). */
  issueQueued(): void {
    if (this.writerReady) this.writer.issueQueued();
  }

  /** The tail cache now holds (only) `segment`'s bytes: a roll or a full truncation. */
  setCacheBase(segment: Segment): void {
    this.cacheBaseOffset = segment.baseOffset;
  }

  /**
   * Makes `segment` the one being written: the writer (direct per config,
   * falling back to buffered), its reservation, the cache window. Pool work
   * (opens a file, reads back a partial tail page).
   */
  async activate(segment: Segment): Promise<void> {
    this.writerReady = false;
    this.writerWrites = 0;
    this.segment = segment;
    let writer: SegmentWriter | null = null;
    if (this.config.writeMode === 'direct') writer = await this.openDirectWriter(segment);
    if (writer === null) {
      writer = this.newBufferedWriter(segment);
      this.activeMode = 'buffered';
    } else {
      this.activeMode = 'direct';
      this.metrics.directSegments++;
    }
    this.writer = writer;
    const file = this.directFile ?? segment.logFile.file;
    const alignment = this.directFile === null ? BUFFERED_ALIGNMENT : this.io.directAlignment;
    const capped = Math.ceil(this.config.segmentBytes / alignment) * alignment;
    this.reservation = new SegmentReservation(this.io, file, segment.size, {
      mode: this.config.preallocate ? DEFAULT_PREALLOCATE_MODE : 'none',
      stepBytes: Math.max(alignment, Math.min(Math.floor(this.reservationStepBytes / alignment) * alignment, capped)),
      segmentBytes: this.config.segmentBytes,
      alignment,
      dir: this.dir,
      freeSpaceFloorBytes: this.config.minFreeBytes,
    });
    this.cacheBaseOffset = segment.baseOffset;
    this.writerReady = true;
  }

  /**
   * The active segment stops being written (roll, truncation, close): drain,
   * close the writer (direct: trims the page padding, returns staging), trim
   * the reservation to the logical end when asked, close the O_DIRECT handle.
   */
  async deactivate(trim: boolean): Promise<void> {
    this.writerReady = false;
    const segment = this.segment;
    try {
      await this.writer.close();
      if (trim) await this.reservation.trim(segment.size);
    } finally {
      const file = this.directFile;
      this.directFile = null;
      if (file !== null) await file.close();
    }
  }

  /** Close of the log (after a failure too): returns direct staging memory, closes the O_DIRECT handle. */
  async release(drain: boolean): Promise<void> {
    if (drain) await this.writer.drain().catch(noop);
    this.writerReady = false;
    await this.writer.close().catch(noop);
    const directFile = this.directFile;
    this.directFile = null;
    if (directFile !== null) await directFile.close().catch(noop);
  }

  private newBufferedWriter(segment: Segment): SegmentWriter {
    const writer: BufferedSegmentWriter = new BufferedSegmentWriter(segment.logFile.file, segment.size, {
      onWritten: (position, lastOffset, syncedLastOffset) => this.onWritten(segment, writer, position, lastOffset, syncedLastOffset),
      onWriteError: (error) => this.onFailure(error),
      wantsSync: (lastOffset) => this.flusher.wantsSyncWith(segment, lastOffset),
    }, this.writerLimits.writebackBytes === undefined ? { ...this.writerLimits, writebackBytes: this.config.writebackBytes } : this.writerLimits);
    return writer;
  }

  /**
   * A direct writer over a new O_DIRECT handle, or null (fall back to
   * buffered for this segment): O_DIRECT refused, no staging chunk free, or
   * no descriptor for the second handle (EMFILE/ENFILE: the buffered handle
   * is already open, so the segment is written without one more).
   */
  private async openDirectWriter(segment: Segment): Promise<SegmentWriter | null> {
    let file: IoFile;
    try {
      file = await this.io.open(Segment.path(this.dir, segment.baseOffset, 'log'), { direct: true });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code !== 'SEGLOG_ERR_IO_DIRECT_UNSUPPORTED' && code !== 'SEGLOG_ERR_IO_TOO_MANY_FILES') throw error;
      this.fellBack(segment, code === 'SEGLOG_ERR_IO_DIRECT_UNSUPPORTED' ? 'unsupported' : 'descriptors', error);
      return null;
    }
    this.arena ??= new AlignedArena({ chunkBytes: MiB, chunkCount: 8 });
    try {
      const writer: DirectSegmentWriter = await DirectSegmentWriter.open(file, segment.size, {
        onWritten: (position, lastOffset, syncedLastOffset) => this.onWritten(segment, writer, position, lastOffset, syncedLastOffset),
        onWriteError: (error) => this.onFailure(error),
        wantsSync: (lastOffset) => this.flusher.wantsSyncWith(segment, lastOffset),
      }, { arena: this.arena, alignment: this.io.directAlignment });
      this.directFile = file;
      return writer;
    } catch (error) {
      await file.close().catch(noop);
      if ((error as { code?: unknown }).code !== 'SEGLOG_ERR_LOG_STAGING_EXHAUSTED') throw error;
      this.fellBack(segment, 'staging', error);
      return null;
    }
  }

  /** Counts a direct-to-buffered fallback and tells the hook (which may not throw into the roll). */
  private fellBack(segment: Segment, reason: DirectFallback['reason'], cause: unknown): void {
    this.metrics.directFallbacks++;
    const hook = this.onDirectFallback;
    if (hook === null) return;
    try {
      hook({ segmentBaseOffset: segment.baseOffset, reason, cause });
    } catch {
      // A reporting hook never changes what the roll does.
    }
  }

  private onWritten(segment: Segment, writer: SegmentWriter & { readonly writes: number }, position: number, lastOffset: number, syncedLastOffset: number): void {
    this.metrics.writes += writer.writes - this.writerWrites;
    this.writerWrites = writer.writes;
    segment.readablePosition = position;
    segment.readableNextOffset = lastOffset + 1;
    if (segment.baseOffset === this.cacheBaseOffset) this.tailCache.markWritten(position);
    const positions = this.positions;
    if (positions.state === 'offline') return;
    if (lastOffset + 1 > positions.written) positions.written = lastOffset + 1;
    this.writtenWaiters.releaseBelow(positions.written);
    // The write carried the fdatasync: acknowledge before looking for a round (which then finds nothing to do).
    if (syncedLastOffset >= 0) this.flusher.syncedByWrite(segment, syncedLastOffset + 1);
    this.flusher.maybeStart();
  }
}
