// Section 6: end to end through the broker. Two brokers run as child
// processes (so their CPU is theirs alone, read from /proc/<pid>/stat by the
// load client's --broker-pid probe): one storing (buffered writes, acks=-1
// answered once written, Kafka's default without flush.messages), one
// --blackhole (accounts and acknowledges like the real one, keeps nothing).
// The load client (runLoad, in this process) sends 100 B records to 16
// partitions from 1 and 3 idempotent producers, acks=all, linger 1 ms,
// batch.size 16 KiB, ≤ 5 in flight, closed loop. The four cases alternate.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BROKER_NODE_FLAGS } from '@seglog/broker';
import { runLoad } from '@seglog/load';
import type { LoadReport } from '@seglog/load';
import { runCases, type BenchOptions, type Case } from '../lib/harness.js';
import { barChart, fmt, num, ratio, stat, type Report } from './model.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface ChildBroker { readonly port: number; readonly pid: number; stop(): Promise<void> }

/** Starts `pnpm start`'s entry point as a child process on a free port. */
export async function startChildBroker(args: readonly string[]): Promise<ChildBroker> {
  const child: ChildProcess = spawn(process.execPath, [...BROKER_NODE_FLAGS, '--conditions=source', '--import', 'tsx', 'packages/broker/src/main.ts', '--port', '0', ...args], {
    cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`broker did not start in 60 s: ${output}`)), 60_000);
    const onData = (b: Buffer): void => {
      output += b.toString();
      const m = /listening on [^:\s]+:(\d+)/.exec(output);
      if (m !== null) { clearTimeout(timer); resolve(Number(m[1])); }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (b: Buffer) => { output += b.toString(); });
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`broker exited with ${code}: ${output}`)); });
  });
  child.stdout!.resume();
  return {
    port, pid: child.pid!,
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}

interface Round { completionRate: number; p50: number; p99: number; p999: number; cpuUsPerRecord: number }

export async function endToEndSection(report: Report, root: string, options: BenchOptions, full: boolean): Promise<void> {
  const records = options.quick ? 5_000 : full ? 3_000_000 : 1_000_000;
  const s = report.section('e2e', 'End to end through the broker (load client)',
    `${num(records)} records of 100 B per run, 16 partitions, 1 and 3 idempotent producers, acks=all (answered once written), linger 1 ms, ` +
    `batch.size 16 KiB, ≤ 5 in flight, closed loop; brokers are child processes (storing with buffered writes, and --blackhole), ` +
    `broker CPU from /proc/<pid>/stat over the produce phase. Verification skipped here (the load client's tests check it). ` +
    `${options.runs} runs, alternating order.`);
  const storing = await startChildBroker(['--data-dir', path.join(root, 'data'), '--auto-create-partitions', '0']);
  const blackhole = await startChildBroker(['--blackhole', '--data-dir', path.join(root, 'blackhole')]);
  const rounds = new Map<string, Round[]>();
  const reports: Record<string, unknown[]> = {};
  try {
    const cases: Case[] = [];
    for (const [kind, broker] of [['storage', storing], ['blackhole', blackhole]] as const) {
      for (const producers of [1, 3]) {
        const name = `${kind} ${producers}`;
        rounds.set(name, []);
        reports[name] = [];
        cases.push({
          name,
          run: async () => {
            const r: LoadReport = await runLoad({
              port: broker.port, brokerPid: broker.pid, topic: `e2e-${producers}`, partitions: 16, producers, recordBytes: 100, records,
              acks: -1, idempotent: true, createTopic: true, verify: false, lingerMs: 1, batchBytes: 16_384, maxInFlight: 5,
              requestTimeoutMs: 60_000, maxProduceMs: 600_000,
            });
            const p = r.produce;
            if (!r.ok || p.recordsAcknowledged !== records) throw new Error(`${name}: ${p.recordsAcknowledged}/${records} acknowledged, errors ${p.requestErrors.join('; ')}`);
            rounds.get(name)!.push({
              completionRate: p.completionRate, p50: p.publishLatency.p50Ms, p99: p.publishLatency.p99Ms, p999: p.publishLatency.p999Ms,
              cpuUsPerRecord: r.brokerCpu?.usPerRecord ?? Number.NaN,
            });
            reports[name]!.push({ produce: p, brokerCpu: r.brokerCpu });
            let advance = 0;
            r.endOffsets.forEach((end, i) => (advance += end - (r.startOffsets[i] ?? 0)));
            return { units: records, checksum: advance >>> 0 };
          },
        });
      }
    }
    // Warm-up, untimed: topic creation, JIT in both processes.
    for (const c of cases) await c.run();
    for (const list of rounds.values()) list.length = 0;
    for (const list of Object.values(reports)) list.length = 0;
    const results = await runCases(cases, options);
    const rows: string[][] = [];
    const chart: Parameters<typeof barChart>[2][number][] = [];
    for (const r of results) {
      if (r.checksum !== (records * options.runs) >>> 0) throw new Error(`${r.name}: end offsets advanced ${r.checksum}, expected ${records * options.runs}`);
      const [kind, producers] = r.name.split(' ') as [string, string];
      const rs = rounds.get(r.name)!;
      const key = `e2e.${kind}.p${producers}`;
      report.figure(`${key}.recps`, 'records/s', rs.map((x) => x.completionRate));
      report.figure(`${key}.publishP50ms`, 'ms', rs.map((x) => x.p50));
      report.figure(`${key}.publishP99ms`, 'ms', rs.map((x) => x.p99));
      report.figure(`${key}.publishP999ms`, 'ms', rs.map((x) => x.p999));
      report.figure(`${key}.brokerCpuUsPerRecord`, 'µs/record', rs.map((x) => x.cpuUsPerRecord));
    }
    for (const r of results) {
      const [kind, producers] = r.name.split(' ') as [string, string];
      const key = `e2e.${kind}.p${producers}`;
      const bh = `e2e.blackhole.p${producers}`;
      const f = (k: string): number[] => report.figures.get(`${key}.${k}`)!.samples;
      rows.push([kind, producers, fmt(f('recps')), ratio(report.med(`${key}.recps`), report.med(`${bh}.recps`)), fmt(f('publishP50ms'), 1, 2), fmt(f('publishP99ms'), 1, 2),
        fmt(f('publishP999ms'), 1, 2), fmt(f('brokerCpuUsPerRecord'), 1, 2), ratio(report.med(`${key}.brokerCpuUsPerRecord`), report.med(`${bh}.brokerCpuUsPerRecord`))]);
      chart.push({ label: `${kind}, ${producers} producer(s)`, stat: stat(f('recps')), group: kind });
    }
    s.tables.push({
      caption: 'median (min–max) over runs; publish latency = batch opened → acknowledged (OMB publishLatency), per record',
      header: ['broker', 'producers', 'completion rate records/s', 'vs blackhole', 'publish p50 ms', 'p99 ms', 'p99.9 ms', 'broker CPU µs/record', 'vs blackhole'],
      rows,
    });
    report.raw['e2e'] = { records, rounds: Object.fromEntries(rounds), reports };
    report.chart(s, 'report-e2e.svg', barChart('End to end, 100 B records, acks=all, idempotent', 'records/s', chart));
  } finally {
    await storing.stop();
    await blackhole.stop();
  }
}
