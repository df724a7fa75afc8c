// WindowCleaner: the CPU half of one cleaning pass (clean-pass.ts does the
// I/O): it walks the whole batches of windows of a sealed segment's bytes,
// maps their keys (phase 1, the offset map) and filters them (phase 2,
// batch-filter.ts), with no file, timer or socket of its own. So the same
// code runs on the event loop (InlineCompute, in slices) or in the cleaner's
// worker thread (cleaner-worker.ts), and both give the same bytes.
//
// A window is a copy of [position, position + length) of one segment of
// `limit` bytes (the segment size). A walk consumes whole batches from the
// window's `from` and stops at the first batch that does not lie wholly in
// it (needBytes: read a window at position + consumed of at least that many
// bytes), at the segment end, after maxBytes (a slice), when the caller said
// stop (the map is full) or at damage. Every batch is CRC-checked
// (validateFollowerBatch) before it is used: a bad one is reported as
// `corrupt` with its position, and the pass stops changing nothing.

import { nextBatchSize, validateFollowerBatch } from '@seglog/records';
import type { RecordBatch } from '@seglog/records';
import { AbortedRanges, emptyBatch, filterBatch, mappedKeys } from './batch-filter.js';
import type { FilterContext, FilterOutcome } from './batch-filter.js';
import { OffsetMap } from './offset-map.js';

/** baseOffset, batchLength: the bytes batchLength does not count, and what a walk needs to size a batch. */
const SIZE_FIELD_END = 12;
const MIN_BATCH_BYTES = 61;

/** What a pass's compute needs to know of the log, as plain data (it crosses to the worker). */
export interface PassSetup {
  readonly offsetMapBytes: number;
  readonly firstDirtyOffset: number;
  readonly nowMs: number;
  readonly deleteRetentionMs: number;
  /** [producerId, firstOffset, lastOffset] of every aborted transaction of the log. */
  readonly aborted: ReadonlyArray<readonly [number, number, number]>;
  /** [producerId, lastDataOffset] of every active producer. */
  readonly lastBatchOfProducer: ReadonlyArray<readonly [number, number]>;
}

/** Where a window lies: the file position of its byte 0 and the segment's size. */
export interface WindowSpan {
  readonly position: number;
  readonly limit: number;
}

export interface Corruption {
  readonly position: number;
  readonly reason: string;
  readonly cause: string | null;
}

export interface WalkResult {
  /** Bytes of whole batches consumed from `from`. */
  consumed: number;
  /** The caller's onBatch said stop (the map is full). */
  stopped: boolean;
  /** > 0: the next batch needs a window of at least this many bytes at position + from + consumed. */
  needBytes: number;
  corrupt: Corruption | null;
}

export interface MapResult extends WalkResult {
  /** The offset after the last batch mapped so far this pass (firstDirtyOffset: none). */
  mapEnd: number;
}

export interface FilterResult extends WalkResult {
  /** The kept batches' bytes, in order (verbatim or rebuilt). */
  output: Buffer[];
  removedRecords: number;
}

function walk(window: Buffer, from: number, to: number, span: WindowSpan, maxBytes: number, onBatch: (batch: RecordBatch, lastInSegment: boolean) => boolean, view: { batch: RecordBatch | undefined }): WalkResult {
  let p = from;
  const result: WalkResult = { consumed: 0, stopped: false, needBytes: 0, corrupt: null };
  while (p - from < maxBytes) {
    const position = span.position + p;
    if (position >= span.limit) break;
    if (span.limit - position < SIZE_FIELD_END) {
      result.corrupt = { position, reason: 'trailing bytes shorter than a batch header', cause: null };
      break;
    }
    if (p + SIZE_FIELD_END > to) {
      result.needBytes = SIZE_FIELD_END;
      break;
    }
    const size = window.readInt32BE(p + 8) + SIZE_FIELD_END;
    if (size < MIN_BATCH_BYTES || position + size > span.limit) {
      result.corrupt = { position, reason: `batch size ${size} runs past the segment end`, cause: null };
      break;
    }
    if (p + size > to) {
      result.needBytes = size;
      break;
    }
    const frame = window.subarray(p, p + size);
    let batch: RecordBatch;
    try {
      if (nextBatchSize(frame, 0, { mode: 'file' }) !== size) throw new Error('framing');
      batch = validateFollowerBatch(frame, 0, view.batch);
      view.batch = batch;
    } catch (error) {
      result.corrupt = { position, reason: 'batch fails its CRC or framing', cause: error instanceof Error ? error.message : String(error) };
      break;
    }
    if (!onBatch(batch, position + size >= span.limit)) {
      result.stopped = true;
      break;
    }
    p += size;
  }
  result.consumed = p - from;
  return result;
}

export class WindowCleaner {
  private readonly firstDirtyOffset: number;
  private readonly map: OffsetMap;
  private readonly ctx: FilterContext;
  private readonly keys: Buffer[];
  private readonly offsets: number[];
  private readonly view: { batch: RecordBatch | undefined };
  private mapEnd: number;
  private mapEndOffsetSet: boolean;

  constructor(setup: PassSetup) {
    this.firstDirtyOffset = setup.firstDirtyOffset;
    this.map = new OffsetMap(setup.offsetMapBytes);
    const aborted = new AbortedRanges();
    for (const [producerId, first, last] of setup.aborted) aborted.add(producerId, first, last);
    this.ctx = {
      map: this.map, mapEndOffset: setup.firstDirtyOffset, nowMs: setup.nowMs, deleteRetentionMs: setup.deleteRetentionMs,
      lastBatchOfProducer: new Map(setup.lastBatchOfProducer), aborted, txnKept: new Map(), earliestHorizonMs: Number.POSITIVE_INFINITY,
    };
    this.keys = [];
    this.offsets = [];
    this.view = { batch: undefined };
    this.mapEnd = setup.firstDirtyOffset;
    this.mapEndOffsetSet = false;
  }

  /** Phase 1: maps the keys of the window's batches at or above firstDirtyOffset; stops when the next batch does not fit the map. */
  mapWindow(window: Buffer, from: number, to: number, span: WindowSpan, maxBytes: number): MapResult {
    const walked = walk(window, from, to, span, maxBytes, (batch) => {
      if (batch.lastOffset < this.firstDirtyOffset) return true;
      mappedKeys(batch, this.ctx.aborted, this.keys, this.offsets);
      if (!this.map.fits(this.map.costOf(this.keys))) return false;
      for (let k = 0; k < this.keys.length; k++) this.map.put(this.keys[k] as Buffer, this.offsets[k] as number);
      this.mapEnd = batch.lastOffset + 1;
      return true;
    }, this.view);
    this.keys.length = 0;
    return { ...walked, mapEnd: this.mapEnd };
  }

  /** Ends phase 1: offsets at or above mapEndOffset were not mapped. Returns the keys mapped. */
  startFilter(mapEndOffset: number): number {
    this.ctx.mapEndOffset = mapEndOffset;
    this.mapEndOffsetSet = true;
    return this.map.size;
  }

  /**
   * Phase 2: filters the window's batches. `lastSegment`: the window is of
   * the group's last segment, whose last batch stays (emptied if nothing of
   * it is kept) so the group's offset range is kept.
   */
  filterWindow(window: Buffer, from: number, to: number, span: WindowSpan, options: { readonly lastSegment: boolean; readonly maxBytes: number }): FilterResult {
    if (!this.mapEndOffsetSet) throw new Error('WindowCleaner: filterWindow before startFilter');
    const output: Buffer[] = [];
    let removedRecords = 0;
    const walked = walk(window, from, to, span, options.maxBytes, (batch, lastInSegment) => {
      let outcome: FilterOutcome = filterBatch(batch, this.ctx);
      if (outcome.kind === 'drop' && options.lastSegment && lastInSegment) {
        outcome = batch.isControl ? { kind: 'keep', removedRecords: 0 } : { kind: 'rebuilt', bytes: emptyBatch(batch), removedRecords: outcome.removedRecords };
      }
      removedRecords += outcome.removedRecords;
      if (outcome.kind === 'keep') output.push(Buffer.from(batch.bytes()));
      else if (outcome.kind === 'rebuilt') output.push(outcome.bytes);
      return true;
    }, this.view);
    return { ...walked, output, removedRecords };
  }

  /** The earliest delete horizon among the batches kept (Infinity: none). */
  get earliestHorizonMs(): number {
    return this.ctx.earliestHorizonMs;
  }
}
