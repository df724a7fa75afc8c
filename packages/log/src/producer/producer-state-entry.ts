// ProducerStateEntry: what a partition remembers about one idempotent or
// transactional producer (reference/kafka-storage.md §13): its epoch, the
// metadata of its last (up to) five data batches for duplicate detection and
// sequence checks, the epoch of the coordinator that wrote its last marker,
// the offset its open transaction began at, and the time of its last write.
//
// Invariants:
// - `batches` holds at most NUM_BATCHES_TO_RETAIN entries, oldest first, all
//   written under `producerEpoch` (a new epoch clears them);
// - for every batch, firstOffset = lastOffset − offsetDelta and
//   firstSeq = lastSeq − offsetDelta modulo 2^31 (sequences wrap at Int32.MAX);
// - `currentTxnFirstOffset` is null when no transaction is open.

import { assert } from '@seglog/common';

/** Kafka's RecordBatch.NO_PRODUCER_EPOCH: the producer has no known epoch. */
export const NO_PRODUCER_EPOCH = -1;
/** Kafka's RecordBatch.NO_SEQUENCE. */
export const NO_SEQUENCE = -1;
/** Kafka's ProducerStateEntry.NUM_BATCHES_TO_RETAIN: the duplicate-detection window. */
export const NUM_BATCHES_TO_RETAIN = 5;

const INT32_MAX = 0x7fffffff;

/** `sequence − decrement` wrapping below 0 to Int32.MAX (Kafka's DefaultRecordBatch.decrementSequence). */
export function decrementSequence(sequence: number, decrement: number): number {
  assert(Number.isInteger(sequence) && sequence >= 0 && sequence <= INT32_MAX, 'decrementSequence: sequence must be in [0, 2^31 - 1]');
  assert(Number.isInteger(decrement) && decrement >= 0, 'decrementSequence: decrement must be non-negative');
  const previous = sequence - decrement;
  return previous < 0 ? previous + INT32_MAX + 1 : previous;
}

/** One data batch of a producer, as the duplicate window keeps it. */
export interface BatchMetadata {
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly firstOffset: number;
  readonly lastOffset: number;
  /** lastOffset − firstOffset (== lastSeq − firstSeq for a well-formed batch). */
  readonly offsetDelta: number;
  /** The batch's max timestamp (the duplicate's answered log-append time). */
  readonly timestamp: number;
}

export function batchMetadata(lastSeq: number, lastOffset: number, offsetDelta: number, timestamp: number): BatchMetadata {
  assert(Number.isSafeInteger(lastOffset), 'batchMetadata: lastOffset must be a safe integer');
  assert(Number.isInteger(offsetDelta) && offsetDelta >= 0 && offsetDelta <= INT32_MAX, 'batchMetadata: offsetDelta must be an int32 >= 0');
  assert(lastOffset - offsetDelta >= 0, 'batchMetadata: firstOffset must be non-negative');
  assert(Number.isSafeInteger(timestamp), 'batchMetadata: timestamp must be a safe integer');
  // A batch without sequences (replicated from a compacted log, or a producer
  // that sent NO_SEQUENCE) keeps -1; it can never match a duplicate.
  const firstSeq = lastSeq === NO_SEQUENCE ? NO_SEQUENCE : decrementSequence(lastSeq, offsetDelta);
  return { firstSeq, lastSeq, firstOffset: lastOffset - offsetDelta, lastOffset, offsetDelta, timestamp };
}

/** The producer fields of a batch that duplicate detection needs. */
export interface SequencedBatch {
  readonly producerEpoch: number;
  readonly baseSequence: number;
  readonly lastSequence: number;
}

export class ProducerStateEntry {
  readonly producerId: number;
  producerEpoch: number;
  coordinatorEpoch: number;
  lastTimestamp: number;
  currentTxnFirstOffset: number | null;
  /** Oldest first; at most NUM_BATCHES_TO_RETAIN. */
  batches: BatchMetadata[];

  constructor(
    producerId: number,
    producerEpoch: number,
    coordinatorEpoch: number,
    lastTimestamp: number,
    currentTxnFirstOffset: number | null,
    batches: BatchMetadata[],
  ) {
    assert(Number.isSafeInteger(producerId) && producerId >= 0, 'ProducerStateEntry: producerId must be a safe integer >= 0');
    assert(Number.isInteger(producerEpoch) && producerEpoch >= -0x8000 && producerEpoch <= 0x7fff, 'ProducerStateEntry: epoch must be an int16');
    assert(batches.length <= NUM_BATCHES_TO_RETAIN, 'ProducerStateEntry: too many batches');
    this.producerId = producerId;
    this.producerEpoch = producerEpoch;
    this.coordinatorEpoch = coordinatorEpoch;
    this.lastTimestamp = lastTimestamp;
    this.currentTxnFirstOffset = currentTxnFirstOffset;
    this.batches = batches;
  }

  /** A producer the partition knows nothing of (Kafka's ProducerStateEntry.empty). */
  static empty(producerId: number): ProducerStateEntry {
    return new ProducerStateEntry(producerId, NO_PRODUCER_EPOCH, -1, -1, null, []);
  }

  /** A deep copy (the batch metadata objects are immutable and shared). */
  clone(): ProducerStateEntry {
    return new ProducerStateEntry(
      this.producerId,
      this.producerEpoch,
      this.coordinatorEpoch,
      this.lastTimestamp,
      this.currentTxnFirstOffset,
      this.batches.slice(),
    );
  }

  get isEmpty(): boolean {
    return this.batches.length === 0;
  }

  private get lastBatch(): BatchMetadata | undefined {
    return this.batches[this.batches.length - 1];
  }

  /** Last sequence of the last batch, or NO_SEQUENCE. */
  get lastSeq(): number {
    return this.lastBatch?.lastSeq ?? NO_SEQUENCE;
  }

  /** First sequence of the oldest retained batch, or NO_SEQUENCE. */
  get firstSeq(): number {
    return this.batches[0]?.firstSeq ?? NO_SEQUENCE;
  }

  /** Last offset of the last data batch, or -1. */
  get lastDataOffset(): number {
    return this.lastBatch?.lastOffset ?? -1;
  }

  /** First offset of the oldest retained batch, or -1. */
  get firstDataOffset(): number {
    return this.batches[0]?.firstOffset ?? -1;
  }

  /** Offset delta of the last batch, or 0. */
  get lastOffsetDelta(): number {
    return this.lastBatch?.offsetDelta ?? 0;
  }

  /** Sets the epoch; a different epoch clears the batch window. Returns whether it changed. */
  maybeUpdateProducerEpoch(producerEpoch: number): boolean {
    if (this.producerEpoch === producerEpoch) return false;
    this.batches = [];
    this.producerEpoch = producerEpoch;
    return true;
  }

  addBatch(producerEpoch: number, lastSeq: number, lastOffset: number, offsetDelta: number, timestamp: number): void {
    this.maybeUpdateProducerEpoch(producerEpoch);
    this.addBatchMetadata(batchMetadata(lastSeq, lastOffset, offsetDelta, timestamp));
    this.lastTimestamp = timestamp;
  }

  private addBatchMetadata(batch: BatchMetadata): void {
    if (this.batches.length === NUM_BATCHES_TO_RETAIN) this.batches.shift();
    this.batches.push(batch);
  }

  /** Merges an in-flight entry (from a ProducerAppendInfo) into this committed one. */
  update(next: ProducerStateEntry): void {
    assert(next.producerId === this.producerId, 'ProducerStateEntry.update: producer ids differ');
    this.maybeUpdateProducerEpoch(next.producerEpoch);
    for (const batch of next.batches) this.addBatchMetadata(batch);
    this.coordinatorEpoch = next.coordinatorEpoch;
    this.currentTxnFirstOffset = next.currentTxnFirstOffset;
    this.lastTimestamp = next.lastTimestamp;
  }

  /**
   * The retained batch this one duplicates: same epoch, same first and last
   * sequence. Null when there is none.
   */
  findDuplicateBatch(batch: SequencedBatch): BatchMetadata | null {
    if (batch.producerEpoch !== this.producerEpoch) return null;
    return this.batchWithSequenceRange(batch.baseSequence, batch.lastSequence);
  }

  batchWithSequenceRange(firstSeq: number, lastSeq: number): BatchMetadata | null {
    if (firstSeq === NO_SEQUENCE) return null;
    for (const batch of this.batches) {
      if (batch.firstSeq === firstSeq && batch.lastSeq === lastSeq) return batch;
    }
    return null;
  }
}
