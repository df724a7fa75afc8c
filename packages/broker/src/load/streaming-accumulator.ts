// The load producer's batching with --streaming-compression (franz-go's
// StreamingCompression, PR #1366; packages/records README "Batches bounded
// by compressed size"). Per partition:
//   open   a BoundedBatchBuilder (bound: maxBatchBytes, the broker's
//          max.message.bytes, on the COMPRESSED batch), closed like the
//          default batching when its records reach batchBytes uncompressed,
//          when it has lingered, or when the builder refuses a record;
//   tail   sealed batches never sent, in order: merged by mergeUnsent when
//          the partition is drained and there is no ready batch;
//   ready  merged batches that mergeUnsent left full (all but the last of
//          its output), sent first, never merged again, so a record is
//          compressed at most three times (open, merge, one re-merge of a
//          last partial batch).
// A batch leaves the backlog when `take` hands it out: that is its first
// send, the only place its base sequence is assigned (assignBaseSequence),
// and from then on its bytes never change (a retry resends them). Sequences
// are consecutive per partition because records keep their order through
// every merge; `take` checks the first record's payload sequence against it.
// Bounds: value bytes not yet sent <= bufferBytes (Kafka's buffer.memory), so
// tail and ready are bounded too.

import { assert } from '@seglog/common';
import { BoundedBatchBuilder, Codec, assignBaseSequence, mergeUnsent, toPendingBatches } from '@seglog/records';
import type { MergeUnsentOptions, PendingBatch } from '@seglog/records';
import type { BatchAccumulator, SentBatch } from './batch-accumulator.js';
import type { LoadOptions } from './load-options.js';
import { fillPayload } from './payload.js';
import type { AccumulatorProducer } from './uncompressed-accumulator.js';
import { recordsPerBatch } from './uncompressed-accumulator.js';

/** Handles carried by mergeUnsent: per record, performance.now() when it entered the accumulator. */
type Pending = PendingBatch<number>;

const RECORDS_COUNT_OFFSET = 57;
const SEQUENCE_IN_PAYLOAD = 8;

class PartitionBacklog {
  builder: BoundedBatchBuilder | null = null;
  openHandles: number[] = [];
  openedAt = 0;
  ready: Pending[] = [];
  tail: Pending[] = [];
  nextSendSequence = 0;
  /** Values are cut from slabs of one uncompressed batch's worth (no allocation per record). */
  slab: Buffer = Buffer.alloc(0);
  slabUsed = 0;
}

export class StreamingAccumulator implements BatchAccumulator {
  /** Times mergeUnsent ran, and batches it took in and gave back (stats for the report). */
  merges: number;
  mergedBatchesIn: number;
  mergedBatchesOut: number;
  mergeErrors: number;
  private readonly o: LoadOptions;
  private readonly p: AccumulatorProducer;
  private readonly recordsPerBatch: number;
  private readonly mergeOptions: MergeUnsentOptions;
  private readonly partitions: PartitionBacklog[];
  private readonly identity: { producer: number; partition: number; sequence: number };
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
    this.mergeOptions = {
      codec: Codec[options.compression], maxBytes: options.maxBatchBytes,
      producerId: producer.producerId, producerEpoch: producer.producerEpoch,
      onError: () => this.mergeErrors++,
    };
    this.partitions = Array.from({ length: options.partitions }, () => new PartitionBacklog());
    this.identity = { producer: producer.index, partition: 0, sequence: 0 };
    this.unsentBytes = 0;
  }

  tryAdd(partition: number, sequence: number, now: number, timestamp: number): boolean {
    const size = this.o.recordBytes;
    if (this.unsentBytes + size > this.o.bufferBytes) return false; // buffer.memory full: wait for a send
    const b = this.partitions[partition] as PartitionBacklog;
    const record = { value: this.payload(b, partition, sequence), timestamp };
    if (b.builder === null) this.open(b, now);
    if (!(b.builder as BoundedBatchBuilder).tryAppend(record)) {
      if ((b.builder as BoundedBatchBuilder).recordsCount > 0) {
        this.seal(b);
        this.open(b, now);
      }
      const builder = b.builder as BoundedBatchBuilder;
      if (!builder.tryAppend(record)) {
        // Refused by an empty builder: alone (load-options guarantees it fits uncompressed).
        b.tail.push({ batch: builder.buildAlone(record), records: [record], handles: [now], sent: false });
        b.builder = null;
        this.unsentBytes += size;
        return true;
      }
    }
    b.openHandles.push(now);
    this.unsentBytes += size;
    if ((b.builder as BoundedBatchBuilder).recordsCount >= this.recordsPerBatch) this.seal(b);
    return true;
  }

  take(partition: number, now: number, flush: boolean): SentBatch | null {
    const b = this.partitions[partition] as PartitionBacklog;
    if (b.builder !== null && (flush || now - b.openedAt >= this.o.lingerMs)) this.seal(b);
    if (b.ready.length === 0 && b.tail.length >= 2) this.merge(b);
    const next = b.ready.length > 0 ? b.ready.shift() : b.tail.shift();
    if (next === undefined) return null;
    return this.firstSend(b, partition, next);
  }

  hasPending(): boolean {
    for (const b of this.partitions) if (b.builder !== null || b.tail.length > 0 || b.ready.length > 0) return true;
    return false;
  }

  lingerDeadline(partition: number): number {
    const b = this.partitions[partition] as PartitionBacklog;
    return b.builder === null ? Number.POSITIVE_INFINITY : b.openedAt + this.o.lingerMs;
  }

  private payload(b: PartitionBacklog, partition: number, sequence: number): Buffer {
    const size = this.o.recordBytes;
    if (b.slabUsed + size > b.slab.length) {
      b.slab = Buffer.allocUnsafe(size * this.recordsPerBatch);
      b.slabUsed = 0;
    }
    const at = b.slabUsed;
    b.slabUsed = at + size;
    this.identity.partition = partition;
    this.identity.sequence = sequence;
    fillPayload(b.slab, at, size, this.identity, this.o.payload);
    return b.slab.subarray(at, at + size);
  }

  private open(b: PartitionBacklog, now: number): void {
    assert(b.builder === null && b.openHandles.length === 0, 'StreamingAccumulator: a batch is already open');
    b.builder = new BoundedBatchBuilder(this.mergeOptions);
    b.openedAt = now;
  }

  private seal(b: PartitionBacklog): void {
    const builder = b.builder;
    assert(builder !== null, 'StreamingAccumulator.seal: no open batch');
    assert(builder.recordsCount === b.openHandles.length, 'StreamingAccumulator.seal: one handle per record');
    if (builder.recordsCount > 0) b.tail.push(...toPendingBatches(builder.seal(), builder.records, b.openHandles));
    b.builder = null;
    b.openHandles = [];
  }

  /** Re-packs the tail; all but the last output batch are full and go to `ready`. */
  private merge(b: PartitionBacklog): void {
    const records = countRecords(b.tail);
    const merged = mergeUnsent(b.tail, this.mergeOptions);
    assert(countRecords(merged) === records, 'StreamingAccumulator.merge: records lost or added');
    this.merges++;
    this.mergedBatchesIn += b.tail.length;
    this.mergedBatchesOut += merged.length;
    const last = merged.pop();
    assert(last !== undefined, 'StreamingAccumulator.merge: empty result');
    b.ready = merged;
    b.tail = [last];
  }

  private firstSend(b: PartitionBacklog, partition: number, next: Pending): SentBatch {
    assert(!next.sent, 'StreamingAccumulator: a batch is handed out once');
    const count = next.records.length;
    assert(count > 0 && count === next.batch.readInt32BE(RECORDS_COUNT_OFFSET), 'StreamingAccumulator: batch and records differ');
    const first = next.records[0]?.value;
    const sequence = b.nextSendSequence;
    assert(first instanceof Uint8Array, 'StreamingAccumulator: record without value');
    assert(Buffer.from(first.buffer, first.byteOffset, first.byteLength).readUInt32BE(SEQUENCE_IN_PAYLOAD) === sequence,
      'StreamingAccumulator: batches must be sent in sequence order');
    if (this.p.producerId >= 0) assignBaseSequence(next.batch, sequence);
    b.nextSendSequence = sequence + count;
    this.unsentBytes -= count * this.o.recordBytes;
    assert(this.unsentBytes >= 0, 'StreamingAccumulator: unsent bytes below zero');
    return { partition, firstSequence: sequence, count, openedAt: next.handles[0] as number, batch: next.batch };
  }
}

function countRecords(batches: readonly Pending[]): number {
  let n = 0;
  for (const batch of batches) n += batch.records.length;
  return n;
}
