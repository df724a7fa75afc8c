// RefusedAppend: the validation of the last batch tryAppendAsLeader declined
// (returned null: the append must go to the pool), kept so that the
// appendAsLeader the caller makes next for the same buffer does not validate
// it again (the CRC pass and the record walk are most of an append's cost).
//
// Reused only when the very same Buffer object (same memory, same length)
// comes back with its stored CRC field unchanged, and at most once; any
// other append, or the pooled append itself, forgets it. The caller hands the
// buffer to the log in both calls (the log owns it), so its bytes between the
// two calls are those validated; the summary's timestamp bounds used the
// clock of the first call (microseconds earlier).
import type { BatchSummary } from '@seglog/records';

export class RefusedAppend {
  private buffer: Buffer | null;
  private crc: number;
  private summary: BatchSummary | null;

  constructor() {
    this.buffer = null;
    this.crc = 0;
    this.summary = null;
  }

  remember(buffer: Buffer, summary: BatchSummary): void {
    this.buffer = buffer;
    this.crc = summary.batch.crc;
    this.summary = summary;
  }

  /** The remembered summary when `buffer` is the refused batch, unchanged; forgets it either way. */
  take(buffer: Buffer): BatchSummary | null {
    const summary = this.summary;
    const same = summary !== null && this.buffer === buffer && summary.batch.buffer.length === buffer.length && summary.batch.crc === this.crc;
    this.buffer = null;
    this.summary = null;
    return same ? summary : null;
  }

  forget(): void {
    this.buffer = null;
    this.summary = null;
  }
}
