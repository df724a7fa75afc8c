// Only the warm sequential read of `pnpm bench hotpath` (issue 18), for
// profiling and quick A/B runs: the workload of lib/hotpath.ts written once
// (seglog buffered and plain fs frames), then `--reads N` alternating rounds
// of plain fs and seglog, the log reopened (tail cache empty, no framing
// walked yet) before each seglog read, as the bench does.
//
//   node --conditions=source --import tsx bench/hotpath-read-profile.ts [--reads 5] [--records 1000000]
//   node --conditions=source --import tsx bench/hotpath-read-profile.ts --only-seglog --reads 10 --profile /tmp/read
//
// --profile writes a CPU profile (inspector, 100 µs sampling) of the timed
// rounds only (not the writes), for Chrome DevTools or a summary script.
//
// --cold drops the files from the page cache (posix_fadvise DONTNEED) before
// each read, as the cold reads of bench hotpath do.
//
// --read-kib N sets the read size of both sides (default 1024; bench hotpath
// also runs 4096).
//
// Prints per-round ms, records/s and the median ratio seglog / plain fs, and
// the CPU time of each read (process.cpuUsage: every thread, so the pool's
// preads count; unlike wall time it does not grow when other processes take
// the cores, which makes it the steadier figure on a shared machine).
import { closeSync, fdatasyncSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Session } from 'node:inspector/promises';
import { AlignedArena, NodeIo } from '@seglog/io';
import { fadvise, POSIX_FADV } from '@seglog/native';
import { median } from './lib/harness.js';
import { appendBatches, BatchSource, makePayloads, openSeglog, readFrames, readSeglog, RECORDS_PER_BATCH, VALUE_BYTES } from './lib/hotpath.js';

const MiB = 1024 * 1024;
const { values } = parseArgs({
  options: { reads: { type: 'string', default: '5' }, records: { type: 'string', default: '1000000' }, 'only-seglog': { type: 'boolean', default: false }, cold: { type: 'boolean', default: false }, profile: { type: 'string' }, 'read-kib': { type: 'string', default: '1024' } },
});
const reads = Number(values.reads);
const records = Number(values.records);
const onlySeglog = values['only-seglog'] ?? false;
const cold = values.cold ?? false;
/** Bytes per read, both sides (Log.read maxBytes, plain fs's readSync). */
const readBytes = Number(values['read-kib']) * 1024;
if (cold && fadvise === null) throw new Error('--cold needs the native addon (posix_fadvise)');

/** Drops every file under `dir` from the page cache (as bench hotpath's cold reads do). */
function evict(dir: string): void {
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const file = path.join(dir, name);
    if (!statSync(file).isFile()) continue;
    const fd = openSync(file, 'r');
    fdatasyncSync(fd);
    fadvise!(fd, 0, 0, POSIX_FADV.DONTNEED);
    closeSync(fd);
  }
}

function plainWrite(file: string, source: BatchSource): void {
  const frameBuf = Buffer.allocUnsafe(RECORDS_PER_BATCH * (VALUE_BYTES + 4));
  const fd = openSync(file, 'w', 0o600);
  let at = 0;
  for (let b = 0; b < records / RECORDS_PER_BATCH; b++) {
    const n = source.frames(b, frameBuf);
    at += writeSync(fd, frameBuf, 0, n, at);
  }
  closeSync(fd);
}

const readBuf = Buffer.allocUnsafe(readBytes);
function plainRead(file: string): number {
  const { checksum, records: count } = readFrames(file, readBuf);
  if (count !== records) throw new Error(`plain read ${count} records`);
  return checksum;
}

const root = mkdtempSync(path.join(process.env['SEGLOG_BENCH_DIR'] ?? os.tmpdir(), 'seglog-read-profile-'));
const io = new NodeIo();
const arena = new AlignedArena({ chunkBytes: 2 * MiB, chunkCount: 8 });
const source = new BatchSource(makePayloads());
try {
  const dir = path.join(root, 'log');
  const frames = path.join(root, 'frames');
  let log = await openSeglog(io, dir, 'buffered', arena);
  await appendBatches(log, source, records / RECORDS_PER_BATCH);
  await log.flush();
  plainWrite(frames, source);
  const plainNs: number[] = [];
  const seglogNs: number[] = [];
  const plainCpuMs: number[] = [];
  const seglogCpuMs: number[] = [];
  const session = values.profile === undefined ? null : new Session();
  if (session !== null) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
  }
  for (let round = -1; round < reads; round++) { // round -1 warms the page cache and the JIT, untimed
    await log.close();
    if (cold) evict(root);
    log = await openSeglog(io, dir, 'buffered', arena);
    if (round >= 0 && session !== null) await session.post('Profiler.start');
    let cpu0 = process.cpuUsage();
    let t0 = process.hrtime.bigint();
    const r = await readSeglog(log, readBytes);
    const ns = Number(process.hrtime.bigint() - t0);
    const cpu = process.cpuUsage(cpu0);
    if (round >= 0 && session !== null) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(`${values.profile!}.${round}.cpuprofile`, JSON.stringify(profile));
    }
    if (r.records !== records) throw new Error(`seglog read ${r.records} records`);
    let pns = Number.NaN;
    let pcpu = { user: Number.NaN, system: Number.NaN };
    if (!onlySeglog) {
      if (cold) evict(root);
      cpu0 = process.cpuUsage();
      t0 = process.hrtime.bigint();
      if (plainRead(frames) !== r.checksum) throw new Error('checksums differ');
      pns = Number(process.hrtime.bigint() - t0);
      pcpu = process.cpuUsage(cpu0);
    }
    if (round < 0) continue;
    seglogNs.push(ns);
    plainNs.push(pns);
    seglogCpuMs.push((cpu.user + cpu.system) / 1e3);
    plainCpuMs.push((pcpu.user + pcpu.system) / 1e3);
    console.log(`round ${round}: seglog ${(ns / 1e6).toFixed(1)} ms (${(records / ns * 1e3).toFixed(2)} M rec/s, CPU ${((cpu.user + cpu.system) / 1e3).toFixed(1)} ms), ` +
      `plain ${(pns / 1e6).toFixed(1)} ms (CPU ${((pcpu.user + pcpu.system) / 1e3).toFixed(1)} ms)`);
  }
  session?.disconnect();
  const s = median(seglogNs);
  const p = median(plainNs);
  console.log(`median: seglog ${(records / s * 1e3).toFixed(2)} M rec/s, plain ${(records / p * 1e3).toFixed(2)} M rec/s, ratio ${(p / s).toFixed(3)}x; ` +
    `CPU per read (all threads): seglog ${median(seglogCpuMs).toFixed(1)} ms, plain ${median(plainCpuMs).toFixed(1)} ms`);
  await log.close();
} finally {
  rmSync(root, { recursive: true, force: true });
}
