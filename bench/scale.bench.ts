// What a data directory costs by what it stores (issue 24): P partitions ×
// S sealed segments are created (small segments: one batch each; one
// partition through LogManager, copied to the others, see childCreate),
// the manager is closed cleanly, then a fresh process reopens
// the directory and reports open time, RSS, external memory (index mirrors
// live outside the heap) and open descriptors (/proc/self/fd); then reads the
// oldest batch of every partition and reports the same again. Each point of
// the curve (1k, 10k, optionally 100k sealed segments, 1,000 active) runs in its own child
// processes so RSS and descriptors are that point's only, the reopen under
// `ulimit -n` SEGLOG_BENCH_ULIMIT (default 4096). A point that cannot be
// created or reopened reports the error instead of numbers. Each point is
// created once and reopened --runs times (fresh processes); medians printed.
// No baseline column: the engine before the handle cache cannot reopen the
// larger points under the limit at all (see the figures).
// `--quick`: 1k and 10k sealed segments; otherwise also 100k (SEGLOG_BENCH_SCALE_MAX
// caps the largest point). The directory is under os.tmpdir() (SEGLOG_BENCH_DIR
// overrides) and removed after each point.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, printTable, type BenchOptions } from './lib/harness.js';

const here = fileURLToPath(import.meta.url);
const RECORD_BYTES = 512;

interface Point {
  readonly partitions: number;
  readonly segmentsPerPartition: number;
}

interface Measure {
  readonly ms: number;
  readonly rssMB: number;
  readonly heapMB: number;
  readonly externalMB: number;
  readonly fds: number;
}

function openFds(): number {
  return readdirSync('/proc/self/fd').length;
}

function measure(startNs: bigint): Measure {
  const usage = process.memoryUsage();
  return { ms: Number(process.hrtime.bigint() - startNs) / 1e6, rssMB: usage.rss / 1e6, heapMB: usage.heapUsed / 1e6, externalMB: (usage.external + usage.arrayBuffers) / 1e6, fds: openFds() };
}

async function loadEngine(): Promise<{ io: import('@seglog/io').Io; LogManager: typeof import('@seglog/log').LogManager; config: import('@seglog/log').LogConfig; buildBatch: typeof import('@seglog/records').buildBatch }> {
  const { NodeIo } = await import('@seglog/io');
  const { LogManager, LogConfig } = await import('@seglog/log');
  const { buildBatch } = await import('@seglog/records');
  // One ~600-byte batch fills a 1 KiB segment: every append after the first rolls.
  const config = new LogConfig().with({ segmentBytes: 1024, indexIntervalBytes: 64 });
  return { io: new NodeIo(), LogManager, config, buildBatch };
}

function managerOptions(config: import('@seglog/log').LogConfig, extra: Record<string, unknown>): import('@seglog/log').LogManagerOptions {
  return { defaultConfig: config, minFreeBytes: 0, checkpointIntervalMs: 0, diskCheckIntervalMs: 0, ...extra } as import('@seglog/log').LogManagerOptions;
}

/**
 * Child, phase "create": partition 0 gets S + 1 appends of one batch through
 * LogManager (S sealed + 1 active segment), the manager is closed cleanly,
 * then partition 0's files are copied (not linked: each partition has its own
 * inodes and page cache) to partitions 1..P-1 and the data directory's
 * checkpoints list every partition as partition 0 is listed; one more clean
 * open and close writes the clean-shutdown files. Appending every
 * partition through the engine costs a roll (and its syncs) per segment:
 * 100,000 of them did not finish in 20 minutes on this VM.
 */
async function childCreate(dir: string, point: Point): Promise<void> {
  const { io, LogManager, config, buildBatch } = await loadEngine();
  const manager = await LogManager.open(io, dir, managerOptions(config, {}));
  const value = Buffer.alloc(RECORD_BYTES, 0x61);
  const log = await manager.getOrCreateLog('scale', 0);
  for (let s = 0; s <= point.segmentsPerPartition; s++) {
    await log.appendAsLeader(buildBatch({ records: [{ key: null, value }], baseTimestamp: 1_700_000_000_000 + s }), { leaderEpoch: 0 });
  }
  await manager.close();
  const template = path.join(dir, 'scale-0');
  const files = readdirSync(template);
  for (let p = 1; p < point.partitions; p++) {
    const target = path.join(dir, `scale-${p}`);
    mkdirSync(target);
    for (const f of files) copyFileSync(path.join(template, f), path.join(target, f));
  }
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('-checkpoint')) continue;
    // OffsetCheckpoint text: version, count, then "topic partition offset" lines.
    const [version, , ...entries] = readFileSync(path.join(dir, name), 'utf8').split('\n').filter((l) => l !== '');
    const first = entries.find((l) => l.startsWith('scale 0 '));
    if (first === undefined) continue;
    const offset = first.split(' ')[2] as string;
    const lines = Array.from({ length: point.partitions }, (_, p) => `scale ${p} ${offset}`);
    const tmp = path.join(dir, `${name}.tmp`);
    writeFileSync(tmp, `${version}\n${point.partitions}\n${lines.join('\n')}\n`);
    renameSync(tmp, path.join(dir, name));
  }
  // One clean open and close of the whole directory: its clean-shutdown files (the marker, the sealed
  // segments' sizes) are then the engine's own, for every partition.
  await (await LogManager.open(io, dir, managerOptions(config, { loadConcurrency: 8 }))).close();
}

/** Child, phase "reopen": clean reopen, measure; read the oldest batch of every partition, measure again. */
async function childReopen(dir: string, point: Point, extra: Record<string, unknown>): Promise<void> {
  const { io, LogManager, config } = await loadEngine();
  const before = openFds();
  const start = process.hrtime.bigint();
  const manager = await LogManager.open(io, dir, managerOptions(config, extra));
  const opened = measure(start);
  const readStart = process.hrtime.bigint();
  let bytes = 0;
  for (let p = 0; p < point.partitions; p++) {
    const log = manager.getLog('scale', p);
    if (log === undefined) throw new Error(`partition ${p} missing after reopen`);
    const plan = await log.read(log.logStartOffset, 4096);
    const buffer = await plan.toBuffer();
    await plan.release();
    if (buffer.length === 0) throw new Error(`partition ${p}: no batch at the log start`);
    bytes += buffer.length;
  }
  const read = measure(readStart);
  await manager.close();
  console.log(JSON.stringify({ baseFds: before, opened, read, bytes }));
}

function runChild(args: string[], ulimit: number | null): { ok: boolean; stdout: string; stderr: string } {
  const node = `${JSON.stringify(process.execPath)} --conditions=source --import tsx ${JSON.stringify(here)} ${args.map((a) => JSON.stringify(a)).join(' ')}`;
  const command = ulimit === null ? node : `ulimit -n ${ulimit} && ${node}`;
  const result = spawnSync('sh', ['-c', command], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  return { ok: result.status === 0, stdout: result.stdout, stderr: result.stderr };
}

function errorLine(stderr: string): string {
  const code = /SEGLOG_ERR_[A-Z_]+/.exec(stderr)?.[0];
  const message = stderr.split('\n').find((l) => /^\S*Error\b.*:/.test(l.trim())) ?? stderr.trim().split('\n').pop() ?? '';
  return `${code ?? ''} ${message.trim().slice(0, 100)}`.trim();
}

export async function run(options: BenchOptions): Promise<void> {
  const ulimit = Number(process.env.SEGLOG_BENCH_ULIMIT ?? 4096);
  const max = Number(process.env.SEGLOG_BENCH_SCALE_MAX ?? (options.quick ? 10_000 : 100_000));
  // The same 1,000 active segments at every point, 1, 10 and 100 sealed ones behind each: what grows is
  // what is stored. (10,000 partitions cannot be open under ulimit -n 4096 at all: an active segment holds
  // three descriptors, .log, .index and .timeindex, so 1,000 partitions already take 3,000 of them.)
  const points: Point[] = [
    { partitions: 1000, segmentsPerPartition: 1 },
    { partitions: 1000, segmentsPerPartition: 10 },
    { partitions: 1000, segmentsPerPartition: 100 },
  ].filter((p) => p.partitions * p.segmentsPerPartition <= max);
  const extra = process.env.SEGLOG_BENCH_SCALE_OPTIONS ?? '{}';
  console.log(`# ${RECORD_BYTES}-byte records, one batch per 1 KiB segment; medians of ${options.runs} clean reopens under ulimit -n ${ulimit}; manager options ${extra}; shared, busy machine`);
  const rows: string[][] = [['sealed', 'partitions', 'open ms', 'RSS MB', 'heap MB', 'ext MB', 'fds', 'read-all ms', 'RSS MB', 'heap MB', 'ext MB', 'fds']];
  for (const point of points) {
    const root = process.env.SEGLOG_BENCH_DIR ?? os.tmpdir();
    const dir = mkdtempSync(path.join(root, 'seglog-scale-'));
    try {
      const pointArgs = [dir, String(point.partitions), String(point.segmentsPerPartition)];
      const sealed = String(point.partitions * point.segmentsPerPartition);
      // Creating needs room for whatever the engine keeps open; the hard limit is the ceiling.
      const created = runChild(['--child', 'create', ...pointArgs], null);
      if (!created.ok) {
        rows.push([sealed, String(point.partitions), `create failed: ${errorLine(created.stderr)}`]);
        continue;
      }
      // `runs` clean reopens of the same directory, each in a fresh process; every column is the median.
      const samples: Array<{ opened: Measure; read: Measure }> = [];
      let failure: string | null = null;
      for (let r = 0; r < options.runs && failure === null; r++) {
        const reopened = runChild(['--child', 'reopen', ...pointArgs, extra], ulimit);
        if (!reopened.ok) failure = errorLine(reopened.stderr);
        else samples.push(JSON.parse(reopened.stdout.trim().split('\n').pop() ?? '{}') as { opened: Measure; read: Measure });
      }
      if (failure !== null) {
        rows.push([sealed, String(point.partitions), `reopen failed: ${failure}`]);
        continue;
      }
      const med = (pick: (s: { opened: Measure; read: Measure }) => number, digits = 0): string => median(samples.map(pick)).toFixed(digits);
      rows.push([sealed, String(point.partitions), med((s) => s.opened.ms), med((s) => s.opened.rssMB), med((s) => s.opened.heapMB), med((s) => s.opened.externalMB), med((s) => s.opened.fds),
        med((s) => s.read.ms), med((s) => s.read.rssMB), med((s) => s.read.heapMB), med((s) => s.read.externalMB), med((s) => s.read.fds)]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  printTable(rows);
}

const argv = process.argv.slice(2);
if (argv[0] === '--child') {
  const [, phase, dir, partitions, segments, extra] = argv as [string, string, string, string, string, string | undefined];
  const point = { partitions: Number(partitions), segmentsPerPartition: Number(segments) };
  if (phase === 'create') await childCreate(dir, point);
  else await childReopen(dir, point, JSON.parse(extra ?? '{}') as Record<string, unknown>);
}
