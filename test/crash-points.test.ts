// Crash-point enumeration of the Log on SimIo (reliability.md §3.5, §3.6).
//
// The workload of test/lib/crash-workload.ts (appends across 1 KiB segments,
// durable waits, flush, rolls, leader-epoch checkpoints, deleteRecords and
// deleteOldSegments, a clean close and reopen) is run once to count its crash
// points N; then for every k in 1..N it is run again halting at k, and the
// halted machine is recovered under every variant (variantsFor: process
// crash, clean power loss, chaotic power loss with PSOW on and off, ordered
// power loss; seeds differ per crash point). Each recovered disk
// is opened twice: with checkpoints (recovery point = the highest
// durableOffset the log reported, log start = the checkpointed one) and
// without (recovery point 0, log start 0: a full rescan). After each open:
//
// - the pass criteria (test/lib/log-checker.ts): every acknowledged-durable
//   record intact byte for byte (for a process crash: every written one), a
//   gap-free prefix of the appends, CRCs, reads through the indexes equal to
//   a linear scan, offsetForTimestamp, leader epochs, no leftover files;
// - crash during recovery (some variants, with checkpoints): for each crash
//   point of the open itself (up to RECOVERY_CRASHES), crash there, recover
//   with a process crash and open again: the log must look exactly as after
//   the uncrashed recovery;
// - idempotence: a process crash right after the open and a second open give
//   the identical contents and positions;
// - a second life (with checkpoints): two appends at the recovered end, a durable wait, then a
//   clean power loss and a third open with the new recovery point: the new
//   acknowledged records must be there (this catches recovery trusting
//   page-cache state it never synced), the indexes on disk after close agree
//   with the scan, and no handle is left open.
//
// Non-PSOW chaotic power loss may damage durable bytes that share a sector
// with a torn write (reliability.md §2.4). There the only requirement is
// that the damage is detected: open() with the recovery point either passes
// every check or fails with SEGLOG_ERR_LOG_CORRUPTION (counted and printed).
// Without a recovery point nothing can tell damage from a torn tail, so
// non-PSOW variants are opened with checkpoints only.
//
// Replay one case: SEGLOG_CRASH_ONLY=<k>:<variant> (e.g. 57:chaotic-1); every
// failure prints its line. More seeds (nightly): SEGLOG_CRASH_SEEDS=<n>
// chaotic seeds per crash point and PSOW setting (default 2).

import { writeFileSync } from 'node:fs';
import { SimIo } from '@seglog/io';
import type { CrashMode } from '@seglog/io';
import type { Log } from '@seglog/log';
import { describe, expect, it } from 'vitest';
import { CrashWorkload, DIR, Ledger, openLog } from './lib/crash-workload.js';
import { producerBatchAt, recordCountAt } from './lib/expected-log.js';
import { CheckFailure, checkIndexFiles, checkRecoveredLog, compareSnapshots, scanSegments } from './lib/log-checker.js';
import type { LogSnapshot } from './lib/log-checker.js';
import { checkProducerRetries, ProducerStartWorkload } from './lib/producer-start-workload.js';
import { checkTransactions, TxnLedger } from './lib/reliability-txn-workload.js';

interface Variant {
  readonly name: string;
  readonly mode: CrashMode;
  readonly seed: number;
  readonly psow: boolean;
  /** Also crash at every crash point of the recovery itself. */
  readonly recoveryCrashes: boolean;
}

/** Chaotic power-loss seeds per crash point and PSOW setting (CI 2; nightly e.g. SEGLOG_CRASH_SEEDS=16). */
const CHAOTIC_SEEDS = Number(process.env['SEGLOG_CRASH_SEEDS'] ?? '2');
/** Crash points of the recovery itself explored per case (the open and its background checkpoint write). */
const RECOVERY_CRASHES = 4;

/**
 * The variants explored at crash point k. Chaotic and ordered power loss get
 * seeds that differ per crash point (seed = 1000·k + i), so the whole run
 * covers N × CHAOTIC_SEEDS different chaotic outcomes rather than the same
 * few seeds N times.
 */
function variantsFor(k: number): Variant[] {
  const seed = (i: number): number => 1000 * k + i;
  return [
    { name: 'process', mode: 'process', seed: 1, psow: true, recoveryCrashes: true },
    { name: 'power-clean', mode: 'power-clean', seed: 1, psow: true, recoveryCrashes: true },
    ...Array.from({ length: CHAOTIC_SEEDS }, (_, i): Variant => ({ name: `chaotic-${i}`, mode: 'power-chaotic', seed: seed(i), psow: true, recoveryCrashes: i === 0 })),
    { name: 'ordered', mode: 'power-ordered', seed: seed(100), psow: true, recoveryCrashes: false },
    ...Array.from({ length: CHAOTIC_SEEDS }, (_, i): Variant => ({ name: `chaotic-nopsow-${i}`, mode: 'power-chaotic', seed: seed(200 + i), psow: false, recoveryCrashes: i === 0 })),
  ];
}

/** Epoch of the second-life appends: above every epoch the workload uses. */
const SECOND_LIFE_EPOCH = 9;

async function runWorkload(psow: boolean, crashAt: number | undefined): Promise<{ io: SimIo; ledger: Ledger; outcome: 'completed' | 'crashed' }> {
  // Setup (mkdir, fsyncDir) takes crash points 1 and 2; the workload's k-th is 2 + k.
  const io = new SimIo({ seed: 1, powersafeOverwrite: psow, sectorBytes: 512, ...(crashAt === undefined ? {} : { crashAt: crashAt + 2 }) });
  await io.mkdir('/data');
  await io.fsyncDir('/');
  const ledger = new Ledger();
  const outcome = await new CrashWorkload(io, ledger).run();
  return { io, ledger, outcome };
}

interface Counters {
  recoveries: number;
  opens: number;
  recoveryCrashes: number;
  detectedCorruption: number;
}

function isCorruption(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'SEGLOG_ERR_LOG_CORRUPTION';
}

async function openChecked(io: SimIo, options: { recoveryPoint: number; logStartOffset: number }, counters: Counters): Promise<Log> {
  counters.opens++;
  try {
    return await openLog(io, { ...options, hadCleanShutdown: false });
  } catch (error) {
    if (isCorruption(error)) throw error;
    throw new CheckFailure('open', `open(recoveryPoint ${options.recoveryPoint}, logStartOffset ${options.logStartOffset}) failed: ${(error as Error).stack ?? String(error)}`);
  }
}

/** One recovered disk, one choice of checkpoints: every check of the header comment. */
async function recoverAndCheck(halted: SimIo, ledger: Ledger, variant: Variant, checkpoints: boolean, counters: Counters): Promise<'ok' | 'detected'> {
  const processCrash = variant.mode === 'process';
  const expect1 = ledger.expectation({ checkpoints, processCrash });
  const options = checkpoints
    ? { recoveryPoint: ledger.claimedDurable, logStartOffset: ledger.checkpointLogStart }
    : { recoveryPoint: 0, logStartOffset: 0 };
  const io1 = halted.recover(variant.mode, { seed: variant.seed });
  counters.recoveries++;
  let log1: Log;
  try {
    log1 = await openChecked(io1, options, counters);
  } catch (error) {
    if (isCorruption(error) && !variant.psow) {
      counters.detectedCorruption++;
      if (io1.openHandles().length > 0) throw new CheckFailure('hygiene', `handles left open after a failed open: ${io1.openHandles().join(', ')}`);
      return 'detected';
    }
    if (isCorruption(error)) throw new CheckFailure('durability', `open reported corruption: ${(error as Error).message}`);
    throw error;
  }
  const recoveryPoints = io1.crashPoints;
  const snap1 = await checkRecoveredLog(io1, log1, expect1);

  if (variant.recoveryCrashes && checkpoints) {
    // The open's crash points include the background leader-epoch checkpoint
    // write it starts, so a crash there may come after open() resolved.
    for (let j = 1; j <= Math.min(recoveryPoints, RECOVERY_CRASHES); j++) {
      const crashed = halted.recover(variant.mode, { seed: variant.seed, crashAt: j });
      const opened = await openLog(crashed, { ...options, hadCleanShutdown: false }).catch(() => null);
      if (!crashed.halted) throw new CheckFailure('idempotence', `open did not reach its crash point ${j} of ${recoveryPoints}`);
      await opened?.close().catch(() => undefined);
      const again = crashed.recover('process');
      const logJ = await openChecked(again, options, counters);
      const snapJ = await checkRecoveredLog(again, logJ, expect1, { reads: false }).catch((e: unknown) => {
        throw new CheckFailure('idempotence', `after a crash at point ${j} of the recovery: ${(e as Error).message}`);
      });
      compareWith(snap1, snapJ, `recovery crashed at its point ${j}`);
      await logJ.close();
      counters.recoveryCrashes++;
    }
  }

  // Idempotence: process crash right after the open, open again.
  const io2 = io1.recover('process');
  const log2 = await openChecked(io2, options, counters);
  const snap2 = await checkRecoveredLog(io2, log2, expect1, { reads: false });
  compareWith(snap1, snap2, 'a process crash right after the open');
  if (!checkpoints) {
    await log2.close();
    if (io2.openHandles().length > 0) throw new CheckFailure('hygiene', `handles left open after close: ${io2.openHandles().join(', ')}`);
    return 'ok';
  }

  // Second life: append, wait for durable, lose power, open with the new recovery point.
  const overrides = new Map<number, number>();
  let end = log2.logEndOffset;
  for (let i = 0; i < 2; i++) {
    const base = end;
    overrides.set(base, SECOND_LIFE_EPOCH);
    const result = await log2.appendAsLeader(producerBatchAt(base), { leaderEpoch: SECOND_LIFE_EPOCH });
    if (result.firstOffset !== base) throw new CheckFailure('liveness', `append after recovery got ${result.firstOffset}, expected ${base}`);
    end = base + recordCountAt(base);
  }
  await log2.durable(end - 1);
  const durable2 = log2.durableOffset;
  const start2 = log2.logStartOffset;
  const io3 = io2.recover('power-clean');
  const log3 = await openChecked(io3, { recoveryPoint: durable2, logStartOffset: start2 }, counters).catch((e: unknown) => {
    throw new CheckFailure('second-life', `after appends + durable(${end - 1}) on the recovered log and a power loss, open failed: ${(e as Error).message}`);
  });
  const expect3 = {
    ...ledger.expectation({ checkpoints, processCrash: false, epochOverrides: overrides }),
    attemptedEnd: Math.max(ledger.next, end),
    durable: end,
    logStartMin: start2,
    logStartMax: start2,
  };
  const snap3 = await checkRecoveredLog(io3, log3, expect3).catch((e: unknown) => {
    throw new CheckFailure('second-life', `after appends + durable(${end - 1}) on the recovered log and a power loss: ${(e as Error).message}`);
  });
  await log3.close();
  await checkIndexFiles(io3, DIR, snap3.segments);
  if (io3.openHandles().length > 0) throw new CheckFailure('hygiene', `handles left open after close: ${io3.openHandles().join(', ')}`);
  return 'ok';
}

function compareWith(a: LogSnapshot, b: LogSnapshot, what: string): void {
  try {
    compareSnapshots(a, b);
  } catch (error) {
    throw new CheckFailure('idempotence', `after ${what}: ${(error as Error).message}`);
  }
}

function parseOnly(): { k: number; variant: string } | null {
  const only = process.env['SEGLOG_CRASH_ONLY'];
  if (only === undefined || only === '') return null;
  const [k, variant] = only.split(':');
  return { k: Number(k), variant: variant ?? '' };
}

describe('Log crash points on SimIo', () => {
  it('every crash point of the workload × process / power-clean / power-chaotic / power-ordered (PSOW on and off)', async () => {
    const started = Date.now();
    const counting = await runWorkload(true, undefined);
    expect(counting.outcome).toBe('completed');
    expect(counting.ledger.problems).toEqual([]);
    const total = counting.io.crashPoints - 2;
    const countingNoPsow = await runWorkload(false, undefined);
    expect(countingNoPsow.io.crashPoints - 2).toBe(total); // the workload is deterministic
    expect(total).toBeGreaterThan(100);

    const only = parseOnly();
    const counters: Counters = { recoveries: 0, opens: 0, recoveryCrashes: 0, detectedCorruption: 0 };
    const failures: string[] = [];
    let cases = 0;
    for (let k = 1; k <= total; k++) {
      if (only !== null && only.k !== k) continue;
      const runs = new Map<boolean, Awaited<ReturnType<typeof runWorkload>>>();
      for (const psow of [true, false]) {
        const run = await runWorkload(psow, k);
        if (run.outcome !== 'crashed') failures.push(`k=${k} psow=${psow}: the workload did not halt at crash point ${k}`);
        if (run.ledger.problems.length > 0) failures.push(`k=${k}: ${run.ledger.problems.join('; ')}`);
        runs.set(psow, run);
      }
      for (const variant of variantsFor(k)) {
        if (only !== null && only.variant !== '' && only.variant !== variant.name) continue;
        const run = runs.get(variant.psow)!;
        for (const checkpoints of variant.psow ? [true, false] : [true]) {
          cases++;
          try {
            await recoverAndCheck(run.io, run.ledger, variant, checkpoints, counters);
          } catch (error) {
            const message = error instanceof CheckFailure ? error.message : (error as Error).stack ?? String(error);
            failures.push(`k=${k} variant=${variant.name} (mode ${variant.mode}, seed ${variant.seed}, psow ${variant.psow}) ` +
              `checkpoints=${checkpoints} after steps [${run.ledger.steps.join(' > ')}]: ${message}\n` +
              `  replay: SEGLOG_CRASH_ONLY=${k}:${variant.name} npx vitest run test/crash-points`);
          }
        }
      }
    }
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const variants = variantsFor(0);
    console.log(`crash points: ${total} × ${variants.length} variants (${variants.map((v) => v.name).join(', ')}) = ${cases} recovered cases ` +
      `(checkpointed and full-rescan opens; ${counters.opens} opens, ${counters.recoveryCrashes} crashes inside recovery, ` +
      `${counters.detectedCorruption} non-PSOW cases detected as SEGLOG_ERR_LOG_CORRUPTION) in ${seconds} s; workload seed 1, ` +
      `power-loss seeds 1000·k + i (i = 0..${CHAOTIC_SEEDS - 1} chaotic, 100 ordered, 200.. chaotic non-PSOW)`);
    const dumpTo = process.env['SEGLOG_CRASH_FAILURES_FILE'];
    if (dumpTo !== undefined && dumpTo !== '') writeFileSync(dumpTo, failures.join('\n'));
    if (failures.length > 0) {
      // Group by rule and message shape (numbers elided), so a new kind of failure stands out beside known ones.
      const kinds = new Map<string, { count: number; first: string }>();
      for (const failure of failures) {
        const kind = (/\]: (\[[a-z-]+\][^\n]*)/.exec(failure)?.[1] ?? failure.split('\n')[0]!).replace(/\d+/g, 'N').slice(0, 160);
        const entry = kinds.get(kind) ?? { count: 0, first: failure };
        entry.count++;
        kinds.set(kind, entry);
      }
      console.log(`${failures.length} failures in ${kinds.size} kinds:\n` +
        [...kinds].map(([kind, { count, first }]) => `  ${count} × ${kind}\n    first: ${first.replace(/\n/g, '\n    ')}`).join('\n'));
    }
    expect(failures.slice(0, 5)).toEqual([]);
  });
});

/** The producer-start workload halted at crash point k (none: run to the end). */
async function runProducerStart(crashAt: number | undefined): Promise<{ io: SimIo; ledger: TxnLedger; outcome: 'completed' | 'crashed' }> {
  const io = new SimIo({ seed: 1, powersafeOverwrite: true, sectorBytes: 512, ...(crashAt === undefined ? {} : { crashAt: crashAt + 2 }) });
  await io.mkdir('/data');
  await io.fsyncDir('/');
  const ledger = new TxnLedger();
  const outcome = await new ProducerStartWorkload(io, ledger).run();
  return { io, ledger, outcome };
}

describe('Log crash points with the log start inside a segment (issue 23 item 1)', () => {
  // Every crash point of test/lib/producer-start-workload.ts × {process crash, clean power loss} × {recovery
  // point = the highest reported durable offset, recovery point 0 (below the log start: a recovery-point
  // checkpoint older than the log-start one)}, opened unclean with the checkpointed log start, then closed and
  // reopened clean. After each open: the durability checks of the main enumeration, read_committed against a
  // replay (LSO, aborted transactions), and a retry of every recovered producer batch in its dedup window,
  // answered with its original offsets. Bounded: about 4 × the workload's crash points (≈ 100) opens × 2.
  it('idempotent and transactional producers: retries are duplicates with their original offsets, transactions survive', async () => {
    const started = Date.now();
    const counting = await runProducerStart(undefined);
    expect(counting.outcome).toBe('completed');
    expect(counting.ledger.problems).toEqual([]);
    const total = counting.io.crashPoints - 2;
    expect(total).toBeGreaterThan(30);
    expect(total).toBeLessThan(400); // keeps the case count bounded
    const violations: string[] = [];
    let cases = 0;
    let retries = 0;
    let belowLogStart = 0;
    for (let k = 1; k <= total; k++) {
      const run = await runProducerStart(k);
      if (run.outcome !== 'crashed') violations.push(`k=${k}: the workload did not halt`);
      if (run.ledger.problems.length > 0) violations.push(`k=${k}: ${run.ledger.problems.join('; ')}`);
      for (const mode of ['process', 'power-clean'] as const) {
        for (const recoveryPoint of [run.ledger.claimedDurable, 0]) {
          cases++;
          const where = `k=${k} ${mode} recoveryPoint=${recoveryPoint} logStart=${run.ledger.checkpointLogStart} after [${run.ledger.steps.join(' > ')}]`;
          const io = run.io.recover(mode, { seed: k });
          let log: Log | null = null;
          try {
            log = await openLog(io, { recoveryPoint, logStartOffset: run.ledger.checkpointLogStart, hadCleanShutdown: false });
            const snapshot = await checkRecoveredLog(io, log, run.ledger.expectation({ checkpoints: true, processCrash: mode === 'process' }));
            await checkTransactions(log, snapshot, run.ledger);
            retries += await checkProducerRetries(log, snapshot, run.ledger);
            const first = snapshot.segments.flatMap((s) => s.batches)[0];
            if (first !== undefined && first.baseOffset < log.logStartOffset && run.ledger.produced.get(first.baseOffset)?.producerId === 1) belowLogStart++;
            await log.close();
            log = await openLog(io, { recoveryPoint: log.logEndOffset, logStartOffset: log.logStartOffset, hadCleanShutdown: true });
            retries += await checkProducerRetries(log, snapshot, run.ledger);
            await log.close();
            log = null;
          } catch (error) {
            violations.push(`${where}: ${error instanceof CheckFailure ? error.message : (error as Error).stack ?? String(error)}`);
            await log?.close().catch(() => undefined);
          }
        }
      }
    }
    console.log(`log start inside a segment: ${total} crash points × 2 modes × 2 recovery points = ${cases} cases, ` +
      `${retries} duplicate retries checked (${belowLogStart} cases with producer 1's batch below the log start), ` +
      `${violations.length} violations in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    expect(belowLogStart).toBeGreaterThan(0);
    expect(violations.slice(0, 5)).toEqual([]);
    expect(violations.length).toBe(0);
  });
});

describe('crash-point harness canary', () => {
  it('catches a lying fsync: the checker reports lost acknowledged records (reliability.md §3.3 mode 5)', async () => {
    // fdatasync of .log files succeeds but persists nothing: every durable()
    // the workload saw resolve is a lie, and after a power loss the checker
    // must say so. If this test fails, the harness cannot see data loss.
    const io = new SimIo({ seed: 1 });
    await io.mkdir('/data');
    await io.fsyncDir('/');
    io.setFaults({ lyingSync: { nth: 1, persistent: true, path: /\.log$/ } });
    const ledger = new Ledger();
    expect(await new CrashWorkload(io, ledger).run()).toBe('completed');
    expect(ledger.acked).toBeGreaterThan(0);
    const crashed = io.recover('power-clean', { seed: 1 });
    const log = await openLog(crashed, { recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: false });
    const failure = await checkRecoveredLog(crashed, log, ledger.expectation({ checkpoints: false, processCrash: false })).then(() => null, (e: unknown) => e);
    expect(failure).toBeInstanceOf(CheckFailure);
    expect((failure as CheckFailure).rule).toBe('durability');
    await log.close();
  });
});

// ---------------------------------------------------------------------------
// ENGINE BUGS found by the enumeration above. Each test below is a minimal,
// deterministic replay of one kind of failure it reports; each FAILS until
// packages/log is fixed (the fix belongs to the log package's owners).
// ---------------------------------------------------------------------------

async function freshMachine(options: { crashWhen?: (op: string, path: string) => boolean } = {}): Promise<SimIo> {
  const crashWhen = options.crashWhen;
  const io = new SimIo({ seed: 1, ...(crashWhen === undefined ? {} : { onCrashPoint: (p) => crashWhen(p.op, p.path) }) });
  await io.mkdir('/data');
  await io.fsyncDir('/');
  return io;
}

/** Appends the expected-log batches at the log end until `count` batches went in; returns the last offset. */
async function appendBatches(log: Log, count: number, epoch: number, ledger: Ledger): Promise<number> {
  let last = -1;
  for (let i = 0; i < count; i++) {
    const base = log.logEndOffset;
    ledger.epochs.set(base, epoch);
    const result = await log.appendAsLeader(producerBatchAt(base), { leaderEpoch: epoch });
    last = result.lastOffset;
    ledger.next = last + 1;
  }
  return last;
}

describe('ENGINE BUGS found by the crash-point enumeration (regressions: each failed until its fix in packages/log)', () => {
  it('ENGINE BUG 1: a partition directory left by a crash is never made durable, so records acknowledged after recovery vanish on power loss', async () => {
    // Crash (kill -9) right after Log.open's mkdir, before the parent fsync:
    // the directory exists in the page cache only. The next open sees it and
    // skips the parent fsync; its segment files are created, synced and
    // fsyncDir'd inside the directory, so durable() resolves — but the
    // directory's own entry in /data is still not durable.
    // The enumeration reports it as "[second-life] ... the log ends below the
    // recovery point" at the crash point of that parent fsync (process crash).
    const io = await freshMachine({ crashWhen: (op, path) => op === 'fsyncDir' && path === '/data' });
    await expect(openLog(io, { recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: false })).rejects.toMatchObject({ code: 'SEGLOG_ERR_IO_CRASHED' });
    const afterKill = io.recover('process');
    const log = await openLog(afterKill, { recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: false });
    const ledger = new Ledger();
    const last = await appendBatches(log, 2, 0, ledger);
    await log.durable(last);
    ledger.ack(last + 1);
    const recoveryPoint = log.durableOffset;
    const afterPowerLoss = afterKill.recover('power-clean');
    const reopened = await openLog(afterPowerLoss, { recoveryPoint, logStartOffset: 0, hadCleanShutdown: false });
    await checkRecoveredLog(afterPowerLoss, reopened, ledger.expectation({ checkpoints: true, processCrash: false }));
    await reopened.close();
  });

  it('ENGINE BUG 2: indexes rebuilt by recovery are never synced when the segment is sealed without new data; after a power loss the damaged index is trusted', async () => {
    // Segment 0's .log is durable but its .index holds garbage a torn write
    // can leave (here: an entry pointing into the middle of a batch). The
    // first recovery rebuilds the index (segment 0 holds the recovery
    // point), in memory and in the page cache only. forceRoll then seals
    // segment 0; the flush covers only offsets above the recovery point, so
    // segment 0's rebuilt index is never fdatasynced. A power loss brings the
    // garbage back, and the next open trusts it: segment 0 is now below the
    // recovery point and the garbage passes the sanity check.
    // The enumeration reports it (with zeroed entries from dropped index
    // writes instead of a mid-batch one) as "[index] ... entry N (N, N) does
    // not name a batch start" after the second life, chaotic power loss.
    const io = await freshMachine();
    const ledger = new Ledger();
    const log = await openLog(io, { recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: false });
    const last = await appendBatches(log, 5, 0, ledger);
    await log.durable(last);
    ledger.ack(last + 1);
    const [segment0] = await scanSegments(io, DIR, [0]);
    const batches = segment0!.batches;
    expect(batches.length).toBe(5);
    const durable = log.durableOffset;
    const crashed = io.recover('power-clean');
    // The damaged index, made durable as a torn sector would be: three increasing entries, the middle one 20 bytes into batch 2.
    const garbage = Buffer.alloc(24);
    const entries: Array<[number, number]> = [[batches[0]!.lastOffset, batches[0]!.position], [batches[2]!.baseOffset, batches[2]!.position + 20], [batches[4]!.lastOffset, batches[4]!.position]];
    entries.forEach(([offset, position], i) => {
      garbage.writeInt32BE(offset, i * 8);
      garbage.writeInt32BE(position, i * 8 + 4);
    });
    const index = await crashed.open(`${DIR}/00000000000000000000.index`, { create: true });
    await index.truncate(0);
    await index.pwrite(garbage, 0);
    await index.fdatasync();
    await index.close();
    await crashed.fsyncDir(DIR);
    const recovered = await openLog(crashed, { recoveryPoint: durable, logStartOffset: 0, hadCleanShutdown: false });
    await checkRecoveredLog(crashed, recovered, ledger.expectation({ checkpoints: true, processCrash: false })); // passes: rebuilt
    await recovered.forceRoll();
    const more = await appendBatches(recovered, 1, 0, ledger);
    await recovered.durable(more);
    ledger.ack(more + 1);
    const recoveryPoint = recovered.durableOffset;
    const again = crashed.recover('power-clean');
    const reopened = await openLog(again, { recoveryPoint, logStartOffset: 0, hadCleanShutdown: false });
    const snapshot = await checkRecoveredLog(again, reopened, ledger.expectation({ checkpoints: true, processCrash: false }));
    await reopened.close();
    await checkIndexFiles(again, DIR, snapshot.segments);
  });

  it('ENGINE BUG 2b: a segment sealed after its data was durable never has its indexes synced; chaotic power loss leaves index garbage that open() and read() trust', async () => {
    // Append, durable(): the .log is synced, the active segment's indexes
    // are not (by design: recovery rebuilds from the recovery point). Then
    // forceRoll seals segment 0 — but the flush it requests covers nothing
    // (durable already equals the new base), so "the flush that first covers
    // a sealed segment syncs its indexes" never happens. Segment 0 is now
    // below the recovery point, so the next open trusts whatever a power loss
    // left of its never-synced index files: zeroed entries (PSOW) or random
    // sectors (non-PSOW) — wrong reads, "malformed batch header" on durable
    // records, or an AssertionError (pread at a negative position) in open().
    // The enumeration reports this as [index]/[time-index] entry mismatches,
    // [index] read(...) failures and "[open] ... AssertionError".
    const problems: string[] = [];
    for (const psow of [true, false]) {
      for (let seed = 1; seed <= 24; seed++) {
        const io = new SimIo({ seed: 1, powersafeOverwrite: psow });
        await io.mkdir('/data');
        await io.fsyncDir('/');
        const ledger = new Ledger();
        const log = await openLog(io, { recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: false });
        const first = await appendBatches(log, 5, 0, ledger);
        await log.durable(first);
        await log.forceRoll();
        const last = await appendBatches(log, 1, 0, ledger);
        await log.durable(last);
        ledger.ack(last + 1);
        const recoveryPoint = log.durableOffset;
        const crashed = io.recover('power-chaotic', { seed });
        try {
          const reopened = await openLog(crashed, { recoveryPoint, logStartOffset: 0, hadCleanShutdown: false });
          const snapshot = await checkRecoveredLog(crashed, reopened, ledger.expectation({ checkpoints: true, processCrash: false }));
          await reopened.close();
          await checkIndexFiles(crashed, DIR, snapshot.segments);
        } catch (error) {
          problems.push(`psow ${psow} power-chaotic seed ${seed}: ${(error as Error).message.split('\n')[0]}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('ENGINE BUG 3: a segment whose last (unsynced) write was lost, followed by a newer segment file, leaves a gap in the offsets', async () => {
    // Power loss can drop the last append to segment 0 (its size never
    // grew: nothing is torn, nothing to cut) while the next segment's file
    // survives (another inode, its directory entry committed). Recovery
    // deletes later segments only when it cut bytes, so the later segment
    // stays and the log end offset jumps over the lost batch: offsets
    // [lost batch] are missing, later appends continue after the hole.
    // Modelled here as a process crash plus the lost write (the .log cut at
    // the last batch boundary). The enumeration reports it as "[prefix] gap"
    // (chaotic power loss during the first appends after the clean reopen).
    const io = await freshMachine();
    const ledger = new Ledger();
    const log = await openLog(io, { recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: false });
    const acked = await appendBatches(log, 3, 0, ledger);
    await log.durable(acked);
    ledger.ack(acked + 1);
    const recoveryPoint = log.durableOffset;
    await appendBatches(log, 1, 0, ledger); // the write that will be lost
    await log.forceRoll();
    await appendBatches(log, 1, 0, ledger);
    await log.written(log.logEndOffset - 1);
    const crashed = io.recover('process');
    const [segment0] = await scanSegments(crashed, DIR, [0]);
    const lost = segment0!.batches[3]!;
    const file = await crashed.open(`${DIR}/00000000000000000000.log`);
    await file.truncate(lost.position);
    await file.close();
    const reopened = await openLog(crashed, { recoveryPoint, logStartOffset: 0, hadCleanShutdown: false });
    await checkRecoveredLog(crashed, reopened, ledger.expectation({ checkpoints: true, processCrash: false }));
    await reopened.close();
  });
  it('ENGINE BUG 4: an index entry with a negative position (a damaged sector) reaches pread as an AssertionError in open() instead of a rebuild or a typed error', async () => {
    // reliability.md §4.3: index entries are untrusted input (validate:
    // monotonic, within the segment, at a batch boundary). The sanity check
    // catches an entry past the file but not a negative position, so
    // Segment.loadState preads at it and a programmer-error assertion fires.
    // Seen by the enumeration (non-PSOW chaotic power loss) as
    // "[open] ... AssertionError: pread: position must be a non-negative safe integer".
    const io = await freshMachine();
    const ledger = new Ledger();
    const log = await openLog(io, { recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: false });
    await appendBatches(log, 5, 0, ledger);
    await log.forceRoll();
    await appendBatches(log, 1, 0, ledger);
    ledger.ack(log.logEndOffset);
    await log.close();
    const [segment0] = await scanSegments(io, DIR, [0]);
    const index = await io.open(`${DIR}/00000000000000000000.index`);
    const entry = Buffer.alloc(8);
    entry.writeInt32BE(segment0!.batches[4]!.lastOffset, 0);
    entry.writeInt32BE(-1234, 4); // the last entry: offset fine, position negative
    await index.pwrite(entry, (await index.size()) - 8);
    await index.fdatasync();
    await index.close();
    const opened = await openLog(io, { recoveryPoint: log.logEndOffset, logStartOffset: 0, hadCleanShutdown: true }).then(
      (reopened) => ({ reopened, error: null }),
      (error: unknown) => ({ reopened: null, error }),
    );
    if (opened.reopened === null) {
      // A typed refusal is acceptable; an assertion (a programmer error) is not.
      expect((opened.error as Error).name).not.toBe('AssertionError');
      expect(String((opened.error as { code?: unknown }).code)).toMatch(/^SEGLOG_ERR_/);
      return;
    }
    await checkRecoveredLog(io, opened.reopened, ledger.expectation({ checkpoints: true, processCrash: false }));
    await opened.reopened.close();
  });
});
