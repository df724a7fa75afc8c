// Consume rate of the load client's consumer-group mode (packages/load,
// `--group`) against its direct consumer (one connection fetching every
// partition), both reading back what the same run just produced from an
// in-process broker with a real data directory (os.tmpdir()), so client and
// broker share this process and its one thread.
//
// Cases: direct (the baseline), group ×1, ×2, ×4 members (range assignor):
// each round produces RECORDS records (1 idempotent producer, acks -1,
// 100-byte values, 8 partitions, a fresh topic) and consumes them back with
// the integrity checker. Timed: the consume phase only, from the report —
// direct: consume.durationMs (first fetch → last); group: group.durationMs
// (the generation holding every member → the last partition at its end
// offset; the join and the formation are not in it, report.group.formationMs).
// Reported per case, medians over the rounds (cases alternate order):
// records/s and MB/s of record batches fetched, and the records/s ratio
// against direct in the same run. Group members heartbeat every 100 ms and
// commit every second; the broker's initial rebalance delay is 0.
// Checksum: records consumed and verified (each round must verify RECORDS,
// with no duplicate).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Broker } from '@seglog/broker';
import { runLoad } from '@seglog/load';
import type { LoadOptions, LoadReport } from '@seglog/load';
import { median, printTable, runCases, type BenchOptions, type Case } from './lib/harness.js';

const PARTITIONS = 8;
const MEMBERS = [1, 2, 4] as const;

interface Measured {
  readonly name: string;
  readonly recordsPerSecond: number[];
  readonly MBps: number[];
}

export async function run(options: BenchOptions): Promise<void> {
  const records = options.quick ? 4_000 : 100_000;
  const common: Partial<LoadOptions> = {
    partitions: PARTITIONS, producers: 1, recordBytes: 100, records, acks: -1, idempotent: true, createTopic: true,
    requestTimeoutMs: 60_000, maxProduceMs: 600_000, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 30_000, heartbeatIntervalMs: 100, autoCommitIntervalMs: 1000,
  };
  console.log(`params: ${records} records × 100 B per round, ${PARTITIONS} partitions, 1 idempotent producer, acks -1; consumers: direct | group of ` +
    `${MEMBERS.join(' | ')} member(s) (range, heartbeat 100 ms, commit 1 s); in-process broker, data in ${os.tmpdir()}; timed: the consume phase only`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-bench-group-'));
  const broker = await Broker.start({ dataDir: dir, port: 0, log: () => undefined, groupInitialRebalanceDelayMs: 0 });
  let topics = 0;
  try {
    const measured: Measured[] = [];
    const cases: Case[] = [];
    for (const members of [0, ...MEMBERS]) {
      const m: Measured = { name: members === 0 ? 'direct' : `group ×${members}`, recordsPerSecond: [], MBps: [] };
      measured.push(m);
      cases.push({
        name: m.name,
        run: async () => {
          const topic = `bench-group-${++topics}`;
          const group = members === 0 ? {} : { group: topic, consumers: members };
          return record(m, await runLoad({ ...common, ...group, port: broker.port, broker, topic }), records);
        },
      });
    }
    const results = await runCases(cases, options);
    printResults(measured, results.map((r) => r.checksum), records * options.runs);
  } finally {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function record(m: Measured, report: LoadReport, records: number): { units: number; checksum: number } {
  const c = report.consume;
  if (!report.ok || c.kind !== 'verified' || c.recordsConsumed !== records || c.duplicateRecords !== 0) {
    throw new Error(`${m.name}: not verified (${c.kind === 'verified' ? `${c.recordsConsumed}/${records}, ${c.duplicateRecords} duplicates, ${c.violations.join('; ')}` : c.kind})`);
  }
  const g = report.group;
  const ms = g === null ? c.durationMs : g.durationMs;
  const fetched = g === null ? c.recordsConsumed : g.recordsFetched;
  const bytes = g === null ? c.bytesConsumed : g.bytesFetched;
  m.recordsPerSecond.push(fetched / (ms / 1000));
  m.MBps.push(bytes / 1e6 / (ms / 1000));
  return { units: records, checksum: c.recordsConsumed };
}

function printResults(measured: readonly Measured[], checksums: readonly number[], expected: number): void {
  const base = measured[0] as Measured;
  const rows: string[][] = [['case', 'records/s', 'min-max records/s', 'MB/s batches', 'records/s vs direct', 'checksum']];
  measured.forEach((m, i) => {
    rows.push([
      m.name, median(m.recordsPerSecond).toFixed(0),
      `${Math.min(...m.recordsPerSecond).toFixed(0)}-${Math.max(...m.recordsPerSecond).toFixed(0)}`,
      median(m.MBps).toFixed(1), (median(m.recordsPerSecond) / median(base.recordsPerSecond)).toFixed(2),
      `${checksums[i]}${checksums[i] === expected ? '' : ` (expected ${expected})`}`,
    ]);
  });
  printTable(rows);
}
