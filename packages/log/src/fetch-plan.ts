// FetchPlan: what a read returns. An ordered list of parts, each either an
// in-memory slice (`inline`) or a byte range of a segment's .log file
// (`file`), plus the log positions at the time of the read. The fetch layer
// turns it into socket writes (sendfile for file parts); tests and tools call
// toBuffer().
//
// Lifetime: a file part holds a reference on its SegmentFileRef. The .log
// handle is closed only when the segment has been closed or deleted (the
// owner's reference released) AND every plan holding it was released. So a
// plan stays servable across retention, roll and truncation: deletion only
// renames the file, and the handle keeps the inode. (Bytes cut away by a
// truncation of the same file are gone; a reader must not be handed a range a
// truncation may cut: reads stop at the written position and truncation waits
// for nothing, as in Kafka, so a racing truncation shortens what toBuffer()
// reads, never changes bytes under it.)

import { assert, SeglogError } from '@seglog/common';
import type { IoFile } from '@seglog/io';
import type { AbortedTxn } from './segment/txn-index.js';

/**
 * A reference-counted handle to a segment's open .log file. The segment owns
 * one reference; every plan part retains one more. The file is closed when
 * the count reaches zero.
 */
export class SegmentFileRef {
  readonly file: IoFile;
  private refs: number;
  private closePromise: Promise<void> | null;

  constructor(file: IoFile) {
    this.file = file;
    this.refs = 1;
    this.closePromise = null;
  }

  get path(): string {
    return this.file.path;
  }

  /** References held (the owner's included until it releases). */
  get refCount(): number {
    return this.refs;
  }

  get isClosed(): boolean {
    return this.refs === 0;
  }

  retain(): this {
    assert(this.refs > 0, 'SegmentFileRef.retain: file already closed');
    this.refs++;
    return this;
  }

  /**
   * Drops one reference; the last one closes the file. Resolves when the
   * file is closed (at once when other references remain). A close error is
   * swallowed: the handle is gone either way and nothing was written through it.
   */
  release(): Promise<void> {
    assert(this.refs > 0, 'SegmentFileRef.release: released more often than retained');
    this.refs--;
    if (this.refs > 0) return Promise.resolve();
    this.closePromise = this.file.close().catch(() => undefined);
    return this.closePromise;
  }
}

export type FetchPart =
  | { readonly kind: 'inline'; readonly buffer: Buffer }
  | {
    readonly kind: 'file'; readonly file: SegmentFileRef; readonly position: number; readonly length: number;
    /**
     * The part's bytes as read when the plan was made, when the read was
     * given a buffer (ReadOptions.into): a view of that buffer, valid while
     * its owner does not reuse it. Like an inline part, they do not change
     * if the file is truncated afterwards.
     */
    readonly bytes?: Buffer;
  };

export type IsolationLevel = 'read_uncommitted' | 'read_committed';

export interface FetchPlanFields {
  readonly parts: readonly FetchPart[];
  /** Base offset of the first batch (may be below the requested offset); the requested offset when empty. */
  readonly firstOffset: number;
  /** The offset to fetch next: after the last batch returned; the requested offset when empty. */
  readonly nextOffset: number;
  readonly highWatermark: number;
  readonly lastStableOffset: number;
  readonly logStartOffset: number;
  readonly abortedTransactions: readonly AbortedTxn[];
}

export class FetchPlan {
  readonly parts: readonly FetchPart[];
  readonly totalBytes: number;
  readonly firstOffset: number;
  readonly nextOffset: number;
  readonly highWatermark: number;
  readonly lastStableOffset: number;
  readonly logStartOffset: number;
  readonly abortedTransactions: readonly AbortedTxn[];
  private released: boolean;

  /** The parts' file references must already be retained for this plan. */
  constructor(fields: FetchPlanFields) {
    let total = 0;
    for (const part of fields.parts) total += part.kind === 'inline' ? part.buffer.length : part.length;
    this.parts = fields.parts;
    this.totalBytes = total;
    this.firstOffset = fields.firstOffset;
    this.nextOffset = fields.nextOffset;
    this.highWatermark = fields.highWatermark;
    this.lastStableOffset = fields.lastStableOffset;
    this.logStartOffset = fields.logStartOffset;
    this.abortedTransactions = fields.abortedTransactions;
    this.released = false;
  }

  get isEmpty(): boolean {
    return this.totalBytes === 0;
  }

  get isReleased(): boolean {
    return this.released;
  }

  /** Drops the plan's file references. Idempotent. */
  release(): Promise<void> {
    if (this.released) return Promise.resolve();
    this.released = true;
    const closing: Promise<void>[] = [];
    for (const part of this.parts) if (part.kind === 'file') closing.push(part.file.release());
    return Promise.all(closing).then(() => undefined);
  }

  /**
   * Copies every part into one Buffer (pread for file parts). For tests,
   * tools and the fetch layer's fallback. Throws SEGLOG_ERR_LOG_READ_SHORT
   * when a file part is no longer fully there (a racing truncation).
   */
  async toBuffer(): Promise<Buffer> {
    assert(!this.released, 'FetchPlan.toBuffer: plan already released');
    const out = Buffer.allocUnsafe(this.totalBytes);
    let at = 0;
    for (const part of this.parts) {
      if (part.kind === 'inline') {
        part.buffer.copy(out, at);
        at += part.buffer.length;
        continue;
      }
      if (part.bytes !== undefined) { // read when the plan was made (ReadOptions.into)
        part.bytes.copy(out, at);
        at += part.bytes.length;
        continue;
      }
      const read = await part.file.file.pread(out.subarray(at, at + part.length), part.position, part.length);
      if (read !== part.length) {
        throw new SeglogError('SEGLOG_ERR_LOG_READ_SHORT', `read of ${part.file.path} returned ${read} of ${part.length} bytes`, {
          kafka: 'KAFKA_STORAGE_ERROR',
          context: { path: part.file.path, position: part.position, length: part.length, read },
        });
      }
      at += part.length;
    }
    return out;
  }
}
