// Producer-side cost and request density of compressed produce, uncompressed-
// vs compressed-size-bounded batches (issue 10 item 3; franz-go PR #1366):
// the load client (packages/load) against an in-process BLACKHOLE
// broker, so the log's storage cost is out and what remains is the client
// (payload generation, compression, merging) plus the broker's produce
// validation on loopback, both in this process.
//
// Cases: codec gzip/zstd/lz4/snappy/none × linger 0/1 ms × batching
//   uncompressed-bounded  batches closed at batchBytes = 1048588 bytes of
//                         UNCOMPRESSED records (Kafka batch.size, franz-go's
//                         ProducerBatchMaxBytes set to the broker limit),
//                         compressed one-shot on the producer's thread when
//                         sealed;
//   compressed-bounded    --streaming-compression: a backlog of more than
//                         one such batch is compressed once, on a merge
//                         worker (merge-pool.ts: cores − 1 threads), into one
//                         batch bounded by maxBatchBytes = 1048588 COMPRESSED
//                         bytes; smaller backlogs take the plain path on the
//                         worker too (codec none: on the producer's thread);
// Generators (load-producer.ts):
//   tasks 4×512 (every codec, both lingers: the issue-16 figures) 4
//               producing tasks taking turns through setImmediate, each turn
//               adding 512 records and then sending what is ready if a
//               request slot is free: at linger 0 the uncompressed path
//               sends what is there (franz-go's linger 0), so its records
//               per request are about what the turns add between sends; the
//               compressed-bounded path compresses on the worker while the
//               tasks go on adding, so its backlog, and its merged batches,
//               grow to the compressed bound (franz-go: producing never
//               waits on compression);
//   tasks 4×1024 (gzip, linger 0) the same with twice the records per turn:
//               how much the density ratio owes to the generator;
//   parallel    (every codec, linger 0) PARALLEL_PRODUCERS producers, each
//               with its own connection, accumulator and 4×512 tasks,
//               sharing the record budget and the merge workers;
//   partitions  (gzip, zstd, lz4, linger 0) the 4×512 generator over
//               MANY_PARTITIONS partitions: each request carries a batch per
//               partition, so records per request no longer stop at one
//               batch's worth;
//   closed      (gzip, zstd, lz4, linger 0) the closed loop: records are
//               added until the accumulator refuses one before anything is
//               sent, so every uncompressed batch is full (batchBytes) and
//               the uncompressed baseline is as dense as it can be: the
//               density ratio is then about the wire compression ratio.
// Idempotent producers, acks -1, 1 partition (100k records: about ten
// merged gzip batches), 512-byte 'text' values (payload.ts: gzip 5.24×,
// zstd 4.57×, lz4 2.45×), ≤ 5 in flight, buffer 32 MiB. The merge workers
// are started before the first round (untimed).
// franz-go's own benchmark (BenchmarkProduceBlackhole) uses medians of 4;
// use --runs 4 or more (the default is 7).
// Timed: the produce phase only (report.produce.durationMs: first record
// generated → last acknowledgement). Reported per case, medians over the
// rounds (cases alternate order between rounds): ns/record (wall: client
// time per record, the issue-16 targets), process CPU per record (every
// thread: producer, merge workers, in-process broker), payload MB/s, records
// per produce request and per batch, wire compression ratio, and, against
// uncompressed-bounded at the same codec, linger, generator and producers,
// the ratios of the first two and of records per request.
// Figures: packages/load/README.md ("Batches bounded by their compressed
// size").
// Checksum: records acknowledged plus the end-offset advance over all rounds
// (each must equal records × rounds; a case that silently did nothing shows).
import { Broker } from '@seglog/broker';
import { runLoad, warmMergeWorkers } from '@seglog/load';
import { LOAD_DEFAULTS } from '@seglog/load';
import type { LoadOptions, LoadReport } from '@seglog/load';
import { median, printTable, runCases, type BenchOptions, type Case } from './lib/harness.js';

const CODECS = ['gzip', 'zstd', 'lz4', 'snappy', 'none'] as const;
/** The codecs the closed loop runs (those with a density target; bench time). */
const CLOSED_CODECS: readonly string[] = ['gzip', 'zstd', 'lz4'];
const LINGERS = [0, 1] as const;
const PARALLEL_PRODUCERS = 4;
const PARTITIONS = 1;
/** The multi-partition variant: one producer's records spread over this many partitions (a request carries one batch per partition). */
const MANY_PARTITIONS = 16;
const PRODUCE_TASKS = 4;
const PRODUCE_CHUNK = 512;
const MODES = ['uncompressed-bounded', 'compressed-bounded'] as const;
const LIMIT_BYTES = 1_048_588;

interface Measured {
  readonly name: string;
  readonly baseline: string;
  readonly nsPerRecord: number[];
  /** process CPU (user + system: client and in-process broker) per record over the produce phase. */
  readonly cpuNsPerRecord: number[];
  readonly mbps: number[];
  readonly recordsPerRequest: number[];
  readonly recordsPerBatch: number[];
  readonly wireRatio: number[];
}

interface Variant {
  readonly producers: number;
  readonly partitions: number;
  readonly lingerMs: number;
  /** Records per producing task's turn (null: the closed loop). */
  readonly chunk: number | null;
  readonly codecs: readonly string[];
}

export async function run(options: BenchOptions): Promise<void> {
  const records = options.quick ? 4_000 : 100_000;
  const chunk = options.quick ? 64 : PRODUCE_CHUNK;
  const common: Partial<LoadOptions> = {
    partitions: PARTITIONS, producers: 1, recordBytes: 512, payload: 'text', records, acks: -1, idempotent: true, createTopic: true,
    batchBytes: LIMIT_BYTES, maxBatchBytes: LIMIT_BYTES, maxInFlight: 5, requestTimeoutMs: 60_000, maxProduceMs: 600_000,
  };
  console.log(`params: ${records} records × 512 B text values per case, ${PARTITIONS} partition(s), 1 idempotent producer (parallel: ${PARALLEL_PRODUCERS}), acks -1, ` +
    `generator ${PRODUCE_TASKS} tasks × ${chunk} records per turn | closed loop, 5 in flight, limit ${LIMIT_BYTES} B (uncompressed batch.size | compressed max.message.bytes), ` +
    `buffer 32 MiB, merge workers ${LOAD_DEFAULTS.mergeWorkers}, blackhole broker in-process`);
  const broker = await Broker.start({ blackhole: true, port: 0, log: () => undefined });
  await warmMergeWorkers(LOAD_DEFAULTS.mergeWorkers);
  try {
    const measured: Measured[] = [];
    const cases: Case[] = [];
    const variants: Variant[] = LINGERS.map((lingerMs) => ({ producers: 1, partitions: PARTITIONS, lingerMs, chunk, codecs: CODECS }));
    variants.push({ producers: PARALLEL_PRODUCERS, partitions: PARTITIONS, lingerMs: 0, chunk, codecs: CODECS });
    variants.push({ producers: 1, partitions: MANY_PARTITIONS, lingerMs: 0, chunk, codecs: CLOSED_CODECS });
    variants.push({ producers: 1, partitions: PARTITIONS, lingerMs: 0, chunk: chunk * 2, codecs: ['gzip'] });
    variants.push({ producers: 1, partitions: PARTITIONS, lingerMs: 0, chunk: null, codecs: CLOSED_CODECS });
    for (const codec of CODECS) {
      for (const v of variants) {
        if (!v.codecs.includes(codec)) continue;
        const generator = v.chunk === null ? 'closed' : `tasks ${PRODUCE_TASKS}×${v.chunk}`;
        const label = `${codec.padEnd(6)} ${generator} linger ${v.lingerMs}${v.producers > 1 ? ` ×${v.producers} producers` : ''}${v.partitions > 1 ? ` ×${v.partitions} partitions` : ''}`;
        for (const mode of MODES) {
          const m: Measured = {
            name: `${label} ${mode}`, baseline: `${label} ${MODES[0]}`,
            nsPerRecord: [], cpuNsPerRecord: [], mbps: [], recordsPerRequest: [], recordsPerBatch: [], wireRatio: [],
          };
          measured.push(m);
          const caseOptions: Partial<LoadOptions> = {
            ...common, producers: v.producers, partitions: v.partitions, port: broker.port, broker, topic: `bench-${codec}-${v.lingerMs}-${v.producers}-${v.partitions}-${v.chunk ?? 'closed'}-${mode}`,
            compression: codec, lingerMs: v.lingerMs, streamingCompression: mode === 'compressed-bounded',
            ...(v.chunk === null ? {} : { produceChunk: v.chunk, produceTasks: PRODUCE_TASKS }),
          };
          cases.push({ name: m.name, run: async () => record(m, await runLoad(caseOptions), records) });
        }
      }
    }
    const results = await runCases(cases, options);
    printResults(measured, results.map((r) => r.checksum), records * options.runs * 2);
  } finally {
    await broker.stop();
  }
}

function record(m: Measured, report: LoadReport, records: number): { units: number; checksum: number } {
  const p = report.produce;
  if (!report.ok || p.recordsAcknowledged !== records) throw new Error(`${m.name}: ${p.recordsAcknowledged}/${records} acknowledged, errors ${p.requestErrors.join('; ')}`);
  m.nsPerRecord.push((p.durationMs * 1e6) / records);
  m.cpuNsPerRecord.push((report.brokerCpu?.usPerRecord ?? Number.NaN) * 1000);
  m.mbps.push(p.payloadMBps);
  m.recordsPerRequest.push(p.recordsPerRequest);
  m.recordsPerBatch.push(p.recordsPerBatch);
  m.wireRatio.push((records * report.options.recordBytes) / p.batchBytesSent);
  let advance = 0;
  report.endOffsets.forEach((end, i) => (advance += end - (report.startOffsets[i] ?? 0)));
  return { units: records, checksum: (p.recordsAcknowledged + advance) >>> 0 };
}

function printResults(measured: readonly Measured[], checksums: readonly number[], expected: number): void {
  const rows: string[][] = [[
    'case', 'ns/record', 'min-max ns/record', 'cpu ns/record', 'payload MB/s', 'records/request', 'records/batch', 'wire ratio',
    'ns/record vs uncompressed-bounded', 'cpu ns/record vs uncompressed-bounded', 'records/request vs uncompressed-bounded', 'checksum',
  ]];
  const byName = new Map(measured.map((m) => [m.name, m]));
  measured.forEach((m, i) => {
    const base = byName.get(m.baseline);
    const cost = base === undefined ? Number.NaN : median(m.nsPerRecord) / median(base.nsPerRecord);
    const cpuCost = base === undefined ? Number.NaN : median(m.cpuNsPerRecord) / median(base.cpuNsPerRecord);
    const density = base === undefined ? Number.NaN : median(m.recordsPerRequest) / median(base.recordsPerRequest);
    rows.push([
      m.name, median(m.nsPerRecord).toFixed(0), `${Math.min(...m.nsPerRecord).toFixed(0)}-${Math.max(...m.nsPerRecord).toFixed(0)}`,
      median(m.cpuNsPerRecord).toFixed(0), median(m.mbps).toFixed(1), median(m.recordsPerRequest).toFixed(0), median(m.recordsPerBatch).toFixed(0),
      `${median(m.wireRatio).toFixed(2)}x`, `${cost.toFixed(2)}x`, `${cpuCost.toFixed(2)}x`, `${density.toFixed(1)}x`, `${checksums[i]}${checksums[i] === expected ? '' : ' (!)'}`,
    ]);
  });
  printTable(rows);
  console.log(`checksum: records acknowledged + end-offset advance over the rounds; expected ${expected} per case`);
}
