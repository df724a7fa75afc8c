// One producer of the load run: its own TCP connection, its own producer id
// when idempotent (per-partition sequences from 0), records spread
// round-robin over the partitions, batched per partition by a
// BatchAccumulator (batch-accumulator.ts: uncompressed-size-bounded batches by
// default, compressed-size-bounded and merged with --streaming-compression),
// and up to maxInFlight produce requests pipelined on the connection. A
// request carries every ready batch, at most one per partition, so with
// idempotence and ≤ 5 in flight the broker sees each partition's sequences in
// order. Requests are packed by the sealed batches' exact wire lengths: a
// batch that would take the request past maxRequestBytes stays sealed (same
// bytes) for the next one. Allocation happens per batch and per request (one
// promise).
//
// Generation: closed loop by default (records are added until the
// accumulator refuses one, then what is ready is sent, and so on), or, with
// produceChunk, produceTasks producing tasks taking turns through
// setImmediate, each turn adding up to produceChunk records and then sending
// what is ready if a request slot is free (an application producing
// concurrently with the client's I/O). A task whose record is refused (full)
// parks until a send takes a batch. At linger 0 both accumulators seal
// whatever a partition holds when a slot is free (Kafka's and franz-go's
// linger 0); only the closed loop makes that a full batch.
//
// Every generated record settles exactly once in the ledger: acked, failed
// (refused), uncertain (written, never answered) or purged (never written).
// `purge()` drops what the accumulator holds and stops generation; requests
// in flight settle as they are answered. `close()` purges and closes the
// connection, so requests in flight settle as uncertain; `run` resolves.
//
// Retries: a batch's bytes are final once taken from the accumulator, so a
// resend is the same buffer. The only resend today is the test hook
// `lostResponse`: the first response carrying that partition is dropped as if
// lost, and the request's batches are resent verbatim before anything else
// (still within the broker's 5-batch duplicate window, since at most 4 later
// requests were sent meanwhile); the broker must answer them as duplicates,
// with the original offsets (`resends`).
//
// Latency (OMB's publish latency, batch granular): from the moment a batch's
// first record entered the accumulator to its acknowledgement, attributed to
// every record of the batch (an upper bound for the batch's later records);
// it includes linger and waiting for an in-flight slot. `requestLatency` is
// the wire part only: request written → response decoded.

import { assert } from '@seglog/common';
import type { ProducePartitionData, ProduceResponse } from '@seglog/protocol';
import type { BatchAccumulator, SentBatch } from './batch-accumulator.js';
import type { KafkaConnection } from './kafka-connection.js';
import { LatencyRecorder } from './latency-recorder.js';
import type { LoadOptions } from './load-options.js';
import { ProducerLedger } from './producer-ledger.js';
import { StreamingAccumulator } from './streaming-accumulator.js';
import { UncompressedAccumulator } from './uncompressed-accumulator.js';

/** Produce request bytes per partition beyond its batch: index, records length, tagged fields (upper bound). */
const PARTITION_OVERHEAD_BYTES = 16;

/** Produce request bytes beyond its partitions: frame size, header, client id, acks, timeout, one topic (upper bound). */
export function requestOverheadBytes(o: Pick<LoadOptions, 'clientId' | 'topic'>): number {
  return 64 + Buffer.byteLength(o.clientId, 'utf8') + 8 + Buffer.byteLength(o.topic, 'utf8');
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

/** What the broker answered for a batch whose first response was dropped (test hook `lostResponse`). */
export interface ResendOutcome {
  readonly partition: number;
  readonly firstSequence: number;
  readonly count: number;
  /** In the dropped response (−1: that response carried an error for it). */
  readonly droppedBaseOffset: number;
  /** In the response to the resend (−1: error, see resentErrorCode). */
  readonly resentBaseOffset: number;
  readonly resentErrorCode: number;
  /** The resent bytes equal the bytes first sent. */
  readonly sameBytes: boolean;
}

interface DroppedRequest {
  readonly batches: readonly SentBatch[];
  readonly droppedBaseOffsets: readonly number[];
  readonly copies: readonly Buffer[];
}

export class LoadProducer {
  readonly index: number;
  readonly ledger: ProducerLedger;
  readonly latency: LatencyRecorder;
  readonly requestLatency: LatencyRecorder;
  readonly accumulator: BatchAccumulator;
  produceRequests: number;
  batchesSent: number;
  bytesSent: number;
  /** The largest record batch sent. */
  largestBatchBytes: number;
  readonly resends: ResendOutcome[];
  private readonly o: LoadOptions;
  private readonly s: LoadProducerSetup;
  private generated: number;
  private cursor: number;
  private inFlight: number;
  private startedAt: number;
  private deadline: number;
  private generating: boolean;
  private timer: NodeJS.Timeout | null;
  /** Producing tasks waiting for their next turn (setImmediate) and tasks parked on a full accumulator (produceChunk). */
  private tasksScheduled: number;
  private tasksParked: number;
  private readonly taskTurn: () => void;
  private finish: (() => void) | null;
  /** The lostResponse hook has fired (it fires once). */
  private dropped: boolean;
  private resend: DroppedRequest | null;
  /** Request bytes beyond its batches: header, client id, topic (an upper bound; see requestOverheadBytes). */
  private readonly requestOverheadBytes: number;

  constructor(options: LoadOptions, setup: LoadProducerSetup) {
    assert(setup.records === null || setup.records >= 0, 'LoadProducer: negative record budget');
    this.index = setup.index;
    this.ledger = new ProducerLedger(options.partitions);
    this.latency = new LatencyRecorder();
    this.requestLatency = new LatencyRecorder();
    const identity = { index: setup.index, producerId: setup.producerId, producerEpoch: setup.producerEpoch };
    this.accumulator = options.streamingCompression ? new StreamingAccumulator(options, identity) : new UncompressedAccumulator(options, identity);
    this.accumulator.setWake(() => {
      if (this.finish !== null) this.step(); // a merged batch is sealed: send it if a slot is free
    });
    this.produceRequests = 0;
    this.batchesSent = 0;
    this.bytesSent = 0;
    this.largestBatchBytes = 0;
    this.resends = [];
    this.o = options;
    this.s = setup;
    this.generated = 0;
    this.cursor = setup.index % options.partitions;
    this.inFlight = 0;
    this.startedAt = 0;
    this.deadline = 0;
    this.generating = true;
    this.timer = null;
    this.tasksScheduled = 0;
    this.tasksParked = 0;
    this.taskTurn = () => this.runTask();
    this.finish = null;
    this.dropped = false;
    this.resend = null;
    this.requestOverheadBytes = requestOverheadBytes(options);
  }

  /** Produce requests written and not yet answered (or failed). */
  get requestsInFlight(): number {
    return this.inFlight;
  }

  /** Drops every record not yet in a request (ledger: purged) and stops generating; requests in flight settle normally. */
  purge(): void {
    this.generating = false;
    this.accumulator.purge((partition, firstSequence, count) => this.ledger.purged(partition, firstSequence, count));
    const resend = this.resend;
    this.resend = null;
    if (resend !== null) for (const b of resend.batches) this.ledger.uncertain(b.partition, b.firstSequence, b.count); // sent once already
    if (this.finish !== null) this.step();
  }

  /** purge(), then closes the connection: requests in flight settle as uncertain, `run` resolves. */
  close(): void {
    this.purge();
    this.s.connection.close();
  }

  /** Produces until the record budget or the deadline; resolves when every request is answered (or failed). */
  run(startedAt: number, deadline: number): Promise<void> {
    assert(this.finish === null, 'LoadProducer.run: already running');
    this.startedAt = startedAt;
    this.deadline = deadline;
    return new Promise<void>((resolve) => {
      this.finish = resolve;
      if (this.o.produceChunk !== null) for (let t = 0; t < this.o.produceTasks; t++) this.scheduleTask();
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
    // Closed loop: fill the accumulator before each send. Chunked: the producing tasks add records in their turns.
    const closedLoop = this.o.produceChunk === null;
    if (closedLoop) this.generate(now, Number.MAX_SAFE_INTEGER);
    let sentAny = false;
    while (this.inFlight < this.o.maxInFlight) {
      const sent = this.sendReady(now);
      if (!sent) break;
      sentAny = true;
      if (closedLoop) this.generate(now, Number.MAX_SAFE_INTEGER);
    }
    if (sentAny || !this.generating) this.unparkTasks(); // taking a batch is what frees room in the accumulator
    if (!this.generating && this.tasksScheduled === 0 && this.inFlight === 0 && this.resend === null && !this.accumulator.hasPending()) {
      const finish = this.finish;
      this.finish = null;
      if (finish !== null) finish();
      return;
    }
    this.maybeArmTimer(now);
  }

  /** One producing task's turn: up to produceChunk records, then a send of what is ready if a slot is free. */
  private runTask(): void {
    this.tasksScheduled--;
    if (!this.generating || this.finish === null) {
      this.step(); // the last task out may be what completes the run
      return;
    }
    const now = performance.now();
    if (now >= this.deadline) this.generating = false;
    const full = this.generate(now, this.o.produceChunk as number);
    if (full) this.tasksParked++;
    else if (this.generating) this.scheduleTask();
    this.step();
  }

  private scheduleTask(): void {
    this.tasksScheduled++;
    setImmediate(this.taskTurn);
  }

  private unparkTasks(): void {
    while (this.tasksParked > 0) {
      this.tasksParked--;
      this.scheduleTask();
    }
  }

  /**
   * Adds up to `max` records to the accumulator: within the budget, the rate
   * and what the accumulator holds; true if it stopped because the accumulator is full.
   */
  private generate(now: number, max: number): boolean {
    if (!this.generating) return false;
    let limit = this.s.records ?? Number.MAX_SAFE_INTEGER;
    limit = Math.min(limit, this.generated + max);
    if (this.s.rate !== null) limit = Math.min(limit, Math.floor(((now - this.startedAt) * this.s.rate) / 1000) + 1);
    const partitions = this.o.partitions;
    const timestamp = Date.now();
    while (this.generated < limit) {
      const p = this.cursor;
      if (!this.accumulator.tryAdd(p, this.ledger.nextSequence(p), now, timestamp)) return true; // full: wait for an in-flight slot
      this.ledger.claimSequence(p);
      this.generated++;
      this.cursor = p + 1 === partitions ? 0 : p + 1;
    }
    if (this.s.records !== null && this.generated >= this.s.records) this.generating = false;
    return false;
  }

  /** Sends one request: a pending resend, else every ready batch; false if none is ready. */
  private sendReady(now: number): boolean {
    const resend = this.resend;
    if (resend !== null) {
      this.resend = null;
      this.sendRequest(resend.batches, resend);
      return true;
    }
    const batches: SentBatch[] = [];
    let bytes = this.requestOverheadBytes;
    const partitions = this.o.partitions;
    // Start one partition later each request, so one left out for size goes first next time.
    const start = this.produceRequests % partitions;
    for (let k = 0; k < partitions; k++) {
      const p = start + k < partitions ? start + k : start + k - partitions;
      const batchBytes = this.accumulator.ready(p, now, !this.generating);
      if (batchBytes < 0) continue;
      // Exact wire bytes; the first batch always goes (load-options keeps one batch within maxRequestBytes).
      if (batches.length > 0 && bytes + PARTITION_OVERHEAD_BYTES + batchBytes > this.o.maxRequestBytes) continue;
      bytes += PARTITION_OVERHEAD_BYTES + batchBytes;
      batches.push(this.accumulator.take(p));
    }
    if (batches.length === 0) return false;
    this.sendRequest(batches, null);
    return true;
  }

  private sendRequest(batches: readonly SentBatch[], resend: DroppedRequest | null): void {
    const partitionData: ProducePartitionData[] = [];
    for (const b of batches) {
      this.bytesSent += b.batch.length;
      if (b.batch.length > this.largestBatchBytes) this.largestBatchBytes = b.batch.length;
      partitionData.push({ index: b.partition, records: b.batch });
    }
    const body = { transactionalId: null, acks: this.o.acks, timeoutMs: this.o.requestTimeoutMs, topicData: [{ name: this.o.topic, partitionData }] };
    this.inFlight++;
    this.produceRequests++;
    this.batchesSent += batches.length;
    const writtenAt = performance.now();
    if (this.o.acks === 0) {
      this.s.connection.send('PRODUCE', this.s.produceVersion, body).then(
        () => this.onAcked(batches, writtenAt, null, resend),
        (error: unknown) => this.onFailed(batches, error),
      );
    } else {
      this.s.connection.request('PRODUCE', this.s.produceVersion, body).then(
        (response) => this.onAcked(batches, writtenAt, response, resend),
        (error: unknown) => this.onFailed(batches, error),
      );
    }
  }

  private onAcked(batches: readonly SentBatch[], writtenAt: number, response: ProduceResponse | null, resend: DroppedRequest | null): void {
    this.inFlight--;
    if (response !== null && this.maybeDrop(batches, response)) {
      this.step();
      return;
    }
    const now = performance.now();
    const results = response?.responses[0]?.partitionResponses;
    let records = 0;
    for (let i = 0; i < batches.length; i++) {
      const b = batches[i] as SentBatch;
      const r = results?.find((x) => x.index === b.partition);
      if (resend !== null) this.noteResend(resend, i, r);
      if (response === null) {
        this.ledger.uncertain(b.partition, b.firstSequence, b.count); // acks=0: sent, outcome unknown
      } else {
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

  /** The lostResponse hook: drops the first response carrying its partition and queues the resend. */
  private maybeDrop(batches: readonly SentBatch[], response: ProduceResponse): boolean {
    const hook = this.o.lostResponse;
    if (hook === null || this.dropped || !batches.some((b) => b.partition === hook.partition)) return false;
    this.dropped = true;
    const results = response.responses[0]?.partitionResponses;
    const droppedBaseOffsets = batches.map((b) => {
      const r = results?.find((x) => x.index === b.partition);
      return r === undefined || r.errorCode !== 0 ? -1 : r.baseOffset;
    });
    this.resend = { batches, droppedBaseOffsets, copies: batches.map((b) => Buffer.from(b.batch)) };
    return true;
  }

  private noteResend(resend: DroppedRequest, i: number, r: { baseOffset: number; errorCode: number } | undefined): void {
    const b = resend.batches[i] as SentBatch;
    this.resends.push({
      partition: b.partition, firstSequence: b.firstSequence, count: b.count,
      droppedBaseOffset: resend.droppedBaseOffsets[i] as number,
      resentBaseOffset: r === undefined || r.errorCode !== 0 ? -1 : r.baseOffset,
      resentErrorCode: r === undefined ? -1 : r.errorCode,
      sameBytes: (resend.copies[i] as Buffer).equals(b.batch),
    });
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
    for (let p = 0; p < this.o.partitions; p++) wakeAt = Math.min(wakeAt, this.accumulator.lingerDeadline(p));
    if (this.generating && this.s.rate !== null) {
      wakeAt = Math.min(wakeAt, this.startedAt + ((this.generated + 1) * 1000) / this.s.rate, this.deadline);
    } else if (this.generating && this.s.records === null) {
      wakeAt = Math.min(wakeAt, this.deadline);
    }
    if (wakeAt === Number.POSITIVE_INFINITY) return;
    this.timer = setTimeout(() => this.step(), Math.max(0, Math.ceil(wakeAt - now)));
  }
}
