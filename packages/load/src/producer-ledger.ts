// What one producer did to each partition, for the report and the checker:
// how many sequences it handed out (records generated, 0-based per
// partition), and what became of them, as ranges of sequences:
//   acked     the broker answered without error: [firstSequence, +count) at [baseOffset, +count)
//   failed    the broker answered with an error code: not appended (Kafka semantics)
//   uncertain written but never answered (acks=0, timeout, closed connection):
//             may or may not be in the log
//   purged    dropped by purge/close before it was ever written: not in the log
// Each generated record settles exactly once (`settlementErrors` checks it).
// Ranges are flat number arrays (4 or 3 numbers per batch), not objects.

import { assert } from '@seglog/common';

export class ProducerLedger {
  readonly partitions: number;
  /** Next sequence to hand out, per partition (= records generated for it). */
  private readonly sequences: Int32Array;
  /** partition, baseOffset, firstSequence, count per acknowledged batch. */
  readonly ackedBatches: number[];
  /** partition, firstSequence, count, errorCode per refused batch. */
  readonly failedBatches: number[];
  /** partition, firstSequence, count per batch with an unknown outcome. */
  readonly uncertainBatches: number[];
  /** partition, firstSequence, count per run dropped before it was written. */
  readonly purgedBatches: number[];
  /** Request-level failures (timeouts, connection errors), first few kept. */
  readonly errors: string[];
  recordsAcked: number;
  recordsFailed: number;
  recordsUncertain: number;
  recordsPurged: number;

  constructor(partitions: number) {
    assert(Number.isInteger(partitions) && partitions > 0, 'ProducerLedger: partitions must be positive');
    this.partitions = partitions;
    this.sequences = new Int32Array(partitions);
    this.ackedBatches = [];
    this.failedBatches = [];
    this.uncertainBatches = [];
    this.purgedBatches = [];
    this.errors = [];
    this.recordsAcked = 0;
    this.recordsFailed = 0;
    this.recordsUncertain = 0;
    this.recordsPurged = 0;
  }

  nextSequence(partition: number): number {
    return this.sequences[partition] as number;
  }

  claimSequence(partition: number): void {
    const next = (this.sequences[partition] as number) + 1;
    assert(next <= 0x7fffffff, 'ProducerLedger: sequence overflow (int32)');
    this.sequences[partition] = next;
  }

  /** Records generated for `partition` (sequences 0 .. n−1). */
  sent(partition: number): number {
    return this.sequences[partition] as number;
  }

  acked(partition: number, baseOffset: number, firstSequence: number, count: number): void {
    assert(Number.isSafeInteger(baseOffset) && baseOffset >= 0, 'ProducerLedger.acked: bad base offset');
    this.ackedBatches.push(partition, baseOffset, firstSequence, count);
    this.recordsAcked += count;
  }

  failed(partition: number, firstSequence: number, count: number, errorCode: number): void {
    this.failedBatches.push(partition, firstSequence, count, errorCode);
    this.recordsFailed += count;
  }

  uncertain(partition: number, firstSequence: number, count: number): void {
    this.uncertainBatches.push(partition, firstSequence, count);
    this.recordsUncertain += count;
  }

  purged(partition: number, firstSequence: number, count: number): void {
    assert(count > 0, 'ProducerLedger.purged: empty run');
    this.purgedBatches.push(partition, firstSequence, count);
    this.recordsPurged += count;
  }

  /**
   * Every generated sequence settled exactly once (acked, failed, uncertain
   * or purged)? Returns the first few that were not (empty: all were). For
   * tests and the end of a run: O(records).
   */
  settlementErrors(): string[] {
    const errors: string[] = [];
    const settled = Array.from({ length: this.partitions }, (_, p) => new Uint8Array(this.sent(p)));
    const mark = (ranges: readonly number[], stride: number, firstAt: number, kind: string): void => {
      for (let i = 0; i < ranges.length; i += stride) {
        const partition = ranges[i] as number;
        const first = ranges[i + firstAt] as number;
        const count = ranges[i + firstAt + 1] as number;
        const seen = settled[partition] as Uint8Array;
        for (let s = first; s < first + count; s++) {
          if (s >= seen.length) errors.push(`partition ${partition}: ${kind} sequence ${s} was never generated`);
          else if ((seen[s] = (seen[s] as number) + 1) !== 1) errors.push(`partition ${partition}: sequence ${s} settled twice (again as ${kind})`);
        }
      }
    };
    mark(this.ackedBatches, 4, 2, 'acked');
    mark(this.failedBatches, 4, 1, 'failed');
    mark(this.uncertainBatches, 3, 1, 'uncertain');
    mark(this.purgedBatches, 3, 1, 'purged');
    settled.forEach((seen, partition) => {
      const missing = seen.indexOf(0);
      if (missing >= 0) errors.push(`partition ${partition}: sequence ${missing} never settled`);
    });
    return errors.slice(0, 20);
  }

  noteError(error: unknown): void {
    if (this.errors.length < 10) this.errors.push(error instanceof Error ? error.message : String(error));
  }

  /** The error code of a refused batch covering (partition, sequence), or null. */
  failedCodeOf(partition: number, sequence: number): number | null {
    const f = this.failedBatches;
    for (let i = 0; i < f.length; i += 4) {
      if (f[i] === partition && sequence >= (f[i + 1] as number) && sequence < (f[i + 1] as number) + (f[i + 2] as number)) return f[i + 3] as number;
    }
    return null;
  }

  isUncertain(partition: number, sequence: number): boolean {
    const u = this.uncertainBatches;
    for (let i = 0; i < u.length; i += 3) {
      if (u[i] === partition && sequence >= (u[i + 1] as number) && sequence < (u[i + 1] as number) + (u[i + 2] as number)) return true;
    }
    return false;
  }
}
