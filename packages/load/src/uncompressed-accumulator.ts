// The default batching of the load producer (Kafka's batch.size, franz-go's
// ProducerBatchMaxBytes): one open batch per partition, closed when its
// UNCOMPRESSED size reaches batchBytes or it has lingered lingerMs. Records
// are counters until the batch is taken: payloads are derived from
// (producer, partition, sequence) (payload.ts), so nothing per record is kept
// between generation and the send; the batch is built (and compressed
// one-shot) when it is sealed (`ready`), with its base sequence when
// idempotent, and handed out by `take`.

import { assert } from '@seglog/common';
import { Codec, buildBatch } from '@seglog/records';
import type { RecordInput } from '@seglog/records';
import type { BatchAccumulator, DroppedRecords, SentBatch } from './batch-accumulator.js';
import type { LoadOptions } from './load-options.js';
import { fillPayload } from './payload.js';

/** Batch-size estimate per record beyond its value: length, attributes, deltas, key and value lengths, header count. */
export const RECORD_OVERHEAD_BYTES = 10;
export const BATCH_HEADER_BYTES = 61;

/** Records per batch that keep its uncompressed size within batchBytes (at least 1). */
export function recordsPerBatch(o: Pick<LoadOptions, 'batchBytes' | 'recordBytes'>): number {
  return Math.max(1, Math.floor((o.batchBytes - BATCH_HEADER_BYTES) / (o.recordBytes + RECORD_OVERHEAD_BYTES)));
}

export interface AccumulatorProducer {
  /** Producer index in the run (the payload's first field). */
  readonly index: number;
  /** −1 when not idempotent. */
  readonly producerId: number;
  readonly producerEpoch: number;
}

export class UncompressedAccumulator implements BatchAccumulator {
  private readonly o: LoadOptions;
  private readonly p: AccumulatorProducer;
  private readonly recordsPerBatch: number;
  private readonly pendingCount: Int32Array;
  private readonly pendingFirst: Int32Array;
  private readonly openedAt: Float64Array;
  /** Per partition: built, not yet taken (at most one; generation into a new batch goes on meanwhile). */
  private readonly sealed: (SentBatch | null)[];

  constructor(options: LoadOptions, producer: AccumulatorProducer) {
    this.o = options;
    this.p = producer;
    this.recordsPerBatch = recordsPerBatch(options);
    this.pendingCount = new Int32Array(options.partitions);
    this.pendingFirst = new Int32Array(options.partitions);
    this.openedAt = new Float64Array(options.partitions);
    this.sealed = new Array<SentBatch | null>(options.partitions).fill(null);
  }

  tryAdd(partition: number, sequence: number, now: number): boolean {
    const count = this.pendingCount[partition] as number;
    if (count >= this.recordsPerBatch) return false; // full: wait for an in-flight slot
    if (count === 0) {
      this.pendingFirst[partition] = sequence;
      this.openedAt[partition] = now;
    }
    assert(sequence === (this.pendingFirst[partition] as number) + count, 'UncompressedAccumulator: sequences must be consecutive');
    this.pendingCount[partition] = count + 1;
    return true;
  }

  ready(partition: number, now: number, flush: boolean): number {
    const sealed = this.sealed[partition] ?? this.seal(partition, now, flush);
    return sealed === null ? -1 : sealed.batch.length;
  }

  take(partition: number): SentBatch {
    const sealed = this.sealed[partition] ?? null;
    assert(sealed !== null, 'UncompressedAccumulator.take: nothing sealed');
    this.sealed[partition] = null;
    return sealed;
  }

  hasPending(): boolean {
    for (let p = 0; p < this.o.partitions; p++) if ((this.pendingCount[p] as number) > 0 || this.sealed[p] !== null) return true;
    return false;
  }

  lingerDeadline(partition: number): number {
    if (this.sealed[partition] !== null) return 0;
    return (this.pendingCount[partition] as number) > 0 ? (this.openedAt[partition] as number) + this.o.lingerMs : Number.POSITIVE_INFINITY;
  }

  purge(dropped: DroppedRecords): void {
    for (let p = 0; p < this.o.partitions; p++) {
      const sealed = this.sealed[p] ?? null;
      if (sealed !== null) dropped(p, sealed.firstSequence, sealed.count);
      const count = this.pendingCount[p] as number;
      if (count > 0) dropped(p, this.pendingFirst[p] as number, count);
      this.sealed[p] = null;
      this.pendingCount[p] = 0;
    }
  }

  setWake(): void {
    // Batches are built inside `ready`: nothing becomes ready on its own.
  }

  private seal(partition: number, now: number, flush: boolean): SentBatch | null {
    const count = this.pendingCount[partition] as number;
    if (count === 0) return null;
    const openedAt = this.openedAt[partition] as number;
    if (!(count >= this.recordsPerBatch || flush || now - openedAt >= this.o.lingerMs)) return null;
    this.pendingCount[partition] = 0;
    const firstSequence = this.pendingFirst[partition] as number;
    const sealed = { partition, firstSequence, count, openedAt, batch: this.build(partition, firstSequence, count) };
    this.sealed[partition] = sealed;
    return sealed;
  }

  private build(partition: number, firstSequence: number, count: number): Buffer {
    const size = this.o.recordBytes;
    const values = Buffer.allocUnsafe(size * count);
    const records: RecordInput[] = new Array<RecordInput>(count);
    const identity = { producer: this.p.index, partition, sequence: 0 };
    const timestamp = Date.now();
    for (let i = 0; i < count; i++) {
      identity.sequence = firstSequence + i;
      fillPayload(values, i * size, size, identity, this.o.payload);
      records[i] = { value: values.subarray(i * size, (i + 1) * size), timestamp };
    }
    return buildBatch({
      records, compression: Codec[this.o.compression],
      producerId: this.p.producerId, producerEpoch: this.p.producerEpoch,
      baseSequence: this.p.producerId >= 0 ? firstSequence : -1,
    });
  }
}
