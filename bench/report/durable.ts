// Section 3: durable appends. One log; P producers (1, 4, 16), each in a
// closed loop: appendAsLeader(its 16 KiB batch of 100 B records), then
// durable(lastOffset), then the next batch — a sync per batch. Concurrent
// producers share fdatasyncs (group commit): fsyncs per second and batches
// per fsync come from log.metrics.flushes. Latency = append call → durable()
// resolved, per batch; p50/p99/p99.9 per run, medians over runs.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { AlignedArena, NodeIo } from '@seglog/io';
import type { Log, WriteMode } from '@seglog/log';
import { RecordBatch } from '@seglog/records';
import { runCases, type BenchOptions, type Case } from '../lib/harness.js';
import { makeBatch } from '../lib/log-placement.js';
import { openLogs } from './appends.js';
import { barChart, fmt, num, ratio, stat, type Report } from './model.js';

const KiB = 1024;
const MiB = 1024 * KiB;
export const PRODUCERS = [1, 4, 16] as const;
const BATCH_BYTES = 16 * KiB;

interface Round { p50: number; p99: number; p999: number; fsyncsPerSec: number; batchesPerFsync: number; recordsPerSec: number }

function percentile(sorted: Float64Array, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function produceDurably(log: Log, batches: readonly Buffer[], totalBatches: number): Promise<{ latUs: Float64Array; records: number }> {
  const latUs = new Float64Array(totalBatches);
  let next = 0;
  let records = 0;
  const producer = async (b: Buffer): Promise<void> => {
    const view = new RecordBatch(b);
    while (next < totalBatches) {
      const i = next++;
      view.setBaseOffset(0);
      const t0 = process.hrtime.bigint();
      const r = await log.appendAsLeader(b, { leaderEpoch: 0 });
      await log.durable(r.lastOffset);
      latUs[i] = Number(process.hrtime.bigint() - t0) / 1000;
      records += view.lastOffsetDelta + 1;
    }
  };
  await Promise.all(batches.map(producer));
  return { latUs, records };
}

export async function durableSection(report: Report, root: string, options: BenchOptions, full: boolean): Promise<void> {
  const totalBatches = options.quick ? 60 : full ? 20_000 : 5_000;
  const s = report.section('durable', 'Durable appends (a sync per batch)',
    `One log; 1, 4 and 16 concurrent producers, each appending a ${BATCH_BYTES / KiB} KiB batch of 100 B records and awaiting durable(lastOffset) ` +
    `before its next; ${num(totalBatches)} batches per run. Latency = append → durable, per batch. fsyncs = log.metrics.flushes. ` +
    `${options.runs} runs, alternating order.`);
  const io = new NodeIo();
  const arena = new AlignedArena({ chunkBytes: 2 * MiB, chunkCount: 8 });
  const batches = Array.from({ length: 16 }, (_, i) => makeBatch(BATCH_BYTES, i + 1, 100));
  const rounds = new Map<string, Round[]>();
  let n = 0;
  const cases: Case[] = [];
  for (const mode of ['buffered', 'direct'] as const) {
    for (const producers of PRODUCERS) {
      const name = `${mode} ${producers}`;
      rounds.set(name, []);
      let logs: Log[] = [];
      let dir = '';
      cases.push({
        name,
        before: async () => { dir = path.join(root, `d${n++}`); logs = await openLogs(io, dir, mode as WriteMode, 1, arena); },
        run: async () => {
          const log = logs[0]!;
          const f0 = log.metrics.flushes;
          const t0 = process.hrtime.bigint();
          const { latUs, records } = await produceDurably(log, batches.slice(0, producers), totalBatches);
          const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
          const fsyncs = log.metrics.flushes - f0;
          latUs.sort();
          rounds.get(name)!.push({
            p50: percentile(latUs, 0.5), p99: percentile(latUs, 0.99), p999: percentile(latUs, 0.999),
            fsyncsPerSec: fsyncs / seconds, batchesPerFsync: totalBatches / Math.max(1, fsyncs), recordsPerSec: records / seconds,
          });
          return { units: records, checksum: log.logEndOffset >>> 0 };
        },
        after: async () => { for (const l of logs) await l.close(); rmSync(dir, { recursive: true, force: true }); },
      });
    }
  }
  // Warm-up, untimed.
  await cases[0]!.before?.();
  await cases[0]!.run();
  await cases[0]!.after?.();
  rounds.get(cases[0]!.name)!.length = 0;
  const results = await runCases(cases, options);
  const expected = results[0]!.checksum;
  const rows: string[][] = [];
  const chart: Parameters<typeof barChart>[2][number][] = [];
  const fsyncP50 = report.med('disk.fsyncAppend.p50us');
  for (const r of results) {
    if (r.checksum !== expected) throw new Error(`durable ${r.name}: log end offsets ${r.checksum}, expected ${expected}`);
    const [mode, producers] = r.name.split(' ') as [string, string];
    const rs = rounds.get(r.name)!;
    const key = `durable.${mode}.p${producers}`;
    const recps = report.figure(`${key}.recps`, 'records/s', rs.map((x) => x.recordsPerSec));
    const p50 = report.figure(`${key}.p50us`, 'µs', rs.map((x) => x.p50));
    const p99 = report.figure(`${key}.p99us`, 'µs', rs.map((x) => x.p99));
    const p999 = report.figure(`${key}.p999us`, 'µs', rs.map((x) => x.p999));
    const fps = report.figure(`${key}.fsyncsPerSec`, '1/s', rs.map((x) => x.fsyncsPerSec));
    const bpf = report.figure(`${key}.batchesPerFsync`, 'batches', rs.map((x) => x.batchesPerFsync));
    const one = report.med(`durable.${mode}.p1.recps`);
    rows.push([mode, producers, fmt(recps.samples), ratio(stat(recps.samples).median, one), fmt(p50.samples), fmt(p99.samples), fmt(p999.samples),
      fmt(fps.samples), fmt(bpf.samples, 1, 2), ratio(stat(p50.samples).median, fsyncP50)]);
    chart.push({ label: `${mode}, ${producers} producer(s)`, stat: stat(recps.samples), group: mode });
  }
  s.tables.push({
    caption: 'median (min–max) over runs; latency in µs per batch',
    header: ['mode', 'producers', 'records/s', 'vs 1 producer', 'p50 µs', 'p99 µs', 'p99.9 µs', 'fsyncs/s', 'batches per fsync', 'p50 vs disk fdatasync p50 (append)'],
    rows,
  });
  report.raw['durable'] = { totalBatches, batchBytes: BATCH_BYTES, rounds: Object.fromEntries(rounds) };
  report.chart(s, 'report-durable.svg', barChart('Durable appends (sync per batch), records/s', 'records/s', chart));
}
