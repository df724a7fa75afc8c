// BatchWindowIndex: one native call per window of batches (a read's 1 MiB
// window, say) that checks every batch's CRC and decodes the records of the
// plain ones into a table, so that a RecordCursor opened on such a batch
// steps through the table instead of decoding (@seglog/native indexBatches).
//
// Use: index(buf, from, to) once per window, then apply(batch, ...) for each
// batch handed out of buf[from, to) in order. apply() matches the batch to
// the entry written for its position in that same buffer; a batch it has no
// entry for (the native addon is not loaded, the window's table was full, a
// batch assembled elsewhere) gets the JavaScript paths: its CRC is computed
// here, its records are decoded by the cursor. So the answers, and every
// error, are those of RecordBatch.computeCrc and RecordCursor without it
// (test/batch-window-index.test.ts holds the two to the same results).
//
// The table is reused by the next index(): a cursor must finish (or reopen)
// the batch before the window is indexed again, as it must before the
// window's bytes are reused.
import { assert } from '@seglog/common';
import { BATCH_INDEX, indexBatches, indexBatchesAsync } from '@seglog/native';
import { checkCrc } from './internal/check-crc.js';
import type { RecordBatch } from './record-batch.js';

export interface BatchWindowIndexOptions {
  /** Batch entries per window (batches past them take the JavaScript paths). Default 8192. */
  readonly maxBatches?: number;
  /** Record entries per window (32 bytes each). Default 32768 (1 MiB). */
  readonly maxRecords?: number;
}

const { BATCH_STRIDE, FLAG_CRC_OK, FLAG_INDEXED } = BATCH_INDEX;

export class BatchWindowIndex {
  /** Whether index() does anything in this process (the native addon is loaded). */
  static get available(): boolean { return indexBatches !== null; }

  private readonly batches: Int32Array;
  private readonly records: Int32Array;
  private buf: Uint8Array | null = null;
  private from = 0;
  private to = 0;
  private count = 0;
  /** An indexAsync() job owns the tables. */
  private pending = false;
  /** The entry apply() looks at first (batches are applied in order). */
  private cursor = 0;

  constructor(options: BatchWindowIndexOptions = {}) {
    const maxBatches = options.maxBatches ?? 8192;
    const maxRecords = options.maxRecords ?? 32768;
    assert(Number.isSafeInteger(maxBatches) && maxBatches >= 1, 'BatchWindowIndex: maxBatches must be an integer >= 1');
    assert(Number.isSafeInteger(maxRecords) && maxRecords >= 1, 'BatchWindowIndex: maxRecords must be an integer >= 1');
    this.batches = new Int32Array(maxBatches * BATCH_STRIDE);
    this.records = new Int32Array(maxRecords * BATCH_INDEX.RECORD_STRIDE);
  }

  /** Indexes the whole batches of buf[from, to) (replacing the previous window); returns how many got an entry. */
  index(buf: Uint8Array, from: number, to: number): number {
    this.start(buf, from, to);
    // Positions are int32s; a window of 2 GiB or more is left to the JavaScript paths.
    if (indexBatches !== null && to < 2 ** 31) this.count = indexBatches(buf, from, to, this.batches, this.records);
    this.set(buf, from, to);
    return this.count;
  }

  /**
   * index() as a threadpool job (the event loop is free meanwhile; ~30 us of
   * hop, so for windows of many batches). Until it settles nothing may
   * index, apply or write buf's bytes in [from, to).
   */
  async indexAsync(buf: Uint8Array, from: number, to: number): Promise<number> {
    this.start(buf, from, to);
    if (indexBatchesAsync !== null && to < 2 ** 31) {
      this.pending = true;
      try {
        this.count = await indexBatchesAsync(buf, from, to, this.batches, this.records);
      } finally {
        this.pending = false;
      }
    }
    this.set(buf, from, to);
    return this.count;
  }

  /** Whether the window last indexed is exactly buf[from, to). */
  covers(buf: Uint8Array, from: number, to: number): boolean {
    return this.buf === buf && this.from === from && this.to === to;
  }

  /** Forgets the window (drops the reference to its buffer). */
  clear(): void {
    assert(!this.pending, 'BatchWindowIndex.clear: an indexAsync() is in flight');
    this.buf = null;
    this.count = 0;
    this.cursor = 0;
  }

  private start(buf: Uint8Array, from: number, to: number): void {
    assert(!this.pending, 'BatchWindowIndex: an indexAsync() is in flight');
    assert(Number.isInteger(from) && Number.isInteger(to) && from >= 0 && from <= to && to <= buf.length,
      'BatchWindowIndex.index: need 0 <= from <= to <= buf.length');
    this.buf = null;
    this.count = 0;
    this.cursor = 0;
  }

  private set(buf: Uint8Array, from: number, to: number): void {
    this.buf = buf;
    this.from = from;
    this.to = to;
  }

  /**
   * For a batch of the indexed window: throws the CRC_MISMATCH RecordsError
   * (as validateBatch does) when `verifyCrc` and the stored CRC is wrong,
   * and attaches the batch's record entries when `attach` and it has them.
   * A batch without an entry has its CRC computed here and no entries.
   */
  apply(batch: RecordBatch, verifyCrc: boolean, attach: boolean): void {
    assert(!this.pending, 'BatchWindowIndex.apply: an indexAsync() is in flight');
    const entry = this.find(batch);
    if (entry < 0) {
      if (verifyCrc) checkCrc(batch);
      return;
    }
    const flags = this.batches[entry * BATCH_STRIDE + 2]!;
    if (verifyCrc && (flags & FLAG_CRC_OK) === 0) checkCrc(batch); // throws the error with both CRCs
    if (attach && (flags & FLAG_INDEXED) !== 0) batch.attachRecordIndex(this.records, this.batches[entry * BATCH_STRIDE + 3]!);
  }

  /** The entry of `batch` (a view of the same bytes as the indexed one, same start and size), or -1. */
  private find(batch: RecordBatch): number {
    const buf = this.buf;
    // Entries hold positions in the indexed view: the batch's buffer must start where it does.
    if (buf === null || batch.buffer.buffer !== buf.buffer || batch.buffer.byteOffset !== buf.byteOffset) return -1;
    const start = batch.start;
    const b = this.batches;
    for (let e = this.cursor; e < this.count; e++) {
      const at = b[e * BATCH_STRIDE]!;
      if (at < start) continue;
      if (at > start) break;
      this.cursor = e + 1;
      return b[e * BATCH_STRIDE + 1] === batch.sizeInBytes ? e : -1;
    }
    return -1;
  }
}
