// Fetch response writing over loopback TCP: which strategy moves a response
// of N fragments of S bytes fastest and cheapest, and where they cross.
// - coalesce: inline fragments copied into one staging buffer, one write per buffer;
// - writev: inline fragments as zero-copy slices of corked batches (one writev each);
// - sendfile: file fragments by native sendfile(2) (threadpool, drained socket);
// - pread: file fragments pread into reused staging buffers, then written;
// - coalesce-file: file fragments pread into one staging buffer (what 'auto' does below coalesceBelowBytes).
// File fragments are in the page cache (the file is written and read before
// timing) and never adjacent (so they are not merged into one range). The
// reader is a child process that counts bytes; a round ends when it has
// acknowledged every byte. CPU is this process's user+system time (sendfile
// and pread threads included) per MiB; syscalls are the writes, sendfiles
// and preads writeFetch reports, per MiB.
//
// Writes bench/results/fetch.json and bench/results/fetch.svg.
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { NodeIo, type IoFile } from '@seglog/io';
import { capabilities } from '@seglog/native';
import { SendfileLimiter, writeFetch, type FetchWriteOptions, type WritableFetchPart, type WritableFetchPlan, type WriteFetchResult } from '@seglog/fetch';
import { environmentLine, median, printTable, runCases, type BenchOptions, type Case } from './lib/harness.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const HEADER = Buffer.alloc(64, 0x5a);
const here = path.dirname(fileURLToPath(import.meta.url));

type Strategy = 'coalesce' | 'writev' | 'sendfile' | 'pread' | 'coalesce-file';
const STRATEGIES: readonly Strategy[] = ['coalesce', 'writev', 'sendfile', 'pread', 'coalesce-file'];

export interface Cell {
  size: number;
  count: number;
  strategy: Strategy;
  mbps: number;
  mbpsMin: number;
  mbpsMax: number;
  /** MB/s of every run. */
  mbpsSamples: number[];
  syscallsPerMiB: number;
  cpuMsPerMiB: number;
  responsesPerRound: number;
}

// The reader: counts bytes, answers {count} once it has `expect` bytes.
const READER = `
const net = require('node:net');
let count = 0, target = -1;
const s = net.connect(Number(process.argv[1]), '127.0.0.1');
const check = () => { if (target >= 0 && count >= target) { const c = count; target = -1; process.send({ count: c }); } };
s.on('data', (b) => { count += b.length; check(); });
s.on('error', () => process.exit(0));
s.on('close', () => process.exit(0));
process.on('message', (m) => { target = m.expect; check(); });
process.on('disconnect', () => process.exit(0));
`;

export interface Link { socket: net.Socket; child: ChildProcess; sent: number; ack(total: number): Promise<void>; close(): void }

export async function connectReader(): Promise<Link> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
  const child = spawn(process.execPath, ['-e', READER, String(port)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const socket = await accepted;
  server.close();
  socket.on('error', () => undefined);
  const link: Link = {
    socket, child, sent: 0,
    ack: (total) => new Promise<void>((resolve) => {
      child.once('message', () => resolve());
      child.send({ expect: total });
    }),
    close: () => { socket.destroy(); child.kill(); },
  };
  return link;
}

function plan(parts: WritableFetchPart[]): WritableFetchPlan {
  let total = 0;
  for (const p of parts) total += p.kind === 'inline' ? p.buffer.length : p.length;
  // Reused for every response of a case: release() has nothing to drop.
  return { parts, totalBytes: total, release: () => Promise.resolve() };
}

function fileParts(file: IoFile, size: number, count: number): WritableFetchPart[] {
  const stride = Math.ceil(size / 4096) * 4096 + 4096; // a gap: never merged into one range
  return Array.from({ length: count }, (_, k) => ({ kind: 'file' as const, file: { file }, position: k * stride, length: size }));
}

function inlineParts(source: Buffer, size: number, count: number): WritableFetchPart[] {
  const stride = Math.ceil(size / 4096) * 4096 + 4096;
  return Array.from({ length: count }, (_, k) => ({ kind: 'inline' as const, buffer: source.subarray(k * stride, k * stride + size) }));
}

interface Acc { cpuUs: number[]; bytes: number[]; syscalls: number[] }

function makeCase(name: string, link: Link, p: WritableFetchPlan, responses: number, options: FetchWriteOptions, acc: Acc, header: Buffer = HEADER): Case {
  const bytesPerResponse = header.length + p.totalBytes;
  return {
    name,
    run: async () => {
      const cpu0 = process.cpuUsage();
      let syscalls = 0;
      let checksum = 0;
      for (let i = 0; i < responses; i++) {
        const r: WriteFetchResult = await writeFetch(link.socket, header, p, options);
        syscalls += r.writes + r.sendfiles + r.preads;
        checksum = (checksum + r.bytesWritten) >>> 0;
      }
      link.sent += responses * bytesPerResponse;
      await link.ack(link.sent);
      const cpu = process.cpuUsage(cpu0);
      acc.cpuUs.push(cpu.user + cpu.system);
      acc.bytes.push(responses * bytesPerResponse);
      acc.syscalls.push(syscalls);
      return { units: responses * bytesPerResponse, checksum };
    },
  };
}

function optionsFor(strategy: Strategy, limiter: SendfileLimiter): FetchWriteOptions {
  switch (strategy) {
    case 'coalesce': case 'coalesce-file': return { strategy: 'coalesce', limiter };
    case 'writev': return { strategy: 'writev', limiter };
    case 'sendfile': return { strategy: 'sendfile', limiter };
    case 'pread': return { strategy: 'pread', limiter };
  }
}

function fmtSize(n: number): string {
  return n >= MiB ? `${n / MiB} MiB` : n >= KiB ? `${n / KiB} KiB` : `${n} B`;
}

export interface GridParams { readonly sizes: readonly number[]; readonly counts: readonly number[]; readonly targetBytes: number; readonly maxResponses: number }

export function defaultGrid(options: BenchOptions): GridParams {
  return options.quick
    ? { sizes: [100, 16 * KiB, MiB], counts: [1, 16], targetBytes: 2 * MiB, maxResponses: 100 }
    : { sizes: [100, KiB, 16 * KiB, 64 * KiB, MiB], counts: [1, 16, 64], targetBytes: 32 * MiB, maxResponses: 2000 };
}

/** Every strategy at every fragment size x count; `source` must be the file's bytes (inline fragments are slices of it). */
export async function grid(options: BenchOptions, link: Link, file: IoFile, source: Buffer, params: GridParams = defaultGrid(options)): Promise<Cell[]> {
  const { sizes, counts, targetBytes, maxResponses } = params;
  const limiter = new SendfileLimiter(2);
  const cells: Cell[] = [];
  const strategies = STRATEGIES.filter((s) => s !== 'sendfile' || capabilities.sendfile);
  for (const size of sizes) {
    for (const count of counts) {
      const perResponse = HEADER.length + size * count;
      const responses = Math.max(1, Math.min(maxResponses, Math.ceil(targetBytes / perResponse)));
      const accs = new Map<Strategy, Acc>();
      const cases = strategies.map((s) => {
        const acc: Acc = { cpuUs: [], bytes: [], syscalls: [] };
        accs.set(s, acc);
        const parts = s === 'coalesce' || s === 'writev' ? inlineParts(source, size, count) : fileParts(file, size, count);
        return makeCase(s, link, plan(parts), responses, optionsFor(s, limiter), acc);
      });
      for (const c of cases) await c.run(); // warm-up, untimed by runCases
      for (const acc of accs.values()) { acc.cpuUs.length = 0; acc.bytes.length = 0; acc.syscalls.length = 0; }
      const results = await runCases(cases, options);
      for (const r of results) {
        const acc = accs.get(r.name as Strategy)!;
        const mib = acc.bytes.map((b) => b / MiB);
        cells.push({
          size, count, strategy: r.name as Strategy,
          mbps: r.median / 1e6, mbpsMin: r.min / 1e6, mbpsMax: r.max / 1e6, mbpsSamples: r.rates.map((x) => x / 1e6),
          syscallsPerMiB: median(acc.syscalls.map((s, i) => s / mib[i]!)),
          cpuMsPerMiB: median(acc.cpuUs.map((u, i) => u / 1000 / mib[i]!)),
          responsesPerRound: responses,
        });
      }
    }
  }
  return cells;
}

function printGrid(cells: readonly Cell[]): void {
  const strategies = [...new Set(cells.map((c) => c.strategy))];
  const keys = [...new Set(cells.map((c) => `${c.size}x${c.count}`))];
  const rows = [['fragment x count', ...strategies.map((s) => `${s} MB/s`), 'best inline', 'best file']];
  const cost = [['fragment x count', ...strategies.map((s) => `${s} sys/MiB`), ...strategies.map((s) => `${s} cpu ms/MiB`)]];
  for (const key of keys) {
    const row = cells.filter((c) => `${c.size}x${c.count}` === key);
    const first = row[0]!;
    const get = (s: Strategy): Cell | undefined => row.find((c) => c.strategy === s);
    const best = (names: Strategy[]): string => names.map(get).filter((c): c is Cell => c !== undefined).sort((a, b) => b.mbps - a.mbps)[0]?.strategy ?? '';
    rows.push([`${fmtSize(first.size)} x ${first.count}`, ...strategies.map((s) => (get(s)?.mbps ?? NaN).toFixed(0)), best(['coalesce', 'writev']), best(['sendfile', 'pread', 'coalesce-file'])]);
    cost.push([`${fmtSize(first.size)} x ${first.count}`, ...strategies.map((s) => (get(s)?.syscallsPerMiB ?? NaN).toFixed(1)), ...strategies.map((s) => (get(s)?.cpuMsPerMiB ?? NaN).toFixed(2))]);
  }
  console.log('\nThroughput (median MB/s; inline fragments: coalesce, writev; file fragments: sendfile, pread, coalesce-file)');
  printTable(rows);
  console.log('\nCost per MiB (syscalls = writes + sendfiles + preads counted by writeFetch; CPU = process user+system)');
  printTable(cost);
}

/**
 * A decision stump: the cut-off T that best separates "a wins at x <= T"
 * from "b wins at x > T" over the measured cells (most cells on the right
 * side), so one noisy cell does not move it. Returns the largest x still
 * given to a, or null when b should always win.
 */
function stump(points: ReadonlyArray<{ x: number; aWins: boolean }>): number | null {
  const xs = [...new Set(points.map((p) => p.x))].sort((a, b) => a - b);
  let best: number | null = null;
  let bestScore = points.filter((p) => !p.aWins).length; // T below every x: b everywhere
  for (const t of xs) {
    const score = points.filter((p) => (p.x <= t ? p.aWins : !p.aWins)).length;
    if (score > bestScore) { bestScore = score; best = t; }
  }
  return best;
}

/** The thresholds the grid implies. */
export function thresholds(cells: readonly Cell[]): Record<string, string> {
  const at = (size: number, count: number, s: Strategy): Cell | undefined => cells.find((c) => c.size === size && c.count === count && c.strategy === s);
  const inline = cells.filter((c) => c.strategy === 'coalesce' && at(c.size, c.count, 'writev') !== undefined)
    .map((c) => ({ x: HEADER.length + c.size * c.count, aWins: c.mbps >= at(c.size, c.count, 'writev')!.mbps }));
  const file = cells.filter((c) => c.strategy === 'pread' && at(c.size, c.count, 'sendfile') !== undefined)
    .map((c) => ({ x: c.size, aWins: c.mbps >= at(c.size, c.count, 'sendfile')!.mbps }));
  const coalesceUpTo = stump(inline);
  const preadUpTo = stump(file);
  const sizes = [...new Set(cells.map((c) => c.size))].sort((a, b) => a - b);
  const nextSize = preadUpTo === null ? sizes[0] : sizes.find((x) => x > preadUpTo);
  return {
    coalesceWinsUpToTotalBytes: coalesceUpTo === null ? 'never' : String(coalesceUpTo),
    impliedCoalesceBelowBytes: coalesceUpTo === null ? '0' : `just above ${coalesceUpTo}`,
    preadWinsUpToFragmentBytes: preadUpTo === null ? 'never' : String(preadUpTo),
    impliedSendfileMinBytes: file.length === 0 ? 'n/a (no sendfile)' : nextSize === undefined ? 'never' : `between ${preadUpTo ?? 0} and ${nextSize}`,
  };
}

async function sweep(name: string, link: Link, options: BenchOptions, variants: Array<{ label: string; plan: WritableFetchPlan; options: FetchWriteOptions; header?: Buffer }>, responses: number): Promise<Array<{ label: string; mbps: number }>> {
  const cases: Case[] = variants.map((v) => makeCase(v.label, link, v.plan, responses, v.options, { cpuUs: [], bytes: [], syscalls: [] }, v.header));
  for (const c of cases) await c.run();
  const results = await runCases(cases, options);
  console.log(`\n${name}`);
  printTable([['variant', 'MB/s (median)', 'min-max'], ...results.map((r) => [r.name, (r.median / 1e6).toFixed(0), `${(r.min / 1e6).toFixed(0)}-${(r.max / 1e6).toFixed(0)}`])]);
  return results.map((r) => ({ label: r.name, mbps: r.median / 1e6 }));
}

export function svg(cells: readonly Cell[]): string {
  const counts = [...new Set(cells.map((c) => c.count))];
  const sizes = [...new Set(cells.map((c) => c.size))].sort((a, b) => a - b);
  const strategies = [...new Set(cells.map((c) => c.strategy))];
  const colors: Record<Strategy, string> = { coalesce: '#1f77b4', writev: '#ff7f0e', sendfile: '#2ca02c', pread: '#d62728', 'coalesce-file': '#9467bd' };
  const panelW = 320, panelH = 240, pad = 50;
  const maxY = Math.max(...cells.map((c) => c.mbps)) * 1.05;
  const xs = (i: number): number => pad + (sizes.length === 1 ? 0 : (i * (panelW - pad - 10)) / (sizes.length - 1));
  const ys = (v: number): number => 20 + (panelH - 60) * (1 - v / maxY);
  const out: string[] = [];
  const width = counts.length * panelW;
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${panelH + 40}" font-family="sans-serif" font-size="11">`);
  out.push(`<rect width="100%" height="100%" fill="white"/>`);
  counts.forEach((count, p) => {
    const ox = p * panelW;
    out.push(`<g transform="translate(${ox},0)">`);
    out.push(`<text x="${panelW / 2}" y="14" text-anchor="middle">${count} fragment(s) per response — MB/s vs fragment size</text>`);
    out.push(`<line x1="${pad}" y1="${ys(0)}" x2="${panelW - 10}" y2="${ys(0)}" stroke="#888"/><line x1="${pad}" y1="20" x2="${pad}" y2="${ys(0)}" stroke="#888"/>`);
    for (let t = 0; t <= 4; t++) {
      const v = (maxY * t) / 4;
      out.push(`<text x="${pad - 4}" y="${ys(v) + 4}" text-anchor="end">${v.toFixed(0)}</text>`);
    }
    sizes.forEach((s, i) => out.push(`<text x="${xs(i)}" y="${ys(0) + 14}" text-anchor="middle">${fmtSize(s)}</text>`));
    for (const strategy of strategies) {
      const pts = sizes.map((s, i) => { const c = cells.find((x) => x.size === s && x.count === count && x.strategy === strategy); return c === undefined ? null : `${xs(i).toFixed(1)},${ys(c.mbps).toFixed(1)}`; }).filter((x) => x !== null);
      out.push(`<polyline fill="none" stroke="${colors[strategy]}" stroke-width="2" points="${pts.join(' ')}"/>`);
    }
    out.push('</g>');
  });
  strategies.forEach((s, i) => out.push(`<g transform="translate(${10 + i * 120},${panelH + 20})"><rect width="12" height="12" fill="${colors[s]}"/><text x="16" y="10">${s}</text></g>`));
  out.push('</svg>');
  return out.join('\n');
}

export interface FetchFixture { readonly dir: string; readonly source: Buffer; readonly file: IoFile }

/** A file of `fileBytes` in the page cache, its bytes in memory (the inline fragments' source). */
export async function fetchFixture(fileBytes: number): Promise<FetchFixture> {
  const dir = mkdtempSync(path.join(process.env['SEGLOG_BENCH_DIR'] ?? os.tmpdir(), 'seglog-bench-fetch-'));
  const source = Buffer.allocUnsafe(fileBytes);
  for (let i = 0; i < fileBytes; i += 4) source.writeUInt32LE((i * 2654435761) >>> 0, i);
  const filePath = path.join(dir, '00000000000000000000.log');
  writeFileSync(filePath, source);
  readFileSync(filePath); // in the page cache before timing
  const file = await new NodeIo().open(filePath, { readOnly: true });
  return { dir, source, file };
}

export async function run(options: BenchOptions): Promise<void> {
  const { dir, source, file } = await fetchFixture(options.quick ? 17 * MiB : 66 * MiB);
  const link = await connectReader();
  try {
    console.log(`sendfile: ${capabilities.sendfile ? 'native' : 'unavailable (skipped)'}; header ${HEADER.length} B; reader: child process over loopback TCP`);
    const cells = await grid(options, link, file, source);
    printGrid(cells);
    const implied = thresholds(cells);
    console.log('\nImplied thresholds:', JSON.stringify(implied));

    const limiter = new SendfileLimiter(2);
    const small = options.quick ? 50 : 500;
    const extras: Record<string, Array<{ label: string; mbps: number }>> = {};
    if (capabilities.sendfile) {
      extras['headerBeforeSendfile'] = await sweep('sendfile of one 64 KiB range: header written and drained first vs no header vs pread', link, options, [
        { label: '64 B header, drain, sendfile', plan: plan(fileParts(file, 64 * KiB, 1)), options: { strategy: 'sendfile', limiter } },
        { label: 'no header, sendfile only', plan: plan(fileParts(file, 64 * KiB, 1)), options: { strategy: 'sendfile', limiter }, header: Buffer.alloc(0) },
        { label: 'pread+write (header corked with body)', plan: plan(fileParts(file, 64 * KiB, 1)), options: { strategy: 'pread', limiter } },
      ], small);
    }
    extras['maxIovecs'] = await sweep('writev of 200 x 1 KiB inline fragments by maxIovecs', link, options,
      [8, 32, 64, 256, 1024].map((n) => ({ label: `maxIovecs ${n}`, plan: plan(inlineParts(source, KiB, 200)), options: { strategy: 'writev' as const, maxIovecs: n, limiter } })), small);
    extras['preadChunkBytes'] = await sweep('pread of 16 x 1 MiB file fragments by preadChunkBytes', link, options,
      [64 * KiB, 256 * KiB, MiB].map((n) => ({ label: `preadChunkBytes ${fmtSize(n)}`, plan: plan(fileParts(file, MiB, 16)), options: { strategy: 'pread' as const, preadChunkBytes: n, coalesceBelowBytes: 0, limiter } })), options.quick ? 2 : 8);

    mkdirSync(path.join(here, 'results'), { recursive: true });
    writeFileSync(path.join(here, 'results', 'fetch.json'), JSON.stringify({ environment: environmentLine(), quick: options.quick, runs: options.runs, headerBytes: HEADER.length, cells, implied, extras }, null, 2));
    writeFileSync(path.join(here, 'results', 'fetch.svg'), svg(cells));
    console.log('\nwrote bench/results/fetch.json, bench/results/fetch.svg');
  } finally {
    link.close();
    await file.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
