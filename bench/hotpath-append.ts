// The append group of bench/hotpath alone (issue 18), for profiling and quick
// before/after comparisons: plain fs vs seglog buffered and direct, the same
// workload and code as lib/hotpath.ts (BatchSource.build + tryAppendAsLeader,
// else appendAsLeader; flush at the end), alternating rounds, medians, and
// the placement counters of each seglog run (why appends left the caller).
//
//   node --conditions=source --import tsx bench/hotpath-append.ts [--runs N] [--records N] [--only buffered|direct]
//   node --cpu-prof --cpu-prof-dir=/tmp/prof --conditions=source --import tsx bench/hotpath-append.ts --only buffered
import { closeSync, fdatasyncSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { AlignedArena, NodeIo } from '@seglog/io';
import { Log, type WriteMode } from '@seglog/log';
import { logConfig } from './lib/log-placement.js';
import { fmtRate, printTable, runCases, type Case } from './lib/harness.js';
import { appendBatches, BatchSource, makePayloads, openSeglog, RECORDS_PER_BATCH, VALUE_BYTES } from './lib/hotpath.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, records: { type: 'string', default: '1000000' }, only: { type: 'string' } } });
const runs = Number(values.runs);
const records = Number(values.records);
const only = values.only as WriteMode | undefined;

const root = mkdtempSync(path.join(process.env['SEGLOG_BENCH_DIR'] ?? os.tmpdir(), 'seglog-append-'));
const io = new NodeIo();
const arena = new AlignedArena({ chunkBytes: 2 * 1024 * 1024, chunkCount: 8 });
const source = new BatchSource(makePayloads());
const batches = records / RECORDS_PER_BATCH;
let n = 0;
const fresh = (): string => {
  const dir = path.join(root, `a${n++}`);
  mkdirSync(dir, { recursive: true });
  return dir;
};
const placements: string[] = [];
const plainPhases: Array<{ loopMs: number; syncMs: number }> = [];
const phases: Array<{ mode: WriteMode; loopMs: number; flushMs: number; cpuMs: number }> = [];

// Experiments: SEGLOG_EXP_QUEUED_MIB / SEGLOG_EXP_WRITE_KIB set the buffered writer's limits.
const env = (name: string): number | undefined => (process.env[name] === undefined ? undefined : Number(process.env[name]));
function openLog(dir: string, mode: WriteMode): Promise<Log> {
  const queued = env('SEGLOG_EXP_QUEUED_MIB');
  const write = env('SEGLOG_EXP_WRITE_KIB');
  if (queued === undefined && write === undefined) return openSeglog(io, dir, mode, arena);
  return Log.open(io, dir, logConfig(mode, 256 * 1024 * 1024), {
    topic: 'hot', partition: 0, recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: true, arena,
    writerLimits: { maxWriteBytes: (write ?? 1024) * 1024, maxIovecs: 256, maxQueuedBytes: (queued ?? 64) * 1024 * 1024 },
  });
}

function plain(): Case {
  const frameBuf = Buffer.allocUnsafe(RECORDS_PER_BATCH * (VALUE_BYTES + 4) * 2);
  let dir = '';
  return {
    name: 'plain fs',
    before: () => { dir = fresh(); },
    run: () => {
      const fd = openSync(path.join(dir, 'frames'), 'w', 0o600);
      const t0 = process.hrtime.bigint();
      let at = 0;
      for (let b = 0; b < batches; b++) {
        const len = source.frames(b, frameBuf);
        let done = 0;
        while (done < len) done += writeSync(fd, frameBuf, done, len - done, at + done);
        at += len;
      }
      const t1 = process.hrtime.bigint();
      fdatasyncSync(fd);
      plainPhases.push({ loopMs: Number(t1 - t0) / 1e6, syncMs: Number(process.hrtime.bigint() - t1) / 1e6 });
      closeSync(fd);
      return { units: records, checksum: at >>> 0 };
    },
    after: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function seglog(mode: WriteMode): Case {
  let dir = '';
  let opened: Log | null = null;
  return {
    name: `seglog ${mode}`,
    before: () => { dir = fresh(); },
    run: async () => {
      const log = await openLog(dir, mode);
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      await appendBatches(log, source, batches);
      const t1 = process.hrtime.bigint();
      await log.flush();
      const t2 = process.hrtime.bigint();
      const cpu = process.cpuUsage(c0);
      phases.push({ mode, loopMs: Number(t1 - t0) / 1e6, flushMs: Number(t2 - t1) / 1e6, cpuMs: (cpu.user + cpu.system) / 1e3 });
      const p = log.placement;
      const reasons = Object.entries(p.reasons).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v}`).join(', ');
      placements.push(`${mode}: caller ${p.append.caller}, pool ${p.append.pool}${reasons === '' ? '' : ` (${reasons})`}, writes ${log.metrics.writes}`);
      opened = log;
      return { units: records, checksum: log.logEndOffset >>> 0 };
    },
    after: async () => {
      await opened?.close();
      opened = null;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

try {
  const cases = only === undefined ? [plain(), seglog('buffered'), seglog('direct')] : [seglog(only)];
  for (const c of cases) { await c.before?.(); await c.run(); await c.after?.(); } // warm-up
  placements.length = 0;
  phases.length = 0;
  plainPhases.length = 0;
  const results = await runCases(cases, { quick: false, runs });
  const base = results.find((r) => r.name === 'plain fs')?.median ?? Number.NaN;
  console.log(`${records} records of ${VALUE_BYTES} B in batches of ${RECORDS_PER_BATCH}, ${runs} alternating rounds`);
  printTable([
    ['store', 'records/s (median)', 'min', 'max', 'vs plain fs'],
    ...results.map((r) => [r.name, fmtRate(r.median, 'rec'), fmtRate(r.min, 'rec'), fmtRate(r.max, 'rec'), `${(r.median / base).toFixed(2)}x`]),
  ]);
  for (const line of [...new Set(placements)]) console.log(`placement ${line}`);
  if (plainPhases.length !== 0) {
    console.log(`phases plain fs: write loop ms ${plainPhases.map((p) => p.loopMs.toFixed(0)).join(' ')}; fdatasync ms ${plainPhases.map((p) => p.syncMs.toFixed(0)).join(' ')}`);
  }
  for (const mode of ['buffered', 'direct'] as const) {
    const mine = phases.filter((p) => p.mode === mode);
    if (mine.length === 0) continue;
    const loops = mine.map((p) => p.loopMs.toFixed(0)).join(' ');
    const flushes = mine.map((p) => p.flushMs.toFixed(0)).join(' ');
    const cpus = mine.map((p) => p.cpuMs).sort((a, b) => a - b);
    console.log(`phases ${mode}: append loop ms ${loops} (min ${Math.min(...mine.map((p) => p.loopMs)).toFixed(0)}); flush ms ${flushes}; ` +
      `process CPU ms (all threads) median ${cpus[cpus.length >> 1]!.toFixed(0)}, min ${cpus[0]!.toFixed(0)}`);
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
