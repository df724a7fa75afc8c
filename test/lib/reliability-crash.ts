// Crash-point enumeration over any workload (reliability.md §3.5), shared by
// test/reliability-crash.test.ts (smoke budget), test/mutants.test.ts and
// test/reliability-run.ts (larger budgets, summary table).
//
// A workload is run once to count its crash points N; then for k in 1..N
// (every `stride`-th) it runs again halting at k, and the halted machine is
// recovered under each variant: process crash, clean power loss, chaotic
// power loss with `seeds` seeds (PSOW), and non-PSOW chaotic power loss with
// `seeds` seeds (torn sectors that may damage durable bytes: open() may
// instead fail with SEGLOG_ERR_LOG_CORRUPTION, counted as detected). Each
// recovered machine is opened with the checkpoints the ledger holds and:
// - checked by the crash checker (log-checker.ts: durability, prefix,
//   integrity, positions, indexes, epochs, hygiene);
// - crashed inside its own recovery at each of its first `recoveryCrashes`
//   crash points, recovered (process) and opened again: same state;
// - crashed (process) right after the open and opened again: same state
//   (idempotence);
// - given to the workload's extra check (transactions: LSO, aborted list,
//   duplicate answers), then closed with no handle left open.
// Every violation is a string with the replay line.

import { AlignedArena, SimIo } from '@seglog/io';
import type { CrashMode } from '@seglog/io';
import type { Log } from '@seglog/log';
import { CrashWorkload, Ledger, openLog } from './crash-workload.js';
import type { WorkloadOptions } from './crash-workload.js';
import { CheckFailure, checkRecoveredLog, compareSnapshots } from './log-checker.js';
import type { LogSnapshot } from './log-checker.js';
import { checkTransactions, TxnLedger, TxnWorkload } from './reliability-txn-workload.js';

export interface RunnableWorkload {
  readonly ledger: Ledger;
  run(): Promise<'completed' | 'crashed'>;
}

export interface WorkloadSpec {
  readonly name: string;
  /** Fresh options per run (a direct-mode run gets its own staging arena). */
  options(): WorkloadOptions;
  make(io: SimIo, options: WorkloadOptions): RunnableWorkload;
  extraCheck?(log: Log, snapshot: LogSnapshot, ledger: Ledger): Promise<void>;
}

const arena = (): AlignedArena => new AlignedArena({ chunkBytes: 64 * 1024, chunkCount: 4 });

export const WORKLOADS: readonly WorkloadSpec[] = [
  { name: 'basic', options: () => ({}), make: (io, o) => new CrashWorkload(io, new Ledger(), o) },
  {
    name: 'txn', options: () => ({}), make: (io, o) => new TxnWorkload(io, new TxnLedger(), o),
    extraCheck: (log, snapshot, ledger) => checkTransactions(log, snapshot, ledger as TxnLedger),
  },
  { name: 'direct', options: () => ({ writeMode: 'direct', arena: arena() }), make: (io, o) => new CrashWorkload(io, new Ledger(), o) },
  {
    name: 'txn-direct', options: () => ({ writeMode: 'direct', arena: arena() }), make: (io, o) => new TxnWorkload(io, new TxnLedger(), o),
    extraCheck: (log, snapshot, ledger) => checkTransactions(log, snapshot, ledger as TxnLedger),
  },
];

export interface CrashBudget {
  /** Chaotic seeds per crash point, for PSOW and for non-PSOW each. */
  readonly seeds: number;
  /** Crash points of the recovery itself explored (first variant of each mode only). */
  readonly recoveryCrashes: number;
  /** Every stride-th crash point (1 = all); the offset rotates with `phase`. */
  readonly stride: number;
  readonly phase?: number;
  /** Replay one case: crash point and variant name. */
  readonly only?: { readonly k: number; readonly variant: string };
}

export interface CrashStats {
  readonly workload: string;
  crashPoints: number;
  explored: number;
  cases: number;
  modes: Set<string>;
  seeds: number;
  recoveryCrashes: number;
  detected: number;
  readonly violations: string[];
}

interface Variant {
  readonly name: string;
  readonly mode: CrashMode;
  readonly seed: number;
  readonly psow: boolean;
  readonly recoveryCrashes: boolean;
}

function variantsFor(k: number, seeds: number): Variant[] {
  return [
    { name: 'process', mode: 'process', seed: 1, psow: true, recoveryCrashes: true },
    { name: 'power-clean', mode: 'power-clean', seed: 1, psow: true, recoveryCrashes: true },
    ...Array.from({ length: seeds }, (_, i): Variant => ({ name: `chaotic-${i}`, mode: 'power-chaotic', seed: 1000 * k + i, psow: true, recoveryCrashes: i === 0 })),
    ...Array.from({ length: seeds }, (_, i): Variant => ({ name: `nopsow-${i}`, mode: 'power-chaotic', seed: 1000 * k + 200 + i, psow: false, recoveryCrashes: false })),
  ];
}

async function runOnce(spec: WorkloadSpec, psow: boolean, crashAt: number | undefined): Promise<{ io: SimIo; ledger: Ledger; outcome: 'completed' | 'crashed'; options: WorkloadOptions }> {
  const io = new SimIo({ seed: 1, powersafeOverwrite: psow, sectorBytes: 512, ...(crashAt === undefined ? {} : { crashAt: crashAt + 2 }) });
  await io.mkdir('/data');
  await io.fsyncDir('/');
  const options = spec.options();
  const workload = spec.make(io, options);
  const outcome = await workload.run();
  return { io, ledger: workload.ledger, outcome, options };
}

/** The number of crash points of the workload (setup excluded); throws if the fault-free run misbehaves. */
export async function countCrashPoints(spec: WorkloadSpec): Promise<number> {
  const run = await runOnce(spec, true, undefined);
  if (run.outcome !== 'completed') throw new Error(`${spec.name}: the fault-free run did not complete`);
  if (run.ledger.problems.length > 0) throw new Error(`${spec.name}: ${run.ledger.problems.join('; ')}`);
  return run.io.crashPoints - 2;
}

function isCorruption(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'SEGLOG_ERR_LOG_CORRUPTION';
}

function compareWith(a: LogSnapshot, b: LogSnapshot, what: string): void {
  try {
    compareSnapshots(a, b);
  } catch (error) {
    throw new CheckFailure('idempotence', `after ${what}: ${(error as Error).message}`);
  }
}

async function recoverAndCheck(spec: WorkloadSpec, halted: SimIo, ledger: Ledger, variant: Variant, workloadOptions: WorkloadOptions, stats: CrashStats, budget: CrashBudget): Promise<void> {
  const expect = ledger.expectation({ checkpoints: true, processCrash: variant.mode === 'process' });
  const options = { recoveryPoint: ledger.claimedDurable, logStartOffset: ledger.checkpointLogStart, hadCleanShutdown: false };
  const open = async (io: SimIo): Promise<Log> => {
    try {
      return await openLog(io, options, spec.options());
    } catch (error) {
      if (isCorruption(error)) throw error;
      throw new CheckFailure('open', `open(recoveryPoint ${options.recoveryPoint}) failed: ${(error as Error).stack ?? String(error)}`);
    }
  };
  void workloadOptions;
  const io1 = halted.recover(variant.mode, { seed: variant.seed });
  let log1: Log;
  try {
    log1 = await open(io1);
  } catch (error) {
    if (isCorruption(error) && !variant.psow) {
      stats.detected++;
      if (io1.openHandles().length > 0) throw new CheckFailure('hygiene', `handles left open after a failed open: ${io1.openHandles().join(', ')}`);
      return;
    }
    if (isCorruption(error)) throw new CheckFailure('durability', `open reported corruption: ${(error as Error).message}`);
    throw error;
  }
  const recoveryPoints = io1.crashPoints;
  const snap1 = await checkRecoveredLog(io1, log1, expect);
  await log1.close();
  if (variant.recoveryCrashes) {
    for (let j = 1; j <= Math.min(recoveryPoints, budget.recoveryCrashes); j++) {
      const crashed = halted.recover(variant.mode, { seed: variant.seed, crashAt: j });
      const opened = await openLog(crashed, options, spec.options()).catch(() => null);
      await opened?.close().catch(() => undefined);
      if (!crashed.halted) continue; // the open finished before its j-th crash point
      const again = crashed.recover('process');
      const logJ = await open(again);
      const snapJ = await checkRecoveredLog(again, logJ, expect, { reads: false }).catch((e: unknown) => {
        throw new CheckFailure('idempotence', `after a crash at point ${j} of the recovery: ${(e as Error).message}`);
      });
      compareWith(snap1, snapJ, `recovery crashed at its point ${j}`);
      await logJ.close();
      stats.recoveryCrashes++;
    }
  }
  const io2 = io1.recover('process');
  const log2 = await open(io2);
  const snap2 = await checkRecoveredLog(io2, log2, expect, { reads: false });
  compareWith(snap1, snap2, 'a process crash right after the open');
  try {
    await spec.extraCheck?.(log2, snap2, ledger);
  } finally {
    await log2.close();
  }
  if (io2.openHandles().length > 0) throw new CheckFailure('hygiene', `handles left open after close: ${io2.openHandles().join(', ')}`);
}

export async function enumerateCrashes(spec: WorkloadSpec, budget: CrashBudget, replay: string): Promise<CrashStats> {
  const total = await countCrashPoints(spec);
  const stats: CrashStats = { workload: spec.name, crashPoints: total, explored: 0, cases: 0, modes: new Set(), seeds: budget.seeds, recoveryCrashes: 0, detected: 0, violations: [] };
  for (let k = 1; k <= total; k++) {
    if (budget.only !== undefined ? budget.only.k !== k : (k + (budget.phase ?? 0)) % budget.stride !== 0) continue;
    stats.explored++;
    const runs = new Map<boolean, Awaited<ReturnType<typeof runOnce>>>();
    for (const psow of [true, false]) {
      const run = await runOnce(spec, psow, k);
      if (run.outcome !== 'crashed') stats.violations.push(`${spec.name} k=${k}: the workload did not halt at its crash point`);
      if (run.ledger.problems.length > 0) stats.violations.push(`${spec.name} k=${k}: ${run.ledger.problems.join('; ')}`);
      runs.set(psow, run);
    }
    for (const variant of variantsFor(k, budget.seeds)) {
      if (budget.only !== undefined && budget.only.variant !== '' && budget.only.variant !== variant.name) continue;
      const run = runs.get(variant.psow)!;
      stats.cases++;
      stats.modes.add(variant.psow ? variant.mode : `${variant.mode} non-PSOW`);
      try {
        await recoverAndCheck(spec, run.io, run.ledger, variant, run.options, stats, budget);
      } catch (error) {
        const message = error instanceof CheckFailure ? error.message : (error as Error).stack ?? String(error);
        stats.violations.push(`${spec.name} k=${k} variant=${variant.name} (mode ${variant.mode}, seed ${variant.seed}, psow ${variant.psow}) ` +
          `after steps [${run.ledger.steps.join(' > ')}]: ${message}\n  replay: ${replay.replace('<case>', `${spec.name}:${k}:${variant.name}`)}`);
      }
    }
  }
  return stats;
}
