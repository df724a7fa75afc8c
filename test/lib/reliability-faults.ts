// Fault schedules (reliability.md §3.4, SQLite's do_ioerr_test): the basic
// crash workload (crash-workload.ts) is run with the n-th matching I/O call
// failing, for n = 1, 2, … until a run completes without the fault firing;
// persistent (every call from the n-th on) and transient (only the n-th).
// Also ENOSPC quotas stepped up until the workload fits, short writes
// (absorbed: the run must complete and pass), zero-progress writes, and a
// lying fsync that the checker must catch (the harness canary).
//
// Per run:
// - an error reaches the caller exactly when a fault was injected
//   (SimIo.injected), and it is typed (SEGLOG_ERR_*);
// - after the failure the log is offline: durable() and appends reject with
//   SEGLOG_ERR_LOG_OFFLINE — nothing is acknowledged after the failure;
//   except a retriable SEGLOG_ERR_LOG_RESOURCE_UNAVAILABLE (ENOSPC creating
//   a roll's segment, before any byte of a batch was at risk): the log stays
//   open and nothing was acknowledged for the refused call;
// - a fresh view of the machine (recover 'process': the page cache kept;
//   and 'power-clean': only what was synced) opens with the checkpoints the
//   ledger holds and passes the crash checker: no acknowledged-durable record
//   lost, a gap-free prefix, indexes, epochs, no handle left open.

import type { FaultKind, SimFaults, SimIo } from '@seglog/io';
import { CrashWorkload, Ledger, openLog } from './crash-workload.js';
import { CheckFailure, checkRecoveredLog } from './log-checker.js';
import { producerBatchAt } from './expected-log.js';
import { codeOf, isTyped, newMachine } from './reliability-fixture.js';

export interface Schedule {
  readonly name: string;
  readonly kind: FaultKind;
  /** The faults of run n (1-based). */
  faults(n: number): SimFaults;
  /** The fault is absorbed by the engine (short writes): the run must complete. */
  readonly absorbed?: boolean;
}

const rule = (n: number, persistent: boolean) => ({ nth: n, persistent, path: '/data/' });

export const SCHEDULES: readonly Schedule[] = [
  { name: 'write EIO, persistent', kind: 'writeEio', faults: (n) => ({ writeEio: rule(n, true) }) },
  { name: 'write EIO, transient', kind: 'writeEio', faults: (n) => ({ writeEio: rule(n, false) }) },
  { name: 'sync EIO, persistent', kind: 'syncEio', faults: (n) => ({ syncEio: rule(n, true) }) },
  { name: 'sync EIO, transient', kind: 'syncEio', faults: (n) => ({ syncEio: rule(n, false) }) },
  { name: 'zero-progress write', kind: 'zeroWrite', faults: (n) => ({ zeroWrite: rule(n, false) }) },
  { name: 'ENOSPC quota (n × 512 B)', kind: 'nospc', faults: (n) => ({ quotaBytes: (n - 1) * 512 }) },
  { name: 'short writes from the n-th', kind: 'shortWrite', faults: (n) => ({ shortWrite: rule(n, true) }), absorbed: true },
];

export interface FaultStats {
  readonly schedule: string;
  runs: number;
  faultedRuns: number;
  injected: number;
  completedAt: number | null;
  readonly violations: string[];
}

/**
 * A retriable refusal (out of space or descriptors before any byte of a
 * batch was at risk: a roll's new segment, a reservation) leaves the log
 * open; nothing was acknowledged for the refused call.
 */
async function checkRefusedOpen(workload: CrashWorkload, acked: number): Promise<void> {
  const log = workload.current;
  if (log === null || log.state === 'closed') return;
  if (log.state !== 'open') throw new CheckFailure('fail-stop', `after a retriable refusal the log is ${log.state}, not open`);
  if (workload.ledger.acked !== acked) throw new CheckFailure('fail-stop', 'an acknowledgement of the refused call');
  await log.close().catch(() => undefined);
}

async function checkOffline(workload: CrashWorkload): Promise<void> {
  const log = workload.current;
  if (log === null || log.state === 'closed') return;
  if (log.state !== 'offline') throw new CheckFailure('fail-stop', `after the failure the log is ${log.state}, not offline`);
  const acked = workload.ledger.acked;
  // Offsets already durable before the failure may still answer; the first one that is not must not.
  if (log.durableOffset < log.logEndOffset) {
    const waited = await log.durable(log.durableOffset).then(() => 'resolved', (e: unknown) => codeOf(e));
    if (waited !== 'SEGLOG_ERR_LOG_OFFLINE') throw new CheckFailure('fail-stop', `durable(${log.durableOffset}) (not durable before the failure) after the failure: ${waited}`);
  }
  const appended = await log.appendAsLeader(producerBatchAt(log.logEndOffset), { leaderEpoch: 9 }).then(() => 'resolved', (e: unknown) => codeOf(e));
  if (appended !== 'SEGLOG_ERR_LOG_OFFLINE') throw new CheckFailure('fail-stop', `append after the failure: ${appended}`);
  if (workload.ledger.acked !== acked) throw new CheckFailure('fail-stop', 'an acknowledgement after the failure');
  await log.close().catch(() => undefined);
}

async function reopenAndCheck(io: SimIo, ledger: Ledger): Promise<void> {
  for (const mode of ['process', 'power-clean'] as const) {
    const view = io.recover(mode);
    const log = await openLog(view, { recoveryPoint: ledger.claimedDurable, logStartOffset: ledger.checkpointLogStart, hadCleanShutdown: false }).catch((e: unknown) => {
      throw new CheckFailure('reopen', `open after the fault (${mode}) failed: ${codeOf(e)} ${(e as Error).message}`);
    });
    try {
      await checkRecoveredLog(view, log, ledger.expectation({ checkpoints: true, processCrash: mode === 'process' }));
    } catch (error) {
      throw error instanceof CheckFailure ? new CheckFailure(error.rule, `reopen (${mode}): ${error.message}`) : error;
    } finally {
      await log.close();
    }
    if (view.openHandles().length > 0) throw new CheckFailure('hygiene', `handles left open after close: ${view.openHandles().join(', ')}`);
  }
}

/** One run with the faults of step n. Returns whether the fault fired. */
export async function runFaulted(schedule: Schedule, n: number): Promise<{ injected: number; violation: string | null }> {
  const io = await newMachine();
  io.setFaults(schedule.faults(n));
  const ledger = new Ledger();
  const workload = new CrashWorkload(io, ledger);
  let error: unknown = null;
  try {
    await workload.run();
  } catch (caught) {
    error = caught;
  }
  const injected = io.injected[schedule.kind];
  try {
    if (injected === 0 || schedule.absorbed === true) {
      if (error !== null) throw new CheckFailure('error-iff-fault', `${injected === 0 ? 'no fault injected' : 'an absorbed fault'}, yet the run failed: ${codeOf(error)} ${(error as Error).message}`);
    } else {
      if (error === null) throw new CheckFailure('error-iff-fault', `${injected} fault(s) injected, yet the run completed without an error`);
      if (!isTyped(error)) throw new CheckFailure('typed', `untyped error: ${(error as Error).stack ?? String(error)}`);
      if (codeOf(error) === 'SEGLOG_ERR_LOG_RESOURCE_UNAVAILABLE') await checkRefusedOpen(workload, ledger.acked);
      else await checkOffline(workload);
    }
    if (ledger.problems.length > 0) throw new CheckFailure('offsets', ledger.problems.join('; '));
    await reopenAndCheck(io, ledger);
    return { injected, violation: null };
  } catch (failure) {
    const message = failure instanceof CheckFailure ? failure.message : (failure as Error).stack ?? String(failure);
    return { injected, violation: `${schedule.name}, n=${n} (after steps [${ledger.steps.join(' > ')}], error ${error === null ? 'none' : codeOf(error)}): ${message}` };
  }
}

/** n = 1, 1 + stride, … until a run completes with no fault injected (or maxRuns). */
export async function runSchedule(schedule: Schedule, options: { stride: number; maxRuns: number }, replay: string): Promise<FaultStats> {
  const stats: FaultStats = { schedule: schedule.name, runs: 0, faultedRuns: 0, injected: 0, completedAt: null, violations: [] };
  for (let n = 1; stats.runs < options.maxRuns; n += options.stride) {
    const { injected, violation } = await runFaulted(schedule, n);
    stats.runs++;
    stats.injected += injected;
    if (injected > 0) stats.faultedRuns++;
    if (violation !== null) stats.violations.push(`${violation}\n  replay: ${replay.replace('<case>', `${schedule.name}@${n}`)}`);
    if (injected === 0 || (schedule.absorbed === true && n > 1)) {
      stats.completedAt = n;
      break;
    }
  }
  return stats;
}

/** The harness canary: a lying fsync must make the checker report lost acknowledged records. */
export async function lyingSyncCaught(): Promise<{ caught: boolean; rule: string | null }> {
  const io = await newMachine();
  io.setFaults({ lyingSync: { nth: 1, persistent: true, path: /\.log$/ } });
  const ledger = new Ledger();
  if ((await new CrashWorkload(io, ledger).run()) !== 'completed' || ledger.acked === 0) return { caught: false, rule: null };
  const crashed = io.recover('power-clean');
  const log = await openLog(crashed, { recoveryPoint: 0, logStartOffset: 0, hadCleanShutdown: false });
  const failure = await checkRecoveredLog(crashed, log, ledger.expectation({ checkpoints: false, processCrash: false })).then(() => null, (e: unknown) => e);
  await log.close();
  return failure instanceof CheckFailure ? { caught: true, rule: failure.rule } : { caught: false, rule: null };
}
