// SegmentScanner: a read-only, chunked walk over the record batches of one
// `.log` segment file (reference/kafka-storage.md §2, "Reading batches from a
// file"). It composes engine pieces only: `nextBatchSize` (file mode, an
// all-zero header is the end, as recovery treats preallocated space) decides
// the framing, `RecordBatch` is the view. It never writes.
//
// Format: a .log file is a concatenation of v2 batches, no header, no
// padding; each batch is `batchLength + 12` bytes. The scan ends at
// - 'end'     every byte was consumed by whole batches;
// - 'zero'    an all-zero header (preallocated, never written space);
// - 'partial' a trailing batch (or ≤ 17 bytes) that does not fit in the file;
// - 'corrupt' a framing error (batchLength < 14, bad magic): nothing after it
//             can be framed.
// A batch whose CRC does not match is still framed correctly and is yielded;
// judging it is the caller's business (dump prints it, verify reports it).
//
// Invariants: positions are byte positions in the file (int32), batches are
// yielded in file order with increasing positions, the RecordBatch view is
// valid only until the next call of next() (the window is reused).

import type { Io, IoFile } from '@seglog/io';
import { RecordBatch, nextBatchSize } from '@seglog/records';

export type ScanStop = 'end' | 'zero' | 'partial' | 'corrupt';

export interface ScanEnd {
  readonly stop: ScanStop;
  /** Position of the first byte not consumed by a whole batch. */
  readonly position: number;
  /** Bytes from `position` to the end of the file. */
  readonly trailingBytes: number;
  /** The framing error ('corrupt'), else null. */
  readonly error: unknown;
  /** For 'partial': the size the trailing batch header declares (-1 when fewer than 12 bytes remain). */
  readonly declaredBytes: number;
}

const CHUNK_BYTES = 1024 * 1024;
const LOG_OVERHEAD = 12;
const HEADER_SIZE_UP_TO_MAGIC = 17;

export class SegmentScanner {
  readonly path: string;
  readonly fileBytes: number;
  private readonly file: IoFile;
  private window: Buffer;
  /** File position of window[0]. */
  private windowStart: number;
  /** Valid bytes in window. */
  private windowBytes: number;
  private positionValue: number;
  private endValue: ScanEnd | null;

  private constructor(path: string, file: IoFile, fileBytes: number) {
    this.path = path;
    this.fileBytes = fileBytes;
    this.file = file;
    this.window = Buffer.alloc(Math.min(CHUNK_BYTES, Math.max(fileBytes, 1)));
    this.windowStart = 0;
    this.windowBytes = 0;
    this.positionValue = 0;
    this.endValue = null;
  }

  static async open(io: Io, path: string): Promise<SegmentScanner> {
    const file = await io.open(path, { readOnly: true });
    try {
      return new SegmentScanner(path, file, await file.size());
    } catch (error) {
      await file.close().catch(() => undefined);
      throw error;
    }
  }

  /** Position of the next batch (or of the end, once reached). */
  get position(): number {
    return this.positionValue;
  }

  /** How the scan ended; null until next() returned null. */
  get end(): ScanEnd | null {
    return this.endValue;
  }

  /**
   * The next batch (a view valid until the next call) and its position, or
   * null at the end (then `end` says why).
   */
  async next(): Promise<{ batch: RecordBatch; position: number } | null> {
    if (this.endValue !== null) return null;
    const position = this.positionValue;
    const remaining = this.fileBytes - position;
    await this.ensure(position, Math.min(remaining, LOG_OVERHEAD));
    const declared = remaining >= LOG_OVERHEAD ? this.window.readInt32BE(position - this.windowStart + 8) + LOG_OVERHEAD : -1;
    // The window must end at EOF or hold the whole declared batch, so that
    // nextBatchSize's "partial means end" answer is about the file, not the window.
    const wanted = declared > 0 && declared <= remaining ? declared : Math.min(remaining, HEADER_SIZE_UP_TO_MAGIC + 1);
    await this.ensure(position, wanted);
    const inWindow = position - this.windowStart;
    const windowEndsAtEof = this.windowStart + this.windowBytes === this.fileBytes;
    const frame = windowEndsAtEof || declared <= 0 || declared > remaining
      ? this.window.subarray(0, this.windowBytes)
      : this.window.subarray(0, inWindow + declared);
    let size: number;
    try {
      size = nextBatchSize(frame, inWindow, { mode: 'file', zeroHeaderIsEnd: true });
    } catch (error) {
      this.finish('corrupt', error, declared);
      return null;
    }
    if (size === 0) {
      this.finish(this.isZeroHeader(inWindow) ? 'zero' : remaining === 0 ? 'end' : 'partial', null, declared);
      return null;
    }
    if (size > remaining || (!windowEndsAtEof && declared !== size)) {
      // nextBatchSize judged the window, which held the whole batch; a mismatch is a bug here.
      throw new Error(`SegmentScanner: framing disagreement at position ${position}`);
    }
    const batch = new RecordBatch(this.window.subarray(inWindow, inWindow + size));
    this.positionValue = position + size;
    return { batch, position };
  }

  async close(): Promise<void> {
    await this.file.close();
  }

  private finish(stop: ScanStop, error: unknown, declared: number): void {
    const trailingBytes = this.fileBytes - this.positionValue;
    this.endValue = {
      stop: stop === 'partial' && trailingBytes === 0 ? 'end' : stop,
      position: this.positionValue,
      trailingBytes,
      error,
      declaredBytes: stop === 'partial' ? declared : -1,
    };
  }

  private isZeroHeader(inWindow: number): boolean {
    const end = Math.min(this.windowBytes, inWindow + HEADER_SIZE_UP_TO_MAGIC);
    if (end - inWindow < HEADER_SIZE_UP_TO_MAGIC) return false;
    for (let i = inWindow; i < end; i++) if (this.window[i] !== 0) return false;
    return true;
  }

  /** Makes the window hold file bytes [position, position + bytes) (bytes ≤ what the file has). */
  private async ensure(position: number, bytes: number): Promise<void> {
    const have = this.windowStart <= position && position + bytes <= this.windowStart + this.windowBytes;
    if (have) return;
    const want = Math.min(this.fileBytes - position, Math.max(bytes, CHUNK_BYTES));
    if (want > this.window.length) this.window = Buffer.alloc(want);
    const read = want === 0 ? 0 : await this.file.pread(this.window, position, want);
    this.windowStart = position;
    this.windowBytes = read;
  }
}
