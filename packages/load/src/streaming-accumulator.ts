// The load producer's batching with --streaming-compression (franz-go's
// StreamingCompression, PR #1366; packages/records README "Batches bounded
// by compressed size"). Per partition the backlog holds RECORDS, never
// compressed bytes that could be thrown away: a run of consecutive sequences
// with each record's stamps (when it entered, in `addedAt`, and its
// timestamp), kept in a ring (StampRing). Payloads are derived from
// (producer, partition, sequence) (payload.ts), so they are generated when a
// batch is sealed, not kept.
//
// Sealing (`ready`), when the backlog's first batch is ready (uncompressed
// batchBytes reached, lingered, or flush):
//   merge  the backlog holds more than one uncompressed batch: its records
//          are streamed, oldest first, through ONE BoundedBatchBuilder
//          (bound maxBatchBytes, the broker's max.message.bytes, on the
//          COMPRESSED batch) until it refuses one; the sealed blob is kept.
//          Each record is compressed exactly once; a refused record was not
//          compressed and stays in the backlog.
//   plain  otherwise, or after a codec failure: the uncompressed-bounded
//          path (buildBatch of up to one batchBytes' worth, one-shot), with
//          the records' original timestamps, counted by their exact encoded
//          size (a stamp that lingered long takes a longer timestampDelta).
//          A plain batch stays within maxBatchBytes uncompressed too, since
//          after a codec failure it goes uncompressed. Codec none never
//          merges: its compressed size is its uncompressed size, so its
//          plain batches take up to maxBatchBytes' worth at the plain path's
//          cost (streaming it cost 2.2x buildBatch in a micro benchmark:
//          three copies instead of one).
// A codec error or a broken bound while merging demotes the accumulator to
// the plain path for good (franz-go disables merging on its safety net),
// and the merge's records are sealed on the plain path: none is lost.
// Merges are synchronous, inside one `ready`: admission (`tryAdd`) never
// compresses, and no record can join or leave the span while it is merged.
// A sealed batch is frozen: base sequence written at seal (sealed batches
// are taken in order, one at a time per partition), bytes and exact length
// final; `take` hands it out, a retry resends it verbatim.
// Bounds: value bytes not yet taken <= bufferBytes (Kafka's buffer.memory).

import { SeglogError, assert } from '@seglog/common';
import { BoundedBatchBuilder, Codec, buildBatch } from '@seglog/records';
import type { BoundedBatchBuilderOptions, RecordInput } from '@seglog/records';
import type { BatchAccumulator, DroppedRecords, SentBatch } from './batch-accumulator.js';
import type { LoadOptions } from './load-options.js';
import { fillPayload } from './payload.js';
import type { AccumulatorProducer } from './uncompressed-accumulator.js';
import { BATCH_HEADER_BYTES, recordsPerBatch } from './uncompressed-accumulator.js';

const RECORDS_COUNT_OFFSET = 57;
const BASE_SEQUENCE_OFFSET = 53;
const SEQUENCE_IN_PAYLOAD = 8;
const RING_CAPACITY_MIN = 1024;

/** Bytes of a varint holding `zigzagged` (a non-negative zigzag-encoded value < 2^53). */
function varintSize(zigzagged: number): number {
  let n = 1;
  for (let v = zigzagged; v >= 128; v = Math.floor(v / 128)) n++;
  return n;
}

function zigzag(value: number): number {
  return value >= 0 ? value * 2 : -value * 2 - 1;
}

/** FIFO of per-record stamps (added at, timestamp); capacity a power of two, grown by doubling. */
class StampRing {
  length: number;
  private head: number;
  private addedAt: Float64Array;
  private timestamps: Float64Array;

  constructor() {
    this.length = 0;
    this.head = 0;
    this.addedAt = new Float64Array(RING_CAPACITY_MIN);
    this.timestamps = new Float64Array(RING_CAPACITY_MIN);
  }

  push(addedAt: number, timestamp: number): void {
    if (this.length === this.addedAt.length) this.grow();
    const at = (this.head + this.length) & (this.addedAt.length - 1);
    this.addedAt[at] = addedAt;
    this.timestamps[at] = timestamp;
    this.length++;
  }

  addedAtOf(index: number): number {
    assert(index < this.length, 'StampRing: index out of range');
    return this.addedAt[(this.head + index) & (this.addedAt.length - 1)] as number;
  }

  timestampOf(index: number): number {
    assert(index < this.length, 'StampRing: index out of range');
    return this.timestamps[(this.head + index) & (this.timestamps.length - 1)] as number;
  }

  shift(count: number): void {
    assert(count <= this.length, 'StampRing: shift beyond length');
    this.head = (this.head + count) & (this.addedAt.length - 1);
    this.length -= count;
  }

  private grow(): void {
    const n = this.addedAt.length;
    const addedAt = new Float64Array(n * 2);
    const timestamps = new Float64Array(n * 2);
    for (let i = 0; i < this.length; i++) {
      addedAt[i] = this.addedAt[(this.head + i) & (n - 1)] as number;
      timestamps[i] = this.timestamps[(this.head + i) & (n - 1)] as number;
    }
    this.addedAt = addedAt;
    this.timestamps = timestamps;
    this.head = 0;
  }
}

class PartitionBacklog {
  /** Sequence of the oldest record not sealed; the records are [firstSequence, firstSequence + stamps.length). */
  firstSequence = 0;
  readonly stamps = new StampRing();
  /** Sealed, frozen, not yet taken (at most one). */
  sealed: SentBatch | null = null;
}

export class StreamingAccumulator implements BatchAccumulator {
  /** Merged batches sealed, the uncompressed-bounded batches' worth they replaced, and demotions (stats for the report). */
  merges: number;
  mergedBatchesIn: number;
  mergedBatchesOut: number;
  mergeErrors: number;
  private readonly o: LoadOptions;
  private readonly p: AccumulatorProducer;
  private readonly recordsPerBatch: number;
  /** Bound of a plain batch, uncompressed: batchBytes (codec none: maxBatchBytes), never above maxBatchBytes. */
  private readonly plainBatchBytes: number;
  private readonly builderOptions: BoundedBatchBuilderOptions;
  private readonly partitions: PartitionBacklog[];
  private readonly identity: { producer: number; partition: number; sequence: number };
  /** False after a codec failure: every batch takes the plain path. */
  private merging: boolean;
  private unsentBytes: number;

  constructor(options: LoadOptions, producer: AccumulatorProducer) {
    assert(options.streamingCompression, 'StreamingAccumulator: needs streamingCompression');
    this.merges = 0;
    this.mergedBatchesIn = 0;
    this.mergedBatchesOut = 0;
    this.mergeErrors = 0;
    this.o = options;
    this.p = producer;
    this.recordsPerBatch = recordsPerBatch(options);
    this.plainBatchBytes = options.compression === 'none' ? options.maxBatchBytes : Math.min(options.batchBytes, options.maxBatchBytes);
    this.builderOptions = {
      codec: Codec[options.compression], maxBytes: options.maxBatchBytes,
      producerId: producer.producerId, producerEpoch: producer.producerEpoch,
    };
    this.partitions = Array.from({ length: options.partitions }, () => new PartitionBacklog());
    this.identity = { producer: producer.index, partition: 0, sequence: 0 };
    this.merging = options.compression !== 'none';
    this.unsentBytes = 0;
  }

  tryAdd(partition: number, sequence: number, now: number, timestamp: number): boolean {
    const size = this.o.recordBytes;
    if (this.unsentBytes + size > this.o.bufferBytes) return false; // buffer.memory full: wait for a send
    const b = this.partitions[partition] as PartitionBacklog;
    assert(sequence === b.firstSequence + b.stamps.length, 'StreamingAccumulator: sequences must be consecutive');
    b.stamps.push(now, timestamp);
    this.unsentBytes += size;
    return true;
  }

  ready(partition: number, now: number, flush: boolean): number {
    const b = this.partitions[partition] as PartitionBacklog;
    if (b.sealed === null && this.isReady(b, now, flush)) b.sealed = this.seal(b, partition);
    return b.sealed === null ? -1 : b.sealed.batch.length;
  }

  take(partition: number): SentBatch {
    const b = this.partitions[partition] as PartitionBacklog;
    const sealed = b.sealed;
    assert(sealed !== null, 'StreamingAccumulator.take: nothing sealed');
    b.sealed = null;
    this.unsentBytes -= sealed.count * this.o.recordBytes;
    assert(this.unsentBytes >= 0, 'StreamingAccumulator: unsent bytes below zero');
    return sealed;
  }

  hasPending(): boolean {
    for (const b of this.partitions) if (b.sealed !== null || b.stamps.length > 0) return true;
    return false;
  }

  lingerDeadline(partition: number): number {
    const b = this.partitions[partition] as PartitionBacklog;
    if (b.sealed !== null) return 0;
    return b.stamps.length === 0 ? Number.POSITIVE_INFINITY : b.stamps.addedAtOf(0) + this.o.lingerMs;
  }

  purge(dropped: DroppedRecords): void {
    this.partitions.forEach((b, partition) => {
      if (b.sealed !== null) dropped(partition, b.sealed.firstSequence, b.sealed.count);
      if (b.stamps.length > 0) dropped(partition, b.firstSequence, b.stamps.length);
      b.sealed = null;
      b.firstSequence += b.stamps.length;
      b.stamps.shift(b.stamps.length);
    });
    this.unsentBytes = 0;
  }

  private isReady(b: PartitionBacklog, now: number, flush: boolean): boolean {
    const count = b.stamps.length;
    if (count === 0) return false;
    return count >= this.recordsPerBatch || flush || now - b.stamps.addedAtOf(0) >= this.o.lingerMs;
  }

  private seal(b: PartitionBacklog, partition: number): SentBatch {
    const merged = this.merging && b.stamps.length > this.recordsPerBatch ? this.sealMerged(b, partition) : null;
    const sealed = merged ?? this.sealPlain(b, partition);
    this.check(sealed, partition);
    b.firstSequence += sealed.count;
    b.stamps.shift(sealed.count);
    return sealed;
  }

  /** One compressed-size-bounded batch of the backlog's oldest records; null (and merging off) on a codec failure. */
  private sealMerged(b: PartitionBacklog, partition: number): SentBatch | null {
    const builder = new BoundedBatchBuilder(this.builderOptions);
    const values = new ValueSlab(this.o.recordBytes, this.recordsPerBatch);
    const count = b.stamps.length;
    let accepted = 0;
    while (accepted < count) {
      const record: RecordInput = { value: this.value(values, partition, b.firstSequence + accepted), timestamp: b.stamps.timestampOf(accepted) };
      if (!builder.tryAppend(record)) break;
      accepted++;
    }
    if (builder.demoted) return this.demote();
    assert(accepted > 0, 'StreamingAccumulator: load-options guarantees a record fits a batch alone');
    const batches = builder.seal({ baseSequence: this.baseSequence(b) });
    if (builder.demoted || batches.length !== 1) return this.demote();
    this.merges++;
    this.mergedBatchesIn += Math.ceil(accepted / this.recordsPerBatch);
    this.mergedBatchesOut++;
    return { partition, firstSequence: b.firstSequence, count: accepted, openedAt: b.stamps.addedAtOf(0), batch: batches[0] as Buffer };
  }

  /** The builder fell back (a codec error or a broken bound; its plain batches are dropped): merging off for good. */
  private demote(): null {
    this.mergeErrors++;
    this.merging = false;
    return null;
  }

  /** The uncompressed-bounded path: up to one batchBytes' worth, one-shot, original timestamps. */
  private sealPlain(b: PartitionBacklog, partition: number): SentBatch {
    const count = this.plainCount(b);
    const values = new ValueSlab(this.o.recordBytes, count);
    const records: RecordInput[] = new Array<RecordInput>(count);
    for (let i = 0; i < count; i++) records[i] = { value: this.value(values, partition, b.firstSequence + i), timestamp: b.stamps.timestampOf(i) };
    const options = {
      records, compression: Codec[this.o.compression], producerId: this.p.producerId, producerEpoch: this.p.producerEpoch,
      baseSequence: this.baseSequence(b),
    };
    let batch: Buffer | null = null;
    try {
      batch = buildBatch(options);
    } catch (error) {
      // A codec that fails one-shot too: the records still go, uncompressed.
      if (!(error instanceof SeglogError)) throw error;
      this.mergeErrors++;
    }
    // Incompressible records may grow past maxBatchBytes compressed: then they go uncompressed (franz-go does the same).
    if (batch === null || batch.length > this.o.maxBatchBytes) batch = buildBatch({ ...options, compression: Codec.none });
    assert(batch.length <= this.o.maxBatchBytes, 'StreamingAccumulator: plain batch above maxBatchBytes');
    return { partition, firstSequence: b.firstSequence, count, openedAt: b.stamps.addedAtOf(0), batch };
  }

  /** The oldest records whose exact encoded size fits plainBatchBytes (at least one). */
  private plainCount(b: PartitionBacklog): number {
    const stamps = b.stamps;
    const base = stamps.timestampOf(0);
    const valueBytes = this.o.recordBytes + varintSize(this.o.recordBytes * 2);
    let bytes = BATCH_HEADER_BYTES;
    let count = 0;
    while (count < stamps.length) {
      // attributes, null key, header count: 1 byte each.
      const body = 3 + varintSize(zigzag(stamps.timestampOf(count) - base)) + varintSize(count * 2) + valueBytes;
      const size = varintSize(body * 2) + body;
      if (count > 0 && bytes + size > this.plainBatchBytes) break;
      bytes += size;
      count++;
    }
    return count;
  }

  private baseSequence(b: PartitionBacklog): number {
    return this.p.producerId >= 0 ? b.firstSequence : -1;
  }

  private value(values: ValueSlab, partition: number, sequence: number): Buffer {
    this.identity.partition = partition;
    this.identity.sequence = sequence;
    return values.next(this.identity, this.o);
  }

  /** Pair assertion: the sealed bytes say what the backlog says (count, first record, sequence). */
  private check(sealed: SentBatch, partition: number): void {
    assert(sealed.count > 0 && sealed.count === sealed.batch.readInt32BE(RECORDS_COUNT_OFFSET), 'StreamingAccumulator: batch and records differ');
    assert(sealed.partition === partition, 'StreamingAccumulator: sealed for another partition');
    if (this.p.producerId >= 0) assert(sealed.batch.readInt32BE(BASE_SEQUENCE_OFFSET) === sealed.firstSequence, 'StreamingAccumulator: base sequence');
  }
}

/** Values cut from slabs of `perSlab` records (allocation per batch's worth, not per record). */
class ValueSlab {
  private readonly size: number;
  private readonly perSlab: number;
  private slab: Buffer;
  private used: number;

  constructor(size: number, perSlab: number) {
    this.size = size;
    this.perSlab = Math.max(1, perSlab);
    this.slab = Buffer.allocUnsafe(size * this.perSlab);
    this.used = 0;
  }

  next(identity: { producer: number; partition: number; sequence: number }, o: LoadOptions): Buffer {
    if (this.used + this.size > this.slab.length) {
      this.slab = Buffer.allocUnsafe(this.size * this.perSlab);
      this.used = 0;
    }
    const at = this.used;
    this.used = at + this.size;
    fillPayload(this.slab, at, this.size, identity, o.payload);
    const value = this.slab.subarray(at, at + this.size);
    assert(value.readUInt32BE(SEQUENCE_IN_PAYLOAD) === identity.sequence, 'StreamingAccumulator: payload sequence');
    return value;
  }
}
