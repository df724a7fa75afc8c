// LoadOptions: what `runLoad` and `pnpm load` accept, with defaults and the
// checks that turn a bad combination into SEGLOG_ERR_LOAD_USAGE before any
// connection is opened. Names follow Kafka's producer settings where one
// exists (lingerMs = linger.ms, batchBytes = batch.size, maxInFlight =
// max.in.flight.requests.per.connection).

import type { CodecName } from '@seglog/records';
import type { Broker } from '@seglog/broker';
import { GROUP_ASSIGNORS } from './group-assignor.js';
import type { GroupAssignor } from './group-assignor.js';
import { LoadErrorCode, loadError } from './load-error.js';
import { MERGE_FAULT_KINDS } from './merge-job.js';
import type { MergeFaultKind } from './merge-job.js';
import { DEFAULT_MERGE_DEADLINE_MS, defaultMergeWorkers } from './merge-pool.js';
import { PAYLOAD_HEADER_BYTES, PAYLOAD_KINDS } from './payload.js';
import type { PayloadKind } from './payload.js';

/** Test-only: damage what the consume phase sees, to prove the checker fails. */
export interface LoadCorruption {
  readonly partition: number;
  /** Offset relative to the partition's end offset before the run (0 = first record produced). */
  readonly offset: number;
  /**
   * 'flip-payload-byte': one byte of that record's value is flipped after the CRC check;
   * 'skip-offset': that record is dropped as if the fetch had not returned it;
   * 'flip-batch-byte': one byte of the batch holding that record is flipped before the CRC check.
   */
  readonly kind: 'flip-payload-byte' | 'skip-offset' | 'flip-batch-byte';
}

/**
 * Test-only: the first produce response that carries `partition` is treated
 * as lost (as after a timeout): its results are dropped and the request's
 * batches are resent verbatim, before any other request. The report's
 * `produce.resends` says what the broker answered each time.
 */
export interface LoadLostResponse {
  readonly partition: number;
}

/**
 * Test-only: consumer-group member `member` leaves the group mid-run, once it
 * has fetched at least `afterRecords` records; with `commit` it first
 * commits its positions (a clean shutdown), without it its records since the
 * last commit are fetched again by the member that takes its partitions
 * over (the report counts them as duplicates).
 */
export interface LoadGroupLeave {
  readonly member: number;
  readonly afterRecords: number;
  readonly commit: boolean;
}

/**
 * Test-only: consumer-group member `member` joins only once the group has
 * fetched at least `afterRecords` records (the group forms without it): the
 * members consuming then rebalance (commit, rejoin) to let it in.
 */
export interface LoadGroupJoinLate {
  readonly member: number;
  readonly afterRecords: number;
}

/** Test-only: the `merge`-th merge of each producer (1-based) fails in its worker: it throws, or the worker exits. */
export interface LoadMergeFault {
  readonly merge: number;
  readonly kind: MergeFaultKind;
}

export interface LoadOptions {
  readonly host: string;
  readonly port: number;
  readonly topic: string;
  readonly partitions: number;
  readonly producers: number;
  /** Value size of every record (>= 12: the payload carries producer, partition, sequence). */
  readonly recordBytes: number;
  /** Stop after this many records in all (give records or durationMs, not both). */
  readonly records: number | null;
  readonly durationMs: number | null;
  /** Target records/s over all producers; null = as fast as acknowledgements allow (closed loop). */
  readonly rate: number | null;
  /**
   * Records a producing task adds per turn before yielding to the event loop
   * (null: the closed loop, which adds records until the accumulator is full
   * before anything is sent). With a chunk, produceTasks tasks per producer
   * take turns (setImmediate), each turn followed by a send of what is ready
   * if a request slot is free: an application producing concurrently with
   * the client's I/O, as franz-go's benchmark goroutines do. Needs rate null.
   */
  readonly produceChunk: number | null;
  /** Producing tasks per producer when produceChunk is set (default 4). */
  readonly produceTasks: number;
  readonly acks: -1 | 0 | 1;
  readonly idempotent: boolean;
  readonly compression: CodecName;
  readonly lingerMs: number;
  /** batch.size: a batch is closed when its UNCOMPRESSED records reach this. */
  readonly batchBytes: number;
  /**
   * franz-go's StreamingCompression (PR #1366): batches are built through
   * BoundedBatchBuilder, bounded by their COMPRESSED size (maxBatchBytes),
   * and a partition's backlog of more than one uncompressed batch is sealed
   * into one such batch, each record compressed once (streaming-accumulator.ts).
   */
  readonly streamingCompression: boolean;
  /** The broker's max.message.bytes: the bound of a whole (compressed) batch with streamingCompression. */
  readonly maxBatchBytes: number;
  /** buffer.memory: value bytes generated and not yet sent, per producer (streamingCompression; default 32 MiB). */
  readonly bufferBytes: number;
  /** Value generator (payload.ts): 'random' is incompressible, 'text' about 5× compressible. */
  readonly payload: PayloadKind;
  /**
   * Merge workers (threads) of the process-wide pool that compresses
   * streamingCompression's merged batches (merge-pool.ts); 0 merges on the
   * producer's thread, in a later macrotask. Default: cores − 1, 1..4.
   */
  readonly mergeWorkers: number;
  /** A merge not answered within this many ms fails (its worker is terminated) and merging demotes (default 10000). */
  readonly mergeDeadlineMs: number;
  /** Test hook (see LoadMergeFault). */
  readonly mergeFault: LoadMergeFault | null;
  /**
   * Bound on one produce request (franz-go's BrokerMaxWriteBytes, the
   * broker's socket.request.max.bytes): requests are packed by the sealed
   * batches' exact wire lengths.
   */
  readonly maxRequestBytes: number;
  /** Produce requests in flight per connection (Kafka: at most 5 with idempotence). */
  readonly maxInFlight: number;
  /** CreateTopics first (an existing topic with enough partitions is accepted). */
  readonly createTopic: boolean;
  /** Consume everything back and check it. Skipped automatically for an in-process blackhole broker. */
  readonly verify: boolean;
  /** External broker: read its CPU from /proc/<pid>/stat. */
  readonly brokerPid: number | null;
  /** In-process broker: CPU by process.cpuUsage (broker and load client together); blackhole detection. */
  readonly broker: Broker | null;
  readonly requestTimeoutMs: number;
  /** Hard bound on the produce phase; producers stop sending at it. */
  readonly maxProduceMs: number;
  /** Bound on the number of Fetch requests of the consume phase. */
  readonly maxFetchRequests: number;
  readonly partitionMaxBytes: number;
  readonly clientId: string;
  /** Violations kept in the report (all are counted). */
  readonly maxViolationsReported: number;
  readonly corruption: LoadCorruption | null;
  readonly lostResponse: LoadLostResponse | null;
  /**
   * group.id: consume as a consumer group of `consumers` members
   * (group-consumer.ts) instead of fetching every partition directly; null =
   * no group.
   */
  readonly group: string | null;
  /** Members of the group (each with its own coordinator and fetch connections). */
  readonly consumers: number;
  /** partition.assignment.strategy of every member: 'range' (Kafka's default) or 'roundrobin'. */
  readonly assignor: GroupAssignor;
  /** session.timeout.ms (Kafka 45000). */
  readonly sessionTimeoutMs: number;
  /** JoinGroup's rebalance timeout, Kafka's max.poll.interval.ms (300000). */
  readonly rebalanceTimeoutMs: number;
  /** heartbeat.interval.ms (Kafka 3000). */
  readonly heartbeatIntervalMs: number;
  /** auto.commit.interval.ms (Kafka 5000): each member commits its positions this often, and at the end. */
  readonly autoCommitIntervalMs: number;
  readonly groupLeave: LoadGroupLeave | null;
  readonly groupJoinLate: LoadGroupJoinLate | null;
}

export const LOAD_DEFAULTS: LoadOptions = Object.freeze({
  host: '127.0.0.1',
  port: 9092,
  topic: 'seglog-load',
  partitions: 16,
  producers: 1,
  recordBytes: 100,
  records: null,
  durationMs: null,
  rate: null,
  produceChunk: null,
  produceTasks: 4,
  acks: -1,
  idempotent: false,
  compression: 'none',
  lingerMs: 1,
  batchBytes: 16_384,
  streamingCompression: false,
  maxBatchBytes: 1_048_588,
  bufferBytes: 32 * 1024 * 1024,
  payload: 'random',
  mergeWorkers: defaultMergeWorkers(),
  mergeDeadlineMs: DEFAULT_MERGE_DEADLINE_MS,
  mergeFault: null,
  maxRequestBytes: 104_857_600,
  maxInFlight: 5,
  createTopic: false,
  verify: true,
  brokerPid: null,
  broker: null,
  requestTimeoutMs: 30_000,
  maxProduceMs: 600_000,
  maxFetchRequests: 100_000,
  partitionMaxBytes: 1_048_576,
  clientId: 'seglog-load',
  maxViolationsReported: 100,
  corruption: null,
  lostResponse: null,
  group: null,
  consumers: 1,
  assignor: 'range',
  sessionTimeoutMs: 45_000,
  rebalanceTimeoutMs: 300_000,
  heartbeatIntervalMs: 3000,
  autoCommitIntervalMs: 5000,
  groupLeave: null,
  groupJoinLate: null,
});

/** Room beyond a record's value for it to fit a batch alone: header 61, record framing <= 30, codec framing. */
const STREAMING_RECORD_SLACK_BYTES = 256;

/** Room in a request beyond one batch: header, client id, topic, partition framing. */
const REQUEST_SLACK_BYTES = 1024;

function usage(message: string, context: Readonly<Record<string, unknown>> = {}): Error {
  return loadError(LoadErrorCode.USAGE, message, context);
}

function positiveInt(name: string, value: number, max = Number.MAX_SAFE_INTEGER): void {
  if (!Number.isSafeInteger(value) || value < 1 || value > max) throw usage(`${name} must be an integer in 1..${max}, got ${value}`, { [name]: value });
}

/** Defaults filled in and every rule checked (throws SEGLOG_ERR_LOAD_USAGE). */
export function resolveLoadOptions(partial: Partial<LoadOptions>): LoadOptions {
  const o: LoadOptions = { ...LOAD_DEFAULTS, ...partial };
  positiveInt('partitions', o.partitions, 10_000);
  positiveInt('producers', o.producers, 1000);
  positiveInt('recordBytes', o.recordBytes, 64 * 1024 * 1024);
  if (o.recordBytes < PAYLOAD_HEADER_BYTES) throw usage(`recordBytes must be at least ${PAYLOAD_HEADER_BYTES} (producer, partition, sequence)`);
  if ((o.records === null) === (o.durationMs === null)) throw usage('give exactly one of records and durationMs');
  if (o.records !== null) positiveInt('records', o.records);
  if (o.durationMs !== null) positiveInt('durationMs', o.durationMs);
  if (o.rate !== null && !(o.rate > 0 && Number.isFinite(o.rate))) throw usage(`rate must be a positive number, got ${o.rate}`);
  if (o.produceChunk !== null) {
    positiveInt('produceChunk', o.produceChunk, 1_000_000);
    if (o.rate !== null) throw usage('produceChunk models a closed-loop application: give it without rate');
  }
  positiveInt('produceTasks', o.produceTasks, 1000);
  if (o.acks !== -1 && o.acks !== 0 && o.acks !== 1) throw usage(`acks must be -1, 0 or 1, got ${String(o.acks)}`);
  if (o.idempotent && o.acks !== -1) throw usage('idempotence needs acks=-1 (as Kafka requires acks=all)');
  if (o.idempotent && o.maxInFlight > 5) throw usage('idempotence allows at most 5 requests in flight per connection');
  positiveInt('maxInFlight', o.maxInFlight, 1000);
  if (!Number.isInteger(o.lingerMs) || o.lingerMs < 0) throw usage(`lingerMs must be an integer >= 0, got ${o.lingerMs}`);
  positiveInt('batchBytes', o.batchBytes, 64 * 1024 * 1024);
  positiveInt('maxBatchBytes', o.maxBatchBytes, 0x7fffffff);
  positiveInt('bufferBytes', o.bufferBytes, 0x7fffffff);
  if (!PAYLOAD_KINDS.includes(o.payload)) throw usage(`payload must be one of ${PAYLOAD_KINDS.join(', ')}, got ${String(o.payload)}`);
  if (o.streamingCompression) {
    // Every record must fit a batch alone, compressed or not (61-byte header, record framing, codec worst case).
    if (o.recordBytes + STREAMING_RECORD_SLACK_BYTES > o.maxBatchBytes) throw usage(`recordBytes + ${STREAMING_RECORD_SLACK_BYTES} must be at most maxBatchBytes (${o.maxBatchBytes})`);
    if (o.bufferBytes < o.batchBytes) throw usage('bufferBytes must be at least batchBytes');
  }
  if (!Number.isInteger(o.mergeWorkers) || o.mergeWorkers < 0 || o.mergeWorkers > 64) throw usage(`mergeWorkers must be an integer in 0..64, got ${o.mergeWorkers}`);
  positiveInt('mergeDeadlineMs', o.mergeDeadlineMs, 0x7fffffff);
  if (o.mergeFault !== null && !(Number.isInteger(o.mergeFault.merge) && o.mergeFault.merge >= 1 && MERGE_FAULT_KINDS.includes(o.mergeFault.kind))) {
    throw usage(`mergeFault needs merge >= 1 and kind one of ${MERGE_FAULT_KINDS.join(', ')}`);
  }
  positiveInt('maxRequestBytes', o.maxRequestBytes, 0x7fffffff);
  const batchMax = o.streamingCompression ? o.maxBatchBytes : o.batchBytes + o.recordBytes + STREAMING_RECORD_SLACK_BYTES;
  if (o.maxRequestBytes < batchMax + REQUEST_SLACK_BYTES + 2 * o.topic.length + 2 * o.clientId.length) {
    throw usage(`maxRequestBytes must hold one whole batch and the request's framing (at least ${batchMax + REQUEST_SLACK_BYTES} bytes)`);
  }
  if (o.lostResponse !== null && !(Number.isInteger(o.lostResponse.partition) && o.lostResponse.partition >= 0 && o.lostResponse.partition < o.partitions)) {
    throw usage('lostResponse.partition must be one of the partitions');
  }
  positiveInt('requestTimeoutMs', o.requestTimeoutMs);
  positiveInt('maxProduceMs', o.maxProduceMs);
  positiveInt('maxFetchRequests', o.maxFetchRequests);
  positiveInt('partitionMaxBytes', o.partitionMaxBytes);
  if (o.topic.length === 0 || o.topic.length > 249) throw usage('topic must be 1..249 characters');
  if (!Number.isInteger(o.port) || o.port < 1 || o.port > 65535) throw usage(`port must be in 1..65535, got ${o.port}`);
  if (o.brokerPid !== null) positiveInt('brokerPid', o.brokerPid);
  checkGroupOptions(o);
  return o;
}

function checkGroupOptions(o: LoadOptions): void {
  positiveInt('consumers', o.consumers, 1000);
  if (!GROUP_ASSIGNORS.includes(o.assignor)) throw usage(`assignor must be one of ${GROUP_ASSIGNORS.join(', ')}, got ${String(o.assignor)}`);
  positiveInt('sessionTimeoutMs', o.sessionTimeoutMs, 0x7fffffff);
  positiveInt('rebalanceTimeoutMs', o.rebalanceTimeoutMs, 0x7fffffff);
  positiveInt('heartbeatIntervalMs', o.heartbeatIntervalMs, 0x7fffffff);
  positiveInt('autoCommitIntervalMs', o.autoCommitIntervalMs, 0x7fffffff);
  if (o.group === null) {
    if (o.consumers !== 1 || o.groupLeave !== null || o.groupJoinLate !== null) throw usage('consumers, groupLeave and groupJoinLate need a group');
    return;
  }
  if (o.group.length === 0 || o.group.length > 255) throw usage('group must be 1..255 characters');
  if (o.heartbeatIntervalMs >= o.sessionTimeoutMs) throw usage('heartbeatIntervalMs must be lower than sessionTimeoutMs (as Kafka requires)');
  if (!o.verify) throw usage('a group consumes in the verify phase: give group without no-verify');
  const leave = o.groupLeave;
  if (leave !== null && !(Number.isInteger(leave.member) && leave.member >= 0 && leave.member < o.consumers && Number.isSafeInteger(leave.afterRecords) && leave.afterRecords >= 0)) {
    throw usage('groupLeave.member must be one of the consumers and afterRecords a count');
  }
  if (leave !== null && o.consumers < 2) throw usage('groupLeave needs a second consumer to take the partitions over');
  const late = o.groupJoinLate;
  if (late !== null && !(Number.isInteger(late.member) && late.member >= 0 && late.member < o.consumers && Number.isSafeInteger(late.afterRecords) && late.afterRecords >= 0)) {
    throw usage('groupJoinLate.member must be one of the consumers and afterRecords a count');
  }
  if (late !== null && (o.consumers < 2 || leave?.member === late.member)) throw usage('groupJoinLate needs another consumer that starts, and not the member that leaves');
}
