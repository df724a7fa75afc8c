// Section 4: reads. read(offset, 1 MiB) + toBuffer() + release() from the log
// start to its end, three sources in alternating order:
// - cache: a caught-up consumer's bytes, in the tail cache (written by the
//   log with a consumer tailing it: log-placement's appendWithConsumer, whose
//   placement counters are reported too);
// - page cache: a buffered log, reopened (tail cache empty), its files read once before timing;
// - disk: a catch-up read of a log written with O_DIRECT (so its bytes are
//   not in the page cache), written and reopened before each round, untimed.
// Placement (log.placement.read) counted over the timed rounds of each source.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { AlignedArena, NodeIo } from '@seglog/io';
import { Log } from '@seglog/log';
import type { WriteMode } from '@seglog/log';
import { runCases, type BenchOptions, type Case } from '../lib/harness.js';
import { appendWithConsumer, logConfig, sizeSetup, type PlacementTotals, type SizeSetup } from '../lib/log-placement.js';
import { appendRoundRobin } from './appends.js';
import { barChart, fmt, num, pct, ratio, stat, type Report } from './model.js';

const KiB = 1024;
const MiB = 1024 * KiB;

async function open(io: NodeIo, dir: string, mode: WriteMode, cacheBytes: number, arena: AlignedArena): Promise<Log> {
  return Log.open(io, dir, logConfig(mode, 1024 * MiB), {
    topic: 'bench', partition: 0, recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: true, arena, tailCache: { maxBytes: cacheBytes },
  });
}

async function readAll(log: Log): Promise<{ bytes: number; checksum: number }> {
  let offset = log.logStartOffset;
  let bytes = 0;
  let sum = 0;
  while (offset < log.logEndOffset) {
    const plan = await log.read(offset, MiB);
    const buffer = await plan.toBuffer();
    await plan.release();
    if (buffer.length === 0) throw new Error(`empty read at ${offset} below the log end ${log.logEndOffset}`);
    sum = (sum + buffer[buffer.length >> 1]! + buffer.length) >>> 0;
    bytes += buffer.length;
    offset = plan.nextOffset;
  }
  return { bytes, checksum: sum };
}

async function writeLog(io: NodeIo, dir: string, mode: WriteMode, s: SizeSetup, arena: AlignedArena): Promise<void> {
  const log = await open(io, dir, mode, 4 * MiB, arena);
  await appendRoundRobin([log], s);
  await log.close();
}

export async function readSection(report: Report, root: string, options: BenchOptions, full: boolean): Promise<void> {
  const total = options.quick ? 4 * MiB : full ? 512 * MiB : 128 * MiB;
  const s = report.section('reads', 'Reads: caught-up (tail cache) vs catch-up (page cache, disk)',
    `${num(total / MiB)} MiB of 16 KiB batches of 1 KiB records per run, read(offset, 1 MiB) + toBuffer() from the start to the end. ` +
    `cache: the bytes a caught-up consumer reads (tail cache); page cache: a buffered log reopened, files already cached; disk: a log ` +
    `written with O_DIRECT and reopened before each round (not in the page cache). Placement: log.placement.read over the timed rounds. ` +
    `${options.runs} runs, alternating order.`);
  const io = new NodeIo();
  const arena = new AlignedArena({ chunkBytes: 2 * MiB, chunkCount: 8 });
  const setup = sizeSetup(16 * KiB, total, 1024);
  const cacheBytes = setup.totalBytes + 8 * MiB;
  // cache: written once with a caught-up consumer tailing it.
  const tailing = await open(io, path.join(root, 'cache'), 'direct', cacheBytes, arena);
  const tailTotals: PlacementTotals = { appendCaller: 0, appendPool: 0, readCaller: 0, readPool: 0 };
  await appendWithConsumer(tailing, setup, tailTotals);
  // page cache: written buffered, reopened.
  await writeLog(io, path.join(root, 'page'), 'buffered', setup, arena);
  const paged = await open(io, path.join(root, 'page'), 'buffered', cacheBytes, arena);
  await readAll(paged);
  let diskLog: Log | null = null;
  let n = 0;
  const placement = new Map<string, { caller: number; pool: number }>();
  const counted = (name: string, log: () => Log): Case['run'] => async () => {
    const l = log();
    const r0 = { ...l.placement.read };
    const r = await readAll(l);
    const p = placement.get(name) ?? { caller: 0, pool: 0 };
    p.caller += l.placement.read.caller - r0.caller;
    p.pool += l.placement.read.pool - r0.pool;
    placement.set(name, p);
    return { units: r.bytes, checksum: r.checksum };
  };
  const cases: Case[] = [
    { name: 'cache', run: counted('cache', () => tailing) },
    { name: 'page cache', run: counted('page cache', () => paged) },
    {
      name: 'disk',
      before: async () => {
        const dir = path.join(root, `disk-${n++}`);
        await writeLog(io, dir, 'direct', setup, arena);
        diskLog = await open(io, dir, 'buffered', cacheBytes, arena);
      },
      run: counted('disk', () => diskLog!),
      after: async () => { const l = diskLog!; await l.close(); rmSync(l.dir, { recursive: true, force: true }); },
    },
  ];
  try {
    await readAll(tailing); // warm
    const results = await runCases(cases, options);
    const [cache, page, disk] = results as [typeof results[0], typeof results[0], typeof results[0]];
    if (cache.checksum !== page.checksum || (page.checksum !== disk.checksum)) throw new Error(`read checksums differ: ${cache.checksum} ${page.checksum} ${disk.checksum}`);
    const directRead = report.med('disk.directRead.MBps');
    const rows: string[][] = [];
    const chart: Parameters<typeof barChart>[2][number][] = [];
    for (const r of results) {
      const key = `read.${r.name.replace(' ', '')}`;
      const f = report.figure(`${key}.MBps`, 'MB/s', r.rates.map((x) => x / 1e6));
      const p = placement.get(r.name)!;
      report.figure(`${key}.callerShare`, 'share', [p.caller / Math.max(1, p.caller + p.pool)]);
      rows.push([r.name, fmt(f.samples), ratio(r.median, page.median), r.name === 'disk' ? ratio(r.median / 1e6, directRead) : '-', pct(p.caller, p.caller + p.pool), `${p.caller}/${p.caller + p.pool}`]);
      chart.push({ label: r.name, stat: stat(f.samples), group: r.name });
    }
    const caughtUp = tailTotals.readCaller / Math.max(1, tailTotals.readCaller + tailTotals.readPool);
    report.figure('read.caughtUpTail.callerShare', 'share', [caughtUp]);
    rows.push(['caught-up consumer tailing the appends (once, untimed)', '-', '-', '-', pct(tailTotals.readCaller, tailTotals.readCaller + tailTotals.readPool), `${tailTotals.readCaller}/${tailTotals.readCaller + tailTotals.readPool}`]);
    s.tables.push({
      caption: 'MB/s median (min–max) over runs; placement = reads served on the caller (event loop, no pool hop) / all reads',
      header: ['source', 'MB/s', 'vs page cache', 'vs disk O_DIRECT read', 'reads on caller', 'caller/all'],
      rows,
    });
    report.raw['reads'] = { totalBytes: setup.totalBytes, placement: Object.fromEntries(placement), tailing: tailTotals, reasons: { tailing: tailing.placement.reasons, paged: paged.placement.reasons } };
    report.chart(s, 'report-reads.svg', barChart('Reads, read(1 MiB) + toBuffer', 'MB/s', chart));
  } finally {
    await tailing.close();
    await paged.close();
  }
}
