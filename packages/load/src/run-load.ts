// runLoad: the programmatic entry of the load/diagnostic client (tests,
// benchmarks, `pnpm load`). Setup on a control connection, then the produce
// phase on `producers` connections of their own, then the consume phase that
// reads everything back and checks it (load-checker.ts). Returns a report;
// throws only for setup and usage errors (SEGLOG_ERR_LOAD_*). Integrity
// violations, refused batches and a broker that refuses fetches are results.

import type { CpuSample, CpuScope } from './cpu-probe.js';
import { CpuProbe } from './cpu-probe.js';
import { consumeAsGroup } from './group-consumer.js';
import type { GroupSummary } from './group-consumer.js';
import { KafkaConnection } from './kafka-connection.js';
import { LatencyRecorder } from './latency-recorder.js';
import type { LatencySummary } from './latency-recorder.js';
import { LoadChecker } from './load-checker.js';
import type { ConsumeResult } from './load-consumer.js';
import { consumeAndCheck, kafkaErrorName } from './load-consumer.js';
import { resolveLoadOptions } from './load-options.js';
import type { LoadOptions } from './load-options.js';
import { LoadProducer } from './load-producer.js';
import type { ResendOutcome } from './load-producer.js';
import { StreamingAccumulator } from './streaming-accumulator.js';
import type { ApiVersionsUsed } from './load-setup.js';
import { endOffsets, initProducerId, negotiateVersions, prepareTopic, settledEndOffsets } from './load-setup.js';

export interface ProduceSummary {
  /** Records generated and put in a produce request. */
  readonly recordsSent: number;
  readonly recordsAcknowledged: number;
  /** Refused by the broker with an error code (per code name: records). */
  readonly recordsFailed: number;
  readonly failedByError: Readonly<Record<string, number>>;
  /** Written, never answered: acks=0 (all records), or a timed-out / broken connection. */
  readonly recordsUncertain: number;
  /** Dropped by purge/close before they were written. */
  readonly recordsPurged: number;
  readonly requestErrors: readonly string[];
  readonly produceRequests: number;
  readonly batches: number;
  readonly recordsPerRequest: number;
  readonly recordsPerBatch: number;
  /** Record batch bytes put on the wire (after compression). */
  readonly batchBytesSent: number;
  /** The largest record batch sent (bytes, after compression). */
  readonly largestBatchBytes: number;
  readonly durationMs: number;
  /** Acknowledged records per second (acks=0: records written to the socket per second). */
  readonly completionRate: number;
  /** Acknowledged value bytes per second, in MB (10^6). */
  readonly payloadMBps: number;
  /** Record batch bytes sent per second, in MB (10^6). */
  readonly wireMBps: number;
  /** Batch opened → acknowledged, per record (see load-producer.ts). */
  readonly publishLatency: LatencySummary;
  /** Request written → response read, per record. */
  readonly requestLatency: LatencySummary;
  /** --streaming-compression: merged batches sealed, the uncompressed-bounded batches' worth they held (batchesIn) and gave (batchesOut), codec failures (demotions to the plain path). */
  readonly streaming: { readonly merges: number; readonly batchesIn: number; readonly batchesOut: number; readonly mergeErrors: number } | null;
  /** Test hook lostResponse: what the broker answered to each resent batch. */
  readonly resends: readonly ResendOutcome[];
}

export interface BrokerCpu {
  readonly scope: CpuScope;
  readonly userMs: number;
  readonly systemMs: number;
  /** (user + system) µs per acknowledged record (acks=0: per record sent). */
  readonly usPerRecord: number;
}

export interface LoadReport {
  /** No integrity violation. */
  readonly integrityOk: boolean;
  /** integrityOk, and every record acknowledged (acks=0: no request failed). */
  readonly ok: boolean;
  readonly options: Omit<LoadOptions, 'broker' | 'corruption' | 'lostResponse'>;
  readonly versions: ApiVersionsUsed;
  readonly producerIds: readonly { readonly producerId: number; readonly producerEpoch: number }[];
  readonly startOffsets: readonly number[];
  readonly endOffsets: readonly number[];
  /** Per producer: [partition, baseOffset, firstSequence, count] per acknowledged batch. */
  readonly ackedBatches: readonly (readonly number[])[];
  readonly produce: ProduceSummary;
  readonly brokerCpu: BrokerCpu | null;
  readonly consume: ConsumeResult;
  /** Consumer-group mode (`group`): the group's members, generations, commits and consume rate; null otherwise. */
  readonly group: GroupSummary | null;
}

interface Connections {
  readonly control: KafkaConnection;
  readonly producers: KafkaConnection[];
}

function connect(o: LoadOptions, clientId: string): Promise<KafkaConnection> {
  return KafkaConnection.connect({ host: o.host, port: o.port, clientId, requestTimeoutMs: o.requestTimeoutMs, maxResponseBytes: 256 * 1024 * 1024 });
}

export async function runLoad(partial: Partial<LoadOptions>): Promise<LoadReport> {
  const o = resolveLoadOptions(partial);
  const connections: Connections = { control: await connect(o, `${o.clientId}-control`), producers: [] };
  try {
    const versions = await negotiateVersions(connections.control);
    await prepareTopic(connections.control, versions, o);
    const startOffsets = await endOffsets(connections.control, versions, o);
    const producers = await startProducers(o, versions, connections);
    const produced = await producePhase(o, producers);
    const ends = o.acks === 0 ? await settledEndOffsets(connections.control, versions, o) : await endOffsets(connections.control, versions, o);
    const { consume, group } = await consumePhase(o, versions, connections.control, producers, startOffsets, ends);
    return buildReport(o, { versions, producers, startOffsets, endOffsets: ends, consume, group, ...produced });
  } finally {
    connections.control.close();
    for (const c of connections.producers) c.close();
  }
}

interface StartedProducer {
  readonly producer: LoadProducer;
  readonly producerId: number;
  readonly producerEpoch: number;
}

async function startProducers(o: LoadOptions, versions: ApiVersionsUsed, connections: Connections): Promise<StartedProducer[]> {
  const out: StartedProducer[] = [];
  const perRate = o.rate === null ? null : o.rate / o.producers;
  for (let i = 0; i < o.producers; i++) {
    const connection = await connect(o, `${o.clientId}-${i}`);
    connections.producers.push(connection);
    const id = o.idempotent ? await initProducerId(connection, versions, o) : { producerId: -1, producerEpoch: -1 };
    const records = o.records === null ? null : Math.floor(o.records / o.producers) + (i < o.records % o.producers ? 1 : 0);
    const producer = new LoadProducer(o, { index: i, connection, produceVersion: versions.produce, ...id, records, rate: perRate });
    out.push({ producer, ...id });
  }
  return out;
}

async function producePhase(o: LoadOptions, producers: readonly StartedProducer[]): Promise<{ durationMs: number; cpu: CpuSample | null; cpuScope: CpuScope | null }> {
  const probe = o.brokerPid !== null ? CpuProbe.ofPid(o.brokerPid) : o.broker !== null ? CpuProbe.ofProcess() : null;
  const started = performance.now();
  const deadline = started + Math.min(o.durationMs ?? Number.POSITIVE_INFINITY, o.maxProduceMs);
  await Promise.all(producers.map((p) => p.producer.run(started, deadline)));
  const durationMs = performance.now() - started;
  return { durationMs, cpu: probe === null ? null : probe.elapsed(), cpuScope: probe === null ? null : probe.scope };
}

async function consumePhase(
  o: LoadOptions, versions: ApiVersionsUsed, control: KafkaConnection, producers: readonly StartedProducer[],
  startOffsets: readonly number[], ends: readonly number[],
): Promise<{ consume: ConsumeResult; group: GroupSummary | null }> {
  if (!o.verify) return { consume: { kind: 'skipped', reason: 'no-verify' }, group: null };
  if (o.broker !== null && o.broker.options.blackhole) return { consume: { kind: 'skipped', reason: 'blackhole' }, group: null };
  const checker = new LoadChecker({
    partitions: o.partitions, recordBytes: o.recordBytes, payload: o.payload,
    producers: producers.map((p) => ({ ledger: p.producer.ledger, producerId: p.producerId, producerEpoch: p.producerEpoch })),
    startOffsets, endOffsets: ends, allUncertain: o.acks === 0, maxViolationsReported: o.maxViolationsReported, corruption: o.corruption,
  });
  if (o.group !== null) {
    return consumeAsGroup({
      ...o, group: o.group, fetchVersion: versions.fetch, startOffsets, endOffsets: ends,
    }, checker);
  }
  const consume = await consumeAndCheck({
    connection: control, fetchVersion: versions.fetch, topic: o.topic, partitionMaxBytes: o.partitionMaxBytes,
    maxFetchRequests: o.maxFetchRequests, endOffsets: ends,
  }, checker);
  return { consume, group: null };
}

interface RunResult {
  readonly versions: ApiVersionsUsed;
  readonly producers: readonly StartedProducer[];
  readonly startOffsets: readonly number[];
  readonly endOffsets: readonly number[];
  readonly consume: ConsumeResult;
  readonly group: GroupSummary | null;
  readonly durationMs: number;
  readonly cpu: CpuSample | null;
  readonly cpuScope: CpuScope | null;
}

function buildReport(o: LoadOptions, r: RunResult): LoadReport {
  const produce = summariseProduce(o, r.producers.map((p) => p.producer), r.durationMs);
  const perRecord = o.acks === 0 ? produce.recordsUncertain : produce.recordsAcknowledged;
  const brokerCpu: BrokerCpu | null = r.cpu === null || r.cpuScope === null ? null : {
    scope: r.cpuScope, userMs: r.cpu.userMs, systemMs: r.cpu.systemMs,
    usPerRecord: perRecord === 0 ? 0 : ((r.cpu.userMs + r.cpu.systemMs) * 1000) / perRecord,
  };
  const integrityOk = r.consume.kind !== 'verified' || r.consume.violationCount === 0;
  const allAcked = o.acks === 0 ? produce.requestErrors.length === 0 : produce.recordsAcknowledged === produce.recordsSent;
  const { broker: _broker, corruption: _corruption, lostResponse: _lostResponse, ...options } = o;
  return {
    integrityOk, ok: integrityOk && allAcked, options, versions: r.versions,
    producerIds: r.producers.map((p) => ({ producerId: p.producerId, producerEpoch: p.producerEpoch })),
    startOffsets: r.startOffsets, endOffsets: r.endOffsets,
    ackedBatches: r.producers.map((p) => [...p.producer.ledger.ackedBatches]),
    produce, brokerCpu, consume: r.consume, group: r.group,
  };
}

function summariseProduce(o: LoadOptions, producers: readonly LoadProducer[], durationMs: number): ProduceSummary {
  const latency = new LatencyRecorder();
  const requestLatency = new LatencyRecorder();
  const failedByError: Record<string, number> = {};
  let sent = 0, acked = 0, failed = 0, uncertain = 0, purged = 0, requests = 0, batches = 0, bytes = 0, largest = 0;
  const requestErrors: string[] = [];
  const resends: ResendOutcome[] = [];
  const streaming = { merges: 0, batchesIn: 0, batchesOut: 0, mergeErrors: 0 };
  for (const p of producers) {
    resends.push(...p.resends);
    if (p.accumulator instanceof StreamingAccumulator) {
      streaming.merges += p.accumulator.merges;
      streaming.batchesIn += p.accumulator.mergedBatchesIn;
      streaming.batchesOut += p.accumulator.mergedBatchesOut;
      streaming.mergeErrors += p.accumulator.mergeErrors;
    }
    latency.merge(p.latency);
    requestLatency.merge(p.requestLatency);
    const l = p.ledger;
    for (let part = 0; part < o.partitions; part++) sent += l.sent(part);
    acked += l.recordsAcked;
    failed += l.recordsFailed;
    uncertain += l.recordsUncertain;
    purged += l.recordsPurged;
    for (let i = 0; i < l.failedBatches.length; i += 4) {
      const name = kafkaErrorName(l.failedBatches[i + 3] as number);
      failedByError[name] = (failedByError[name] ?? 0) + (l.failedBatches[i + 2] as number);
    }
    requestErrors.push(...l.errors.map((e) => `producer ${p.index}: ${e}`));
    requests += p.produceRequests;
    batches += p.batchesSent;
    bytes += p.bytesSent;
    largest = Math.max(largest, p.largestBatchBytes);
  }
  const seconds = durationMs / 1000;
  const completed = o.acks === 0 ? uncertain : acked;
  return {
    recordsSent: sent, recordsAcknowledged: acked, recordsFailed: failed, failedByError, recordsUncertain: uncertain, recordsPurged: purged, requestErrors,
    produceRequests: requests, batches, recordsPerRequest: requests === 0 ? 0 : sent / requests, recordsPerBatch: batches === 0 ? 0 : sent / batches,
    batchBytesSent: bytes, largestBatchBytes: largest, durationMs, completionRate: completed / seconds, payloadMBps: (completed * o.recordBytes) / 1e6 / seconds,
    wireMBps: bytes / 1e6 / seconds, publishLatency: latency.summary(), requestLatency: requestLatency.summary(),
    streaming: o.streamingCompression ? streaming : null, resends,
  };
}
