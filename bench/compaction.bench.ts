// `pnpm bench compaction`: the log cleaner (packages/log/src/cleaner/) on
// NodeIo in os.tmpdir() (SEGLOG_BENCH_DIR chooses).
//
// Part 1, cleaning throughput and memory: for 10 %, 50 % and 90 % duplicate
// keys, a compacted log of DATA_MIB of records of 100 B–1 KiB values
// (seeded PRNG; that share of the records repeats an earlier key; batches of 16 records; 16 MiB segments, 1 MiB in --quick) is
// written and rolled (untimed), then one cleaner pass is timed: MB/s of dirty
// data cleaned, the peak of heapUsed + external above the pre-pass level
// (sampled every 5 ms), the bytes saved, and a checksum (records kept).
// Rounds alternate the order of the three cases; medians.
//
// Part 2, caller-append latency: APPENDS (20,000; SEGLOG_BENCH_COMPACTION_APPENDS; 4,000 before
// 2026-12-05, whose p99, the 40th slowest, moved too much between rounds) appends of 512 B to a second log
// of the same LogManager (same pool), one at a time, each timed from the
// moment it is due (queued behind one event-loop turn, as a request from a
// socket) to its result, so event-loop time the cleaner takes counts; p50/p99 with no cleaning
// ('idle', the baseline) and while a pass cleans a 50 %-duplicate log
// ('cleaning'), alternating, medians over runs; the ratio column is against
// 'idle' in the same run. Target (issue 20): p99 within 1.5x.
//
// The machine is shared by several engineers running tests: numbers move
// between runs; compare ratios within a run. DATA_MIB defaults to 256
// (SEGLOG_BENCH_COMPACTION_MIB=1024 for the 1 GiB); --quick: 8.
//
// Results on the shared 2-vCPU VM (load average 13-17 from other engineers'
// test runs while measuring; figures move 2-3x between invocations):
//   SEGLOG_BENCH_COMPACTION_MIB=1024 pnpm bench compaction --runs 1
//     cleaned MB/s 48.8 / 53.9 / 171.5 at 10 / 50 / 90 % duplicates,
//     peak heap+external 117 / 60 / 30 MiB (the offset map: 1.66 M keys at 10 %)
//   pnpm bench compaction --runs 3 (256 MiB), three invocations:
//     cleaned MB/s 58-114 / 62-140 / 137-171; peak 39-47 / 17-46 / 27-32 MiB
//   caller-append p99, due-to-result (this file's current measure), 256 MiB run,
//   before issue 20's follow-up (cleanlat): idle 75 µs, cleaning 1748 µs (23x).
//   The profile's cause: inside a pool step the batches already in the
//   scanner's 256 KiB window were parsed and filtered with only microtask
//   waits, so a step held the event loop for a whole window whatever the step
//   size; and the offset map held one JS string per key (GC). Now the cleaner
//   yields a macrotask turn every 8 KiB of batches and the offset map is an
//   exact hash table in typed arrays and one key arena. `pnpm bench compaction
//   --runs 3`, alternating main / this / main / this (load average 3-6):
//     main: p50 4.7 / 5.5 µs, p99 183 / 1021 µs (5.6x); p50 8.6 / 5.7, p99 134 / 1431 (10.7x)
//     now:  p50 9.6 / 15.0 µs, p99 72 / 103 µs (1.44x); p50 5.0 / 28.5, p99 148 / 244 (1.65x)
//   (idle / cleaning); two single invocations before that: yield only, p99
//   60 / 136 µs (2.29x); both changes, with tests running beside it, 104 / 724
//   (6.98x). The 1.5x target is met in some invocations, not all:
//   what is left is about one batch of filtering (rebuild, CRC-32C, one
//   RecordInput per kept record) per slice on the event loop, and its GC;
//   the next step is the filtering in a worker. Cleaned MB/s unchanged
//   within the noise. The first version's call-to-result measure (which could
//   not see event-loop time) gave 1.05x and 1.98x.
//   Issue 20 follow-up (cleanp99): uncompressed batches filtered by copying kept
//   records' bytes (no RecordInput per record, no re-encode). Five alternating
//   pairs old/new, each SEGLOG_BENCH_COMPACTION_PART=latency
//   SEGLOG_BENCH_COMPACTION_MIB=64 pnpm bench compaction --runs 3 (load average 7.5-10.5):
//     p99 ratio old 3.69 / 4.24 / 10.69 / 2.97 / 3.65 (median 3.69),
//               new 9.05 / 2.81 / 3.65 / 4.86 / 0.71 (median 3.65):
//   no difference visible at that load; the 1.5x target not shown met.
//   2026-12-02, the machine quiet (load average 0.1-0.7, nothing else running):
//     pnpm bench compaction --runs 5: cleaned MB/s 81.4 / 117.2 / 180.8 at 10 / 50 / 90 %,
//     peak 53.8 / 49.8 / 33.3 MiB; caller p50 20.0 / 29.4 µs, p99 87.6 / 141.4 µs (1.61x), 128 MiB cleaned;
//     SEGLOG_BENCH_COMPACTION_PART=latency SEGLOG_BENCH_COMPACTION_MIB=64 ... --runs 5: p99 112.0 / 167.1 µs (1.49x).
//   A profile of only the appends' window (inspector, 25 µs sampling, cleaning 128 MiB): of the main
//   thread's busy stretches of 150 µs or more, 36 % is in fs dispatch (the hot log's own pwritev 21 %,
//   index write-back 8 %, the cleaner's preads 6 %; a dispatch costs microseconds, so these samples are
//   most likely the main thread preempted by the pool threads' copying on 2 vCPUs, not measured),
//   23 % the cleaner's own slices (batch walk 14 %, key mapping 8 %), the appends 10 %.
//   The cleaner's bytes-per-second limit, SEGLOG_BENCH_COMPACTION_BPS, latency part, --runs 5:
//     64 MiB/s (128 MiB cleaned): p99 81.5 / 135.9 µs (1.67x); 32 MiB/s: 93.8 / 153.6 (1.64x);
//     16 MiB/s (32 MiB): 100.4 / 132.8 (1.32x); 8 MiB/s: 108.6 / 108.6 (1.00x); 1 MiB/s (16 MiB): 1.05x.
//   So the 1.5x target holds with a limit of 16 MiB/s or less, not at 32 MiB/s or without one (the
//   default, Kafka's). Meeting it at full speed needs the cleaner's CPU off the event loop (the
//   filtering in a worker), which is not built.
//   2026-12-05, the compute worker (cleaner-compute.ts: batch walks, mapping and filtering in a worker
//   thread at nice 19; SEGLOG_BENCH_COMPACTION_COMPUTE=inline|worker picks the mode):
//     pnpm bench compaction --runs 5 (worker, load average 2-3): cleaned MB/s 121.7 / 160.1 / 222.1 at
//     10 / 50 / 90 % (inline the same day under load 4-5: 76.0 / 133.9 / 247.4); caller p50 4.4 / 5.5 µs,
//     p99 63.8 / 121.6 µs (1.91x) idle / cleaning.
//     Latency part alone, --runs 5, worker and inline alternating, three pairs at load 2.5-3:
//     worker 2.57 / 1.40 / 1.80x, inline 2.41 / 1.80 / 1.43x (p50 while cleaning 3.5-4.6 µs worker,
//     12-18.6 µs inline); three pairs at load 3.4-4.6: worker 2.14 / 1.07 / 1.32x, inline 3.26 / 2.36 / 1.09x.
//     Quiet machine (06:07, load 1.3-1.6), latency part, --runs 5, five invocations with the worker:
//     1.94 / 1.55 / 1.30 / 1.85 / 1.07x (median 1.55); inline between them 2.15 / 1.65x. Windows of 64 KiB with
//     256 KiB writes: 1.87 / 2.19 / 1.85x; 1 MiB windows: 1.68 / 1.38 / 1.69x (kept: 256 KiB, 1 MiB).
//   So the worker takes the cleaner's CPU off the event loop (p50 while cleaning back at idle's, cleaning
//   faster) but the p99 ratio on this 2-vCPU VM is not below 1.5x either way. A probe (the latency loop
//   with a PerformanceObserver on 'gc'): none of the slowest 1 % of appends overlapped a GC in worker mode,
//   so what is left is most likely the pool threads' 256 KiB reads and 1 MiB writes and the worker
//   competing with the event loop for 2 cores (a wake-up preempts the waker); not proven.
//   2026-12-05, later: the worker does the window's I/O itself on NodeIo (cleaner-compute.ts mapAt/filterAt:
//   readSync/writeSync on the pass's fds). Why: the slowest 1 % of 20,000 appends while cleaning, sampled
//   at 20 µs (node --cpu-prof, samples inside those appends' intervals): the hot log's own write dispatch
//   (writeBuffers/writeBuffer: the main thread preempted waking a pool thread) 47 %, GC 12.5 % (2.6 % of
//   all samples: the windows' ArrayBuffers arriving on the main heap as external memory), the pool's
//   completions. After: GC and the cleaner's pool completions gone from the main thread.
//   Latency part, --runs 5, 20,000 appends a round, load average 1-2.5:
//     pool I/O (before, same session): 2.45 / 1.84 / 2.56x;
//     worker I/O, 256 KiB windows: 1.56 / 1.29 / 1.60 / 1.49 / 1.18 / 1.44 / 1.03 / 1.65x and, with nice 19
//     against SCHED_IDLE (through a trial addon function; not kept: medians 1.34x nice, 1.29x idle over
//     11 invocations each, no difference within the noise);
//     worker I/O, 1 MiB windows (kept): 1.61 / 1.23 / 0.93 / 1.15 / 1.42 (alternating with 256 KiB),
//     then 1.14 / 1.00 / 1.19 / 1.40 / 1.31 / 1.26x: median 1.23x over these 11 invocations, one above 1.5x;
//     with the full run below, 12 invocations, median 1.25x, two above 1.5x (1.61, 1.59).
//   pnpm bench compaction --runs 5 (1 MiB windows): cleaned MB/s 160.2 / 195.2 / 324.5 at 10 / 50 / 90 %,
//   caller p50 7.6 / 18.0 µs, p99 61.3 / 97.7 µs (1.59x) in that invocation; with 256 KiB windows
//   185.7 / 210.8 / 343.6 MB/s, p99 1.21x.
//   SEGLOG_BENCH_COMPACTION_MIB=1024 (the 1 GiB), throughput part, --runs 1 (1 MiB windows): cleaned
//   MB/s 121.0 / 189.7 / 325.6 at 10 / 50 / 90 %; peak heap+external of the main isolate 14.3 / 15.7 / 18.6 MiB, peak
//   RSS growth 193.2 / 65.7 / 0.0 MiB (the offset map of 1.66 M keys at 10 % lives in the worker; its budget,
//   offsetMapBytes, is 128 MiB; RSS adds the worker's heap and the map's doubling growth).
import { NodeIo } from '@seglog/io';
import { LogConfig, LogManager } from '@seglog/log';
import type { Log } from '@seglog/log';
import { buildBatch } from '@seglog/records';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fmtMBps, median, printTable, type BenchOptions } from './lib/harness.js';

const MiB = 1024 * 1024;
const RECORDS_PER_BATCH = 16;

function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 0x1_0000_0000;
  };
}

function compactConfig(quick: boolean): LogConfig {
  return new LogConfig({
    cleanupPolicy: 'compact', segmentBytes: quick ? MiB : 16 * MiB, minCleanableDirtyRatio: 0.01, retentionMs: -1,
    segmentIndexBytes: 1 * MiB,
  });
}

/** Writes ~dataBytes of keyed records with `dupShare` of them repeating a key; returns the record count. */
async function fill(log: Log, dataBytes: number, dupShare: number, seed: number): Promise<number> {
  const random = prng(seed);
  const value = Buffer.alloc(1024, 0x61);
  let written = 0;
  let records = 0;
  // A share dupShare of the records repeats an earlier key (chosen uniformly); the others bring a new key.
  let keys = 0;
  while (written < dataBytes) {
    const batch = [];
    for (let i = 0; i < RECORDS_PER_BATCH; i++) {
      const size = 100 + Math.floor(random() * 925);
      const key = keys > 0 && random() < dupShare ? Math.floor(random() * keys) : keys++;
      batch.push({ key: `key-${key}`, value: value.subarray(0, size), timestamp: 1 });
      written += size + 20;
    }
    await log.appendAsLeader(buildBatch({ records: batch }));
    records += RECORDS_PER_BATCH;
  }
  await log.forceRoll();
  await log.flush();
  log.updateHighWatermark(log.logEndOffset);
  return records;
}

interface CleanSample { readonly mbps: number; readonly peakBytes: number; readonly peakRssBytes: number; readonly savedBytes: number; readonly kept: number }

async function cleanOnce(base: string, dataBytes: number, dupShare: number, quick: boolean, seed: number): Promise<CleanSample> {
  const dir = mkdtempSync(path.join(base, 'clean-'));
  const manager = await LogManager.open(new NodeIo(), dir, { defaultConfig: compactConfig(quick), minFreeBytes: 0, checkpointIntervalMs: 0, cleaner: { enabled: false, compute: computeMode() } });
  try {
    const log = await manager.getOrCreateLog('table', 0);
    await fill(log, dataBytes, dupShare, seed);
    (globalThis as { gc?: () => void }).gc?.();
    const before = process.memoryUsage();
    const floor = before.heapUsed + before.external;
    let peak = floor;
    // RSS counts the cleaner's worker thread too (its offset map), which heapUsed and external, the main
    // isolate's, do not.
    let peakRss = before.rss;
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      peak = Math.max(peak, m.heapUsed + m.external);
      peakRss = Math.max(peakRss, m.rss);
    }, 5);
    const started = performance.now();
    const stats = await manager.cleaner.clean(log);
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const m = process.memoryUsage();
    peak = Math.max(peak, m.heapUsed + m.external);
    peakRss = Math.max(peakRss, m.rss);
    return { mbps: stats.range.dirtyBytes / seconds, peakBytes: peak - floor, peakRssBytes: peakRss - before.rss, savedBytes: stats.bytesSaved, kept: log.logEndOffset - stats.removedRecords };
  } finally {
    await manager.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** SEGLOG_BENCH_COMPACTION_COMPUTE=inline|worker: where the cleaner's CPU work runs (default: the engine's, worker). */
function computeMode(): 'inline' | 'worker' {
  const mode = process.env['SEGLOG_BENCH_COMPACTION_COMPUTE'] ?? 'worker';
  if (mode !== 'inline' && mode !== 'worker') throw new Error(`SEGLOG_BENCH_COMPACTION_COMPUTE must be inline or worker, not ${mode}`);
  return mode;
}

function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

async function appendLatency(base: string, dataBytes: number, appends: number, withCleaning: boolean, quick: boolean): Promise<{ p50: number; p99: number; cleaned: boolean }> {
  const dir = mkdtempSync(path.join(base, 'lat-'));
  // SEGLOG_BENCH_COMPACTION_BPS: the cleaner's bytes-per-second limit (log.cleaner.io.max.bytes.per.second) for this part; default none.
  const bps = Number(process.env['SEGLOG_BENCH_COMPACTION_BPS'] ?? Number.POSITIVE_INFINITY);
  const manager = await LogManager.open(new NodeIo(), dir, {
    defaultConfig: compactConfig(quick), minFreeBytes: 0, checkpointIntervalMs: 0, cleaner: { enabled: false, bytesPerSecond: bps, compute: computeMode() },
  });
  try {
    const table = await manager.getOrCreateLog('table', 0);
    await fill(table, dataBytes, 0.5, 7);
    const hot = await manager.getOrCreateLog('hot', 0, new LogConfig({ retentionMs: -1, segmentIndexBytes: MiB }));
    const payload = Buffer.alloc(512, 0x62);
    let pass: Promise<unknown> | null = null;
    let passDone = false;
    if (withCleaning) pass = manager.cleaner.clean(table).finally(() => { passDone = true; });
    const latencies: number[] = [];
    for (let i = 0; i < appends; i++) {
      const batch = buildBatch({ records: [{ key: `h${i % 64}`, value: payload, timestamp: 1 }] });
      // From the moment the append is due (queued behind one event-loop turn, as a request arriving from a
      // socket would be) to its result: so time the cleaner holds the event loop counts, not only the append.
      const t0 = performance.now();
      await new Promise<void>((resolve) => setImmediate(resolve));
      await hot.appendAsLeader(batch);
      latencies.push(performance.now() - t0);
    }
    // The pass must still be running when the last append returns, or the appends did not all run beside it.
    const overlapped = pass !== null && !passDone;
    const cleaned = pass === null ? false : ((await pass) as { outcome: string }).outcome === 'cleaned' && overlapped;
    latencies.sort((a, b) => a - b);
    return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), cleaned };
  } finally {
    await manager.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(options: BenchOptions): Promise<void> {
  const dataMiB = options.quick ? 8 : Number(process.env['SEGLOG_BENCH_COMPACTION_MIB'] ?? 256);
  const dataBytes = dataMiB * MiB;
  const base = mkdtempSync(path.join(process.env['SEGLOG_BENCH_DIR'] ?? os.tmpdir(), 'seglog-bench-compaction-'));
  try {
    // SEGLOG_BENCH_COMPACTION_PART=latency runs part 2 alone (e.g. under node --cpu-prof); =throughput part 1 alone.
    const part = process.env['SEGLOG_BENCH_COMPACTION_PART'] ?? 'all';
    const shares = [0.1, 0.5, 0.9];
    const samples = shares.map(() => [] as CleanSample[]);
    for (let round = 0; part !== 'latency' && round < options.runs; round++) {
      const order = round % 2 === 0 ? [0, 1, 2] : [2, 1, 0];
      for (const i of order) samples[i]!.push(await cleanOnce(base, dataBytes, shares[i]!, options.quick, 11 + round));
    }
    console.log(`cleaning: ${dataMiB} MiB of 100 B-1 KiB records, batches of ${RECORDS_PER_BATCH}, one pass, compute ${computeMode()} (medians of ${options.runs})`);
    let checksum = 0;
    const rows: string[][] = [['duplicates', 'cleaned MB/s', 'peak heap+external (main)', 'peak RSS growth', 'saved', 'records kept']];
    shares.forEach((share, i) => {
      const s = samples[i]!;
      for (const x of s) checksum = (checksum + x.kept) >>> 0;
      rows.push([`${share * 100} %`, fmtMBps(median(s.map((x) => x.mbps))), `${(median(s.map((x) => x.peakBytes)) / MiB).toFixed(1)} MiB`,
        `${(median(s.map((x) => x.peakRssBytes)) / MiB).toFixed(1)} MiB`,
        `${(median(s.map((x) => x.savedBytes)) / MiB).toFixed(1)} MiB`, String(median(s.map((x) => x.kept)))]);
    });
    if (part !== 'latency') printTable(rows);
    if (part === 'throughput') return;
    const appends = options.quick ? 200 : Number(process.env['SEGLOG_BENCH_COMPACTION_APPENDS'] ?? 20000);
    const latencyMiB = options.quick ? 4 : Math.min(dataMiB, 128);
    const idle: Array<{ p50: number; p99: number }> = [];
    const busy: Array<{ p50: number; p99: number; cleaned: boolean }> = [];
    for (let round = 0; round < options.runs; round++) {
      if (round % 2 === 0) {
        idle.push(await appendLatency(base, latencyMiB * MiB, appends, false, options.quick));
        busy.push(await appendLatency(base, latencyMiB * MiB, appends, true, options.quick));
      } else {
        busy.push(await appendLatency(base, latencyMiB * MiB, appends, true, options.quick));
        idle.push(await appendLatency(base, latencyMiB * MiB, appends, false, options.quick));
      }
    }
    const p50Idle = median(idle.map((x) => x.p50));
    const p99Idle = median(idle.map((x) => x.p99));
    const p50Busy = median(busy.map((x) => x.p50));
    const p99Busy = median(busy.map((x) => x.p99));
    const bpsNote = process.env['SEGLOG_BENCH_COMPACTION_BPS'] === undefined ? '' : `, cleaner limited to ${process.env['SEGLOG_BENCH_COMPACTION_BPS']} B/s`;
    console.log(`\ncaller appends of 512 B to another log of the same LogManager: ${appends} per round, cleaning ${latencyMiB} MiB (50 % duplicates, compute ${computeMode()}) concurrently or not${bpsNote}`);
    printTable([
      ['case', 'p50 µs', 'p99 µs', 'p99 ratio'],
      ['idle (baseline)', (p50Idle * 1000).toFixed(1), (p99Idle * 1000).toFixed(1), '1.00'],
      ['cleaning', (p50Busy * 1000).toFixed(1), (p99Busy * 1000).toFixed(1), (p99Busy / p99Idle).toFixed(2)],
    ]);
    console.log(`rounds whose pass cleaned and was still running at the last append: ${busy.filter((x) => x.cleaned).length}/${busy.length}; checksum ${checksum}`);
    console.log('(shared, busy machine: compare the ratios within this run)');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}
