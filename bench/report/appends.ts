// Section 2: append throughput. For each record size (100 B, 1 KiB values)
// and batch size (16 KiB, 256 KiB, 1 MiB), one group of cases in alternating
// order, every figure "in the file and fdatasynced":
// - disk: O_DIRECT pwrite of the batch size (rounded up to 4 KiB), QD1, + fdatasync (log-placement's writeDirectRaw);
// - plain: fs.writeSync per batch + fdatasync, one file (log-placement's writePlain);
// - engine direct / buffered, 1 partition and 16 partitions (batches round-robin over the logs), then flush().
// Logs are opened before and closed + removed after each round, untimed.
// CPU: process.cpuUsage over the timed section (event loop + pool threads), per GB written.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { AlignedArena, NodeIo } from '@seglog/io';
import { Log } from '@seglog/log';
import type { WriteMode } from '@seglog/log';
import { runCases, type BenchOptions, type Case, type CaseResult } from '../lib/harness.js';
import { logConfig, sizeSetup, writeDirectRaw, writePlain, type SizeSetup } from '../lib/log-placement.js';
import { barChart, fmt, num, ratio, size, stat, type Report } from './model.js';

const KiB = 1024;
const MiB = 1024 * KiB;

export const RECORD_SIZES = [100, 1024] as const;
export const BATCH_SIZES = [16 * KiB, 256 * KiB, MiB] as const;
export const PARTITIONS = [1, 16] as const;

export function appendKey(mode: WriteMode | 'disk' | 'plain', recordBytes: number, batchBytes: number, partitions: number): string {
  return `append.${mode}.${size(recordBytes).replace(' ', '')}.${size(batchBytes).replace(' ', '')}.p${partitions}`;
}

export async function openLogs(io: NodeIo, dir: string, mode: WriteMode, partitions: number, arena: AlignedArena): Promise<Log[]> {
  const logs: Log[] = [];
  for (let p = 0; p < partitions; p++) {
    const log = await Log.open(io, path.join(dir, `bench-${p}`), logConfig(mode, 64 * MiB), {
      topic: 'bench', partition: p, recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: true, arena,
    });
    if (log.writeMode !== mode) throw new Error(`wanted ${mode}, the log writes ${log.writeMode} (O_DIRECT refused under ${dir}?)`);
    logs.push(log);
  }
  return logs;
}

/** Appends s.count batches round-robin over the logs (a slot's buffer is reused after written()), then flush()es every log. */
export async function appendRoundRobin(logs: readonly Log[], s: SizeSetup): Promise<number> {
  const slots = s.batches.length;
  const slotWritten: Array<Promise<void> | undefined> = new Array(slots);
  for (const view of s.views) view.setBaseOffset(0);
  for (let i = 0; i < s.count; i++) {
    const slot = i % slots;
    const previous = slotWritten[slot];
    if (previous !== undefined) {
      await previous;
      s.views[slot]!.setBaseOffset(0);
    }
    const log = logs[i % logs.length]!;
    slotWritten[slot] = log.appendAsLeader(s.batches[slot]!, { leaderEpoch: 0 }).then((r) => log.written(r.lastOffset));
  }
  await Promise.all(slotWritten);
  await Promise.all(logs.map((l) => l.flush()));
  let bytes = 0;
  for (const l of logs) bytes += l.size;
  return bytes;
}

export function appendParams(options: BenchOptions, full: boolean): { totalBytes: number } {
  return { totalBytes: options.quick ? 2 * MiB : full ? 256 * MiB : 64 * MiB };
}

export async function appendSection(report: Report, root: string, options: BenchOptions, full: boolean): Promise<void> {
  const { totalBytes } = appendParams(options, full);
  const s = report.section('appends', 'Appends',
    `${num(totalBytes / MiB)} MiB per run and case, fresh logs (segment.bytes 64 MiB, default reservation), batches built and pre-touched before ` +
    `timing and reused after written(); 16 partitions = 16 logs, batches round-robin; timed: first append to the last flush() (fdatasync) ` +
    `returning. Disk = O_DIRECT pwrite of the batch size at QD1 + fdatasync; plain = fs.writeSync per batch + fdatasync. CPU = process.cpuUsage ` +
    `(event loop and pool threads) per GB. ${options.runs} runs, alternating order.`);
  const io = new NodeIo();
  const arena = new AlignedArena({ chunkBytes: 2 * MiB, chunkCount: 48 });
  const rows: string[][] = [];
  const raw: Record<string, unknown> = {};
  const chartItems: Parameters<typeof barChart>[2][number][] = [];
  let n = 0;
  for (const recordBytes of RECORD_SIZES) {
    for (const batchBytes of BATCH_SIZES) {
      const setup = sizeSetup(batchBytes, totalBytes, recordBytes);
      const records = setup.views.reduce((sum, v, i) => sum + (v.lastOffsetDelta + 1) * Math.ceil((setup.count - i) / setup.batches.length), 0);
      const cpu = new Map<string, number[]>();
      const timed = (name: string, body: () => Promise<number> | number): Case['run'] => async () => {
        const c0 = process.cpuUsage();
        const bytes = await body();
        const c = process.cpuUsage(c0);
        let list = cpu.get(name);
        if (list === undefined) cpu.set(name, (list = []));
        list.push((c.user + c.system) / 1e6 / (bytes / 1e9));
        return { units: bytes, checksum: bytes >>> 0 };
      };
      const engine = (mode: WriteMode, partitions: number): Case => {
        let logs: Log[] = [];
        let dir = '';
        const name = `${mode} p${partitions}`;
        return {
          name,
          before: async () => { dir = path.join(root, `a${n++}`); logs = await openLogs(io, dir, mode, partitions, arena); },
          run: timed(name, () => appendRoundRobin(logs, setup)),
          after: async () => { for (const l of logs) await l.close(); rmSync(dir, { recursive: true, force: true }); },
        };
      };
      const file = (): string => path.join(root, `f${n++}`);
      let current = '';
      const cases: Case[] = [
        { name: 'disk', before: () => { current = file(); }, run: timed('disk', () => writeDirectRaw(io, current, setup, arena)), after: () => rmSync(current, { force: true }) },
        { name: 'plain', before: () => { current = file(); }, run: timed('plain', () => writePlain(current, setup)), after: () => rmSync(current, { force: true }) },
        ...PARTITIONS.flatMap((p) => [engine('direct', p), engine('buffered', p)]),
      ];
      if (n === 0) {
        // Warm-up, untimed: the arena's pages, the JIT.
        const warm = cases[2]!;
        await warm.before?.();
        await warm.run();
        await warm.after?.();
        cpu.clear();
      }
      const results = await runCases(cases, options);
      const byName = new Map(results.map((r) => [r.name, r]));
      const disk = byName.get('disk')!;
      const plain = byName.get('plain')!;
      const sizes = `${size(recordBytes)} records, ${size(batchBytes)} batches`;
      const put = (r: CaseResult, mode: WriteMode | 'disk' | 'plain', partitions: number): void => {
        const key = appendKey(mode, recordBytes, batchBytes, partitions);
        const mbps = report.figure(`${key}.MBps`, 'MB/s', r.rates.map((x) => x / 1e6));
        const recps = report.figure(`${key}.recps`, 'records/s', r.rates.map((x) => (x * records) / setup.totalBytes));
        const cpuF = report.figure(`${key}.cpuSecPerGB`, 'CPU-s/GB', cpu.get(r.name) ?? []);
        rows.push([
          sizes, mode === 'disk' ? 'disk O_DIRECT' : mode === 'plain' ? 'plain fs' : `engine ${mode}`, String(partitions),
          mode === 'disk' ? '-' : fmt(recps.samples), fmt(mbps.samples), fmt(cpuF.samples, 1, 2),
          ratio(r.median, disk.median), ratio(r.median, plain.median),
        ]);
        if (recordBytes === 1024 || mode === 'direct' || mode === 'buffered') chartItems.push({ label: `${size(recordBytes)}/${size(batchBytes)} ${mode}${mode === 'disk' || mode === 'plain' ? '' : ` p${partitions}`}`, stat: stat(mbps.samples), group: mode });
      };
      put(disk, 'disk', 1);
      put(plain, 'plain', 1);
      for (const p of PARTITIONS) for (const mode of ['direct', 'buffered'] as const) put(byName.get(`${mode} p${p}`)!, mode, p);
      for (const r of results) if (r.name !== 'disk' && r.checksum !== plain.checksum) throw new Error(`${sizes} ${r.name}: ${r.checksum} bytes in the log(s), plain wrote ${plain.checksum}`);
      raw[sizes] = { records, bytes: setup.totalBytes, batches: setup.count, samplesNs: Object.fromEntries(results.map((r) => [r.name, r.samples.map((x) => x.ns)])) };
    }
  }
  s.tables.push({
    caption: 'records/s, MB/s and CPU-s/GB: median (min–max) over runs; ratios of medians',
    header: ['records, batches', 'case', 'partitions', 'records/s', 'MB/s', 'CPU-s/GB', 'vs disk O_DIRECT (same write size)', 'vs plain fs'],
    rows,
  });
  report.raw['appends'] = { totalBytes, cases: raw };
  report.chart(s, 'report-appends.svg', barChart('Appends, MB/s in the file and fdatasynced', 'MB/s', chartItems.filter((i) => !i.label.startsWith('100 B') || !i.label.endsWith('disk'))));
}
