// One producer of the load run: its own TCP connection, its own producer id
// when idempotent (per-partition sequences from 0), records spread
// round-robin over the partitions, one accumulating batch per partition
// (closed when it reaches batchBytes or lingerMs), and up to maxInFlight
// produce requests pipelined on the connection. A request carries every
// ready batch, at most one per partition, so with idempotence and ≤ 5 in
// flight the broker sees each partition's sequences in order.
//
// Records are counters until a batch is built: payloads are derived from
// (producer, partition, sequence) (payload.ts), so nothing per record is kept
// between generation and the ack. Allocation happens per batch (buildBatch
// input) and per request (one promise).
//
// Latency (OMB's publish latency, batch granular): from the moment a batch's
// first record entered the accumulator to its acknowledgement, attributed to
// every record of the batch (an upper bound for the batch's later records);
// it includes linger and waiting for an in-flight slot. `requestLatency` is
// the wire part only: request written → response decoded.

import { assert } from '@seglog/common';
import { Codec, buildBatch } from '@seglog/records';
import type { RecordInput } from '@seglog/records';
import type { ProducePartitionData, ProduceResponse } from '../protocol/messages/produce.js';
import type { KafkaConnection } from './kafka-connection.js';
import { LatencyRecorder } from './latency-recorder.js';
import type { LoadOptions } from './load-options.js';
import { fillPayload } from './payload.js';
import { ProducerLedger } from './producer-ledger.js';

/** Batch-size estimate per record beyond its value: length, attributes, deltas, key and value lengths, header count. */
const RECORD_OVERHEAD_BYTES = 10;
const BATCH_HEADER_BYTES = 61;

interface SentBatch {
  readonly partition: number;
  readonly firstSequence: number;
  readonly count: number;
  readonly openedAt: number;
}

export interface LoadProducerSetup {
  readonly index: number;
  readonly connection: KafkaConnection;
  readonly produceVersion: number;
  /** −1 when not idempotent. */
  readonly producerId: number;
  readonly producerEpoch: number;
  /** Records this producer generates (null: until the deadline). */
  readonly records: number | null;
  /** Records/s of this producer (null: closed loop). */
  readonly rate: number | null;
}

export class LoadProducer {
  readonly index: number;
  readonly ledger: ProducerLedger;
  readonly latency: LatencyRecorder;
  readonly requestLatency: LatencyRecorder;
  produceRequests: number;
  batchesSent: number;
  bytesSent: number;
  private readonly o: LoadOptions;
  private readonly s: LoadProducerSetup;
  private readonly recordsPerBatch: number;
  private readonly pendingCount: Int32Array;
  private readonly pendingFirst: Int32Array;
  private readonly openedAt: Float64Array;
  private generated: number;
  private cursor: number;
  private inFlight: number;
  private startedAt: number;
  private deadline: number;
  private generating: boolean;
  private timer: NodeJS.Timeout | null;
  private finish: (() => void) | null;

  constructor(options: LoadOptions, setup: LoadProducerSetup) {
    assert(setup.records === null || setup.records >= 0, 'LoadProducer: negative record budget');
    this.index = setup.index;
    this.ledger = new ProducerLedger(options.partitions);
    this.latency = new LatencyRecorder();
    this.requestLatency = new LatencyRecorder();
    this.produceRequests = 0;
    this.batchesSent = 0;
    this.bytesSent = 0;
    this.o = options;
    this.s = setup;
    this.recordsPerBatch = Math.max(1, Math.floor((options.batchBytes - BATCH_HEADER_BYTES) / (options.recordBytes + RECORD_OVERHEAD_BYTES)));
    this.pendingCount = new Int32Array(options.partitions);
    this.pendingFirst = new Int32Array(options.partitions);
    this.openedAt = new Float64Array(options.partitions);
    this.generated = 0;
    this.cursor = setup.index % options.partitions;
    this.inFlight = 0;
    this.startedAt = 0;
    this.deadline = 0;
    this.generating = true;
    this.timer = null;
    this.finish = null;
  }

  /** Produces until the record budget or the deadline; resolves when every request is answered (or failed). */
  run(startedAt: number, deadline: number): Promise<void> {
    assert(this.finish === null, 'LoadProducer.run: already running');
    this.startedAt = startedAt;
    this.deadline = deadline;
    return new Promise<void>((resolve) => {
      this.finish = resolve;
      this.step();
    });
  }

  private step(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const now = performance.now();
    if (now >= this.deadline) this.generating = false;
    this.generate(now);
    while (this.inFlight < this.o.maxInFlight) {
      const sent = this.sendReady(now);
      if (!sent) break;
      this.generate(now);
    }
    if (!this.generating && this.inFlight === 0 && !this.anyPending()) {
      const finish = this.finish;
      this.finish = null;
      if (finish !== null) finish();
      return;
    }
    this.maybeArmTimer(now);
  }

  /** Adds records to the accumulators: within the budget, the rate and one batch per partition. */
  private generate(now: number): void {
    if (!this.generating) return;
    let limit = this.s.records ?? Number.MAX_SAFE_INTEGER;
    if (this.s.rate !== null) limit = Math.min(limit, Math.floor(((now - this.startedAt) * this.s.rate) / 1000) + 1);
    const partitions = this.o.partitions;
    while (this.generated < limit) {
      const p = this.cursor;
      const count = this.pendingCount[p] as number;
      if (count >= this.recordsPerBatch) return; // accumulator full: wait for an in-flight slot
      if (count === 0) {
        this.pendingFirst[p] = this.ledger.nextSequence(p);
        this.openedAt[p] = now;
      }
      this.pendingCount[p] = count + 1;
      this.ledger.claimSequence(p);
      this.generated++;
      this.cursor = p + 1 === partitions ? 0 : p + 1;
    }
    if (this.s.records !== null && this.generated >= this.s.records) this.generating = false;
  }

  private anyPending(): boolean {
    for (let p = 0; p < this.o.partitions; p++) if ((this.pendingCount[p] as number) > 0) return true;
    return false;
  }

  /** Sends one request with every ready batch; false if none is ready. */
  private sendReady(now: number): boolean {
    const batches: SentBatch[] = [];
    for (let p = 0; p < this.o.partitions; p++) {
      const count = this.pendingCount[p] as number;
      if (count === 0) continue;
      const ready = count >= this.recordsPerBatch || !this.generating || now - (this.openedAt[p] as number) >= this.o.lingerMs;
      if (!ready) continue;
      batches.push({ partition: p, firstSequence: this.pendingFirst[p] as number, count, openedAt: this.openedAt[p] as number });
      this.pendingCount[p] = 0;
    }
    if (batches.length === 0) return false;
    this.sendRequest(batches);
    return true;
  }

  private sendRequest(batches: readonly SentBatch[]): void {
    const partitionData: ProducePartitionData[] = [];
    for (const b of batches) {
      const records = this.buildRecords(b);
      this.bytesSent += records.length;
      partitionData.push({ index: b.partition, records });
    }
    const body = { transactionalId: null, acks: this.o.acks, timeoutMs: this.o.requestTimeoutMs, topicData: [{ name: this.o.topic, partitionData }] };
    this.inFlight++;
    this.produceRequests++;
    this.batchesSent += batches.length;
    const writtenAt = performance.now();
    if (this.o.acks === 0) {
      this.s.connection.send('PRODUCE', this.s.produceVersion, body).then(
        () => this.onAcked(batches, writtenAt, null),
        (error: unknown) => this.onFailed(batches, error),
      );
    } else {
      this.s.connection.request('PRODUCE', this.s.produceVersion, body).then(
        (response) => this.onAcked(batches, writtenAt, response),
        (error: unknown) => this.onFailed(batches, error),
      );
    }
  }

  private buildRecords(b: SentBatch): Buffer {
    const size = this.o.recordBytes;
    const values = Buffer.allocUnsafe(size * b.count);
    const records: RecordInput[] = new Array<RecordInput>(b.count);
    const identity = { producer: this.index, partition: b.partition, sequence: 0 };
    const timestamp = Date.now();
    for (let i = 0; i < b.count; i++) {
      identity.sequence = b.firstSequence + i;
      fillPayload(values, i * size, size, identity);
      records[i] = { value: values.subarray(i * size, (i + 1) * size), timestamp };
    }
    return buildBatch({
      records, compression: Codec[this.o.compression],
      producerId: this.s.producerId, producerEpoch: this.s.producerEpoch,
      baseSequence: this.s.producerId >= 0 ? b.firstSequence : -1,
    });
  }

  private onAcked(batches: readonly SentBatch[], writtenAt: number, response: ProduceResponse | null): void {
    this.inFlight--;
    const now = performance.now();
    const results = response?.responses[0]?.partitionResponses;
    let records = 0;
    for (const b of batches) {
      if (response === null) {
        this.ledger.uncertain(b.partition, b.firstSequence, b.count); // acks=0: sent, outcome unknown
      } else {
        const r = results?.find((x) => x.index === b.partition);
        if (r === undefined || r.errorCode !== 0) {
          this.ledger.failed(b.partition, b.firstSequence, b.count, r === undefined ? -1 : r.errorCode);
          this.generating = false; // no retries: stop at the first refusal (its cause is in the report)
          continue;
        }
        this.ledger.acked(b.partition, r.baseOffset, b.firstSequence, b.count);
      }
      records += b.count;
      this.latency.record(now - b.openedAt, b.count);
    }
    if (records > 0) this.requestLatency.record(now - writtenAt, records);
    this.step();
  }

  private onFailed(batches: readonly SentBatch[], error: unknown): void {
    this.inFlight--;
    for (const b of batches) this.ledger.uncertain(b.partition, b.firstSequence, b.count);
    this.ledger.noteError(error);
    this.generating = false;
    this.step();
  }

  private maybeArmTimer(now: number): void {
    if (this.inFlight >= this.o.maxInFlight) return; // a response will call step()
    let wakeAt = Number.POSITIVE_INFINITY;
    for (let p = 0; p < this.o.partitions; p++) {
      if ((this.pendingCount[p] as number) > 0) wakeAt = Math.min(wakeAt, (this.openedAt[p] as number) + this.o.lingerMs);
    }
    if (this.generating && this.s.rate !== null) {
      wakeAt = Math.min(wakeAt, this.startedAt + ((this.generated + 1) * 1000) / this.s.rate, this.deadline);
    } else if (this.generating && this.s.records === null) {
      wakeAt = Math.min(wakeAt, this.deadline);
    }
    if (wakeAt === Number.POSITIVE_INFINITY) return;
    this.timer = setTimeout(() => this.step(), Math.max(0, Math.ceil(wakeAt - now)));
  }
}
