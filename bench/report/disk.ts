// Section 1: the disk's own limits, measured first, so every later figure has
// a reference from the same run on the same disk:
// - sequential 1 MiB writes to a fresh file, O_DIRECT (AlignedArena) and
//   buffered, each ended by one fdatasync (io.bench's writeFile);
// - sequential 1 MiB O_DIRECT reads of a file written with O_DIRECT (not in
//   the page cache): the reference of catch-up reads;
// - fdatasync latency after a 4 KiB append (size grows) vs after a 4 KiB
//   overwrite of zero-filled, synced space (fsync-reserve's runCase, modes
//   'none' and 'zero');
// - fio, when it is installed, for the same three (a second opinion).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { AlignedArena, NodeIo } from '@seglog/io';
import { pretouch, runCases, type BenchOptions, type Case } from '../lib/harness.js';
import { writeFile } from '../io.bench.js';
import { runCase as fsyncCase, type RoundResult } from '../fsync-reserve.bench.js';
import { barChart, fmt, ratio, stat, type Report } from './model.js';

const MiB = 1024 * 1024;

export interface DiskParams { readonly totalBytes: number; readonly syncOps: number }

export function diskParams(options: BenchOptions, full: boolean): DiskParams {
  if (options.quick) return { totalBytes: 8 * MiB, syncOps: 30 };
  return full ? { totalBytes: 1024 * MiB, syncOps: 4000 } : { totalBytes: 512 * MiB, syncOps: 2000 };
}

async function directRead(io: NodeIo, file: string, buf: Buffer, totalBytes: number): Promise<number> {
  const h = await io.open(file, { direct: true, readOnly: true });
  let position = 0;
  let checksum = 0;
  try {
    while (position < totalBytes) {
      const n = await h.pread(buf, position, buf.length);
      if (n === 0) break;
      checksum = (checksum + buf[0]!) >>> 0;
      position += n;
    }
  } finally {
    await h.close();
  }
  if (position !== totalBytes) throw new Error(`O_DIRECT read ${position} of ${totalBytes} bytes`);
  return checksum;
}

async function writeDirectFile(io: NodeIo, file: string, buf: Buffer, totalBytes: number): Promise<void> {
  const h = await io.open(file, { create: true, direct: true });
  for (let p = 0; p < totalBytes; p += buf.length) await h.pwrite(buf, p);
  await h.fdatasync();
  await h.close();
}

interface FioResult { readonly name: string; readonly value: string }

/** fio, when installed: the same probes once each (a second opinion, not part of the medians). */
function fio(dir: string, params: DiskParams): FioResult[] | null {
  const probe = spawnSync('fio', ['--version'], { encoding: 'utf8' });
  if (probe.status !== 0) return null;
  const sizeMiB = Math.max(8, Math.round(params.totalBytes / MiB));
  const jobs: Array<{ name: string; args: string[]; pick: (j: FioJob) => string }> = [
    { name: 'O_DIRECT 1 MiB write qd1 (libaio)', args: ['--rw=write', '--bs=1m', '--direct=1', '--ioengine=libaio', '--iodepth=1', '--end_fsync=1'], pick: (j) => `${(j.write.bw_bytes / 1e6).toFixed(0)} MB/s` },
    { name: 'buffered 1 MiB write + end_fsync', args: ['--rw=write', '--bs=1m', '--ioengine=psync', '--end_fsync=1'], pick: (j) => `${(j.write.bw_bytes / 1e6).toFixed(0)} MB/s` },
    { name: 'O_DIRECT 1 MiB read qd1', args: ['--rw=read', '--bs=1m', '--direct=1', '--ioengine=libaio', '--iodepth=1'], pick: (j) => `${(j.read.bw_bytes / 1e6).toFixed(0)} MB/s` },
    { name: '4 KiB append + fdatasync, p50/p99', args: ['--rw=write', '--bs=4k', '--ioengine=sync', '--fdatasync=1', `--number_ios=${params.syncOps}`], pick: (j) => `${((j.sync?.lat_ns?.percentile?.['50.000000'] ?? NaN) / 1000).toFixed(0)} / ${((j.sync?.lat_ns?.percentile?.['99.000000'] ?? NaN) / 1000).toFixed(0)} µs` },
  ];
  const out: FioResult[] = [];
  const file = path.join(dir, 'fio.dat');
  for (const job of jobs) {
    const r = spawnSync('fio', ['--name=probe', `--filename=${file}`, `--size=${sizeMiB}m`, '--output-format=json', ...job.args], { encoding: 'utf8', timeout: 120_000 });
    try {
      const parsed = JSON.parse(r.stdout) as { jobs: FioJob[] };
      out.push({ name: job.name, value: job.pick(parsed.jobs[0]!) });
    } catch {
      out.push({ name: job.name, value: `failed (exit ${r.status})` });
    }
  }
  spawnSync('rm', ['-f', file]);
  return out;
}

interface FioJob {
  write: { bw_bytes: number };
  read: { bw_bytes: number };
  sync?: { lat_ns?: { percentile?: Record<string, number> } };
}

export async function diskSection(report: Report, root: string, options: BenchOptions, full: boolean): Promise<void> {
  const p = diskParams(options, full);
  const s = report.section('disk', 'Disk limits (measured first, in this run)',
    `Sequential 1 MiB writes of ${p.totalBytes / MiB} MiB to a fresh file, each ended by one fdatasync (O_DIRECT from an AlignedArena; buffered ` +
    `from pre-touched buffers); sequential 1 MiB O_DIRECT reads of a file written with O_DIRECT (so not in the page cache); fdatasync latency ` +
    `after each of ${p.syncOps} 4 KiB pwrites, appending (file size grows) vs overwriting zero-filled, synced space. ${options.runs} runs, alternating order.`);
  const io = new NodeIo();
  const arena = new AlignedArena({ chunkBytes: MiB, chunkCount: 2 });
  const aligned = arena.acquire()!;
  const readBuf = arena.acquire()!;
  aligned.fill(0x61);
  const plain = Buffer.alloc(MiB, 0x61);
  pretouch(plain);
  pretouch(readBuf);
  let n = 0;
  const readFile = path.join(root, 'disk-read.dat');
  const cases: Case[] = [
    { name: 'O_DIRECT write', run: async () => ({ units: p.totalBytes, checksum: await writeFile(io, path.join(root, `disk-d${n++}`), true, [aligned], p.totalBytes, 1) }) },
    { name: 'buffered write', run: async () => ({ units: p.totalBytes, checksum: await writeFile(io, path.join(root, `disk-b${n++}`), false, [plain], p.totalBytes, 1) }) },
    {
      name: 'O_DIRECT read',
      before: () => writeDirectFile(io, readFile, aligned, p.totalBytes),
      run: async () => ({ units: p.totalBytes, checksum: await directRead(io, readFile, readBuf, p.totalBytes) }),
      after: () => io.unlink(readFile),
    },
  ];
  await writeFile(io, path.join(root, 'disk-warm'), true, [aligned], Math.min(p.totalBytes, 32 * MiB), 1); // warm-up
  const [direct, buffered, read] = await runCases(cases, options);
  const directF = report.figure('disk.directWrite.MBps', 'MB/s', direct!.rates.map((r) => r / 1e6));
  const bufferedF = report.figure('disk.bufferedWrite.MBps', 'MB/s', buffered!.rates.map((r) => r / 1e6));
  const readF = report.figure('disk.directRead.MBps', 'MB/s', read!.rates.map((r) => r / 1e6));

  // fdatasync latency: append vs overwrite, alternating.
  const appendRuns: RoundResult[] = [];
  const overwriteRuns: RoundResult[] = [];
  await fsyncCase(io, root, { mode: 'none', size: 4096, direct: false }, 20, plain, n++);
  for (let round = 0; round < options.runs; round++) {
    const order = round % 2 === 0 ? ['none', 'zero'] as const : ['zero', 'none'] as const;
    for (const mode of order) {
      const r = await fsyncCase(io, root, { mode, size: 4096, direct: false }, p.syncOps, plain, n++);
      (mode === 'none' ? appendRuns : overwriteRuns).push(r);
    }
  }
  const ap50 = report.figure('disk.fsyncAppend.p50us', 'µs', appendRuns.map((r) => r.p50Us));
  const ap99 = report.figure('disk.fsyncAppend.p99us', 'µs', appendRuns.map((r) => r.p99Us));
  const aRate = report.figure('disk.fsyncAppend.perSec', '1/s', appendRuns.map((r) => r.syncsPerSec));
  const op50 = report.figure('disk.fsyncOverwrite.p50us', 'µs', overwriteRuns.map((r) => r.p50Us));
  const op99 = report.figure('disk.fsyncOverwrite.p99us', 'µs', overwriteRuns.map((r) => r.p99Us));
  const oRate = report.figure('disk.fsyncOverwrite.perSec', '1/s', overwriteRuns.map((r) => r.syncsPerSec));
  arena.release(aligned);
  arena.release(readBuf);

  s.tables.push({
    caption: 'Bandwidth (MB/s = 10^6 bytes/s; median (min–max) over runs)',
    header: ['probe', 'MB/s', 'vs O_DIRECT write'],
    rows: [
      ['O_DIRECT 1 MiB writes, QD1, + fdatasync', fmt(directF.samples), '1.00x'],
      ['buffered 1 MiB writes + final fdatasync', fmt(bufferedF.samples), ratio(stat(bufferedF.samples).median, stat(directF.samples).median)],
      ['O_DIRECT 1 MiB reads, QD1 (not cached)', fmt(readF.samples), ratio(stat(readF.samples).median, stat(directF.samples).median)],
    ],
  });
  s.tables.push({
    caption: 'fdatasync after each 4 KiB buffered pwrite',
    header: ['case', 'p50 µs', 'p99 µs', 'syncs/s', 'p50 vs append'],
    rows: [
      ['append (file size grows)', fmt(ap50.samples), fmt(ap99.samples), fmt(aRate.samples), '1.00x'],
      ['overwrite of zero-filled, synced space', fmt(op50.samples), fmt(op99.samples), fmt(oRate.samples), ratio(stat(op50.samples).median, stat(ap50.samples).median)],
    ],
  });
  const fioResults = fio(root, p);
  if (fioResults === null) s.notes.push('fio is not installed: the figures above are the built-in probe only (`apt-get install -y fio` adds a second opinion).');
  else s.tables.push({ caption: 'fio (one run each, not part of the medians)', header: ['fio job', 'result'], rows: fioResults.map((r) => [r.name, r.value]) });
  report.raw['disk'] = { params: p, fsyncAppend: appendRuns, fsyncOverwrite: overwriteRuns, fio: fioResults };
  report.chart(s, 'report-disk.svg', barChart('Disk limits', 'MB/s', [
    { label: 'O_DIRECT 1 MiB write + fdatasync', stat: stat(directF.samples), group: 'write' },
    { label: 'buffered 1 MiB write + fdatasync', stat: stat(bufferedF.samples), group: 'write' },
    { label: 'O_DIRECT 1 MiB read', stat: stat(readF.samples), group: 'read' },
  ]));
}
