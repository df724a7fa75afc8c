// Fault schedules per file kind (issue 23, "fault-schedule proof"): for every
// kind of file the engine writes — .log, .index, .timeindex, .txnindex,
// .snapshot, leader-epoch-checkpoint, recovery-point-offset-checkpoint,
// log-start-offset-checkpoint, the clean-shutdown marker, and the partition
// directory's fsync — the n-th write (or sync) on a path of that kind fails,
// n = 1, 2, … until a run completes without reaching n (SQLite's
// do_ioerr_test, reliability.md §3.4), transient and persistent. The .log
// schedules run twice: buffered, and direct + preallocate (O_DIRECT writes,
// zero-filled reservations, trims).
//
// The workload is a LogManager over SimIo with one partition (tiny segments,
// an index entry per batch): plain appends acknowledged when written,
// transactions ended by ABORT and COMMIT markers, durable() waits, a leader
// epoch change, deleteRecords + retention, manager checkpoints, and a clean
// close (which writes the marker). Every step is an acknowledgement the
// harness records. Between steps it lets background work (index write-backs,
// epoch checkpoint rewrites) finish, so a fault fired by an earlier step is
// on record before the next one starts.
//
// Per run, the rule "the log is offline before any later acknowledgement":
// - a step issued after a fault was injected must be refused (typed);
// - a step during which the fault fired must not be acknowledged;
// - once a fault fired (after the settle), the log and the data directory are
//   offline — not `open` with the failure kept for later;
// - an error reaches the workload exactly when a fault was injected;
// - the machine reopens (process crash: page cache kept; power loss: only
//   what was synced) and keeps every acknowledged record (written, resp.
//   durable).

import type { FaultKind, SimFaults, SimIo } from '@seglog/io';
import { LogConfig, LogManager } from '@seglog/log';
import type { Log } from '@seglog/log';
import { buildBatch } from '@seglog/records';
import { producerBatchAt } from './expected-log.js';
import { codeOf, isTyped, newMachine } from './reliability-fixture.js';

const DATA = '/data';
const T0 = 1_700_000_000_000;
const PID = 4242;
/** Direct-mode staging: a few small chunks (the default 64 × 1 MiB, pre-touched, would dominate each run). */
const ARENA = { chunkBytes: 64 * 1024, chunkCount: 4 };

export interface FileKind {
  readonly name: string;
  readonly path: RegExp;
}

export const FILE_KINDS: readonly FileKind[] = [
  { name: '.log', path: /\.log$/ },
  { name: '.index', path: /\.index$/ },
  { name: '.timeindex', path: /\.timeindex$/ },
  { name: '.txnindex', path: /\.txnindex$/ },
  { name: '.snapshot', path: /\.snapshot(\.tmp)?$/ },
  { name: 'leader-epoch-checkpoint', path: /\/leader-epoch-checkpoint(\.tmp)?$/ },
  { name: 'recovery-point-offset-checkpoint', path: /\/recovery-point-offset-checkpoint(\.tmp)?$/ },
  { name: 'log-start-offset-checkpoint', path: /\/log-start-offset-checkpoint(\.tmp)?$/ },
  { name: 'clean-shutdown marker', path: /\/\.kafka_cleanshutdown(\.tmp)?$/ },
  { name: 'partition directory (fsync)', path: /\/t-0$/ },
];

export type FaultOp = 'write' | 'sync';

/** buffered: the default write path; direct: O_DIRECT writers and zero-filled reservations (preallocate). */
export type WriteVariant = 'buffered' | 'direct';

export interface KindSchedule {
  readonly kind: FileKind;
  readonly op: FaultOp;
  readonly persistent: boolean;
  readonly variant: WriteVariant;
}

export function kindSchedules(): KindSchedule[] {
  const out: KindSchedule[] = [];
  for (const variant of ['buffered', 'direct'] as const) {
    // Only the segment data path differs in direct mode (O_DIRECT writes, zero fills, trims).
    for (const kind of variant === 'direct' ? FILE_KINDS.filter((k) => k.name === '.log') : FILE_KINDS) {
      for (const op of ['write', 'sync'] as const) {
        // A directory is never written, only fsynced.
        if (op === 'write' && kind.name.startsWith('partition directory')) continue;
        for (const persistent of [false, true]) out.push({ kind, op, persistent, variant });
      }
    }
  }
  return out;
}

function faultsOf(schedule: KindSchedule, n: number): SimFaults {
  const rule = { nth: n, persistent: schedule.persistent, path: schedule.kind.path };
  return schedule.op === 'write' ? { writeEio: rule } : { syncEio: rule };
}

function faultKind(schedule: KindSchedule): FaultKind {
  return schedule.op === 'write' ? 'writeEio' : 'syncEio';
}

export function scheduleName(schedule: KindSchedule): string {
  return `${schedule.kind.name} ${schedule.op} EIO, ${schedule.persistent ? 'persistent' : 'transient'}${schedule.variant === 'direct' ? ', direct+preallocate' : ''}`;
}

class Violation extends Error {}

/** Lets background work (index write-backs, epoch checkpoint rewrites, pool tasks) run to completion. */
async function settle(): Promise<void> {
  for (let i = 0; i < 4; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

function txnBatch(seq: number, base: number): Buffer {
  return buildBatch({
    records: [{ key: `tk${base}`, value: `txn-${seq}`, timestamp: T0 + base }],
    producerId: PID, producerEpoch: 0, baseSequence: seq, transactional: true,
  });
}

/**
 * Tiny segments, an index entry per batch, and every entry written back at once (indexWriteBackBytes 0;
 * the default leaves up to a page unwritten until the roll): so the .index/.timeindex schedules fault
 * background write-backs, not only the roll's flush.
 */
function config(variant: WriteVariant): LogConfig {
  const mode = variant === 'direct' ? { writeMode: 'direct', preallocate: true } as const : {};
  return new LogConfig({ segmentBytes: 1024, indexIntervalBytes: 1, indexWriteBackBytes: 0, retentionMs: -1, fileDeleteDelayMs: 0, ...mode });
}

/** One run's ledger: what was acknowledged, and the steps taken. */
class Run {
  readonly steps: string[] = [];
  /** Every offset below this was acknowledged as written. */
  writtenEnd = 0;
  /** Every offset below this was acknowledged as durable. */
  durableEnd = 0;
  manager: LogManager | null = null;
  log: Log | null = null;

  constructor(readonly io: SimIo, readonly kind: FaultKind, readonly variant: WriteVariant) {}

  get injected(): number {
    return this.io.injected[this.kind];
  }

  /** Runs one acknowledged step; throws its refusal. */
  async step<T>(name: string, op: () => Promise<T>): Promise<T> {
    this.steps.push(name);
    const before = this.injected;
    const result = await op();
    if (before > 0) throw new Violation(`'${name}' was acknowledged after the fault had fired`);
    await settle();
    if (this.injected > 0) this.expectOffline(`after '${name}'`);
    return result;
  }

  /**
   * An acknowledgement (written(), durable(), a marker, a checkpoint — not
   * an append's acceptance, which only queues the batch): checked in the first reaction to its resolution. A
   * fault may fire during a step on a path its ack does not wait for (an
   * index write-back after the .log write landed); the ack is then earlier
   * than the failure and fine. Resolving once the log or the directory is
   * already offline is not.
   */
  ack<T>(what: string, promise: Promise<T>): Promise<T> {
    return promise.then((value) => {
      if (this.log?.state === 'offline' || this.manager?.state === 'offline') throw new Violation(`${what} resolved after the log went offline`);
      return value;
    });
  }

  expectOffline(when: string): void {
    const log = this.log;
    if (log !== null && log.state === 'open') throw new Violation(`${when}: a fault fired, yet the log is open`);
    const manager = this.manager;
    if (manager !== null && manager.state === 'open') throw new Violation(`${when}: a fault fired, yet the data directory is open`);
  }
}

async function append(run: Run, log: Log, epoch: number): Promise<void> {
  const base = log.logEndOffset;
  await run.step(`append@${base}`, async () => {
    const result = await log.appendAsLeader(producerBatchAt(base), { leaderEpoch: epoch });
    await run.ack('written()', log.written(result.lastOffset));
    run.writtenEnd = Math.max(run.writtenEnd, result.lastOffset + 1);
  });
}

async function transaction(run: Run, log: Log, seq: number, type: 'ABORT' | 'COMMIT', epoch: number): Promise<void> {
  const base = log.logEndOffset;
  await run.step(`txn@${base}`, async () => {
    const result = await log.appendAsLeader(txnBatch(seq, base), { leaderEpoch: epoch });
    await run.ack('written()', log.written(result.lastOffset));
    run.writtenEnd = Math.max(run.writtenEnd, result.lastOffset + 1);
  });
  await run.step(`${type}@${log.logEndOffset}`, async () => {
    const result = await run.ack('marker', log.appendMarker({ type, producerId: PID, producerEpoch: 0, coordinatorEpoch: 0, leaderEpoch: epoch, timestamp: T0 }));
    await run.ack('written()', log.written(result.lastOffset));
    run.writtenEnd = Math.max(run.writtenEnd, result.lastOffset + 1);
  });
}

async function durable(run: Run, log: Log): Promise<void> {
  const end = log.logEndOffset;
  await run.step(`durable<${end}`, async () => {
    await run.ack('durable()', log.durable(end - 1));
    run.durableEnd = Math.max(run.durableEnd, end);
  });
}

async function workload(run: Run): Promise<void> {
  const manager = await run.step('open', () => LogManager.open(run.io, DATA, { defaultConfig: config(run.variant), minFreeBytes: 0, checkpointIntervalMs: 0, now: () => T0 + 1000, arena: ARENA }));
  run.manager = manager;
  const log = await run.step('create t-0', () => manager.getOrCreateLog('t', 0));
  run.log = log;
  if (log.writeMode !== (run.variant === 'direct' ? 'direct' : 'buffered')) throw new Violation(`the ${run.variant} variant runs ${log.writeMode}`);
  let seq = 0;
  for (let round = 0; round < 6; round++) {
    const epoch = round < 3 ? 0 : 1;
    for (let i = 0; i < 3; i++) await append(run, log, epoch);
    await transaction(run, log, seq++, round % 2 === 0 ? 'ABORT' : 'COMMIT', epoch);
    await durable(run, log);
    if (round === 2) await run.step('checkpoint', () => run.ack('checkpoint()', manager.checkpoint()));
    if (round === 4) {
      log.updateHighWatermark(log.logEndOffset);
      const start = log.segmentBaseOffsets()[2] ?? 0;
      await run.step(`deleteRecords(${start + 1})`, () => run.ack('deleteRecords()', log.deleteRecords(start + 1)));
      await run.step('deleteOldSegments', () => run.ack('deleteOldSegments()', log.deleteOldSegments()));
      await run.step('checkpoint', () => run.ack('checkpoint()', manager.checkpoint()));
    }
  }
  await run.step('close', () => manager.close());
}

/** After the refusal: typed, offline, and one more append is refused. */
async function checkRefused(run: Run, error: unknown): Promise<void> {
  if (!isTyped(error)) throw new Violation(`untyped refusal: ${(error as Error).stack ?? String(error)}`);
  await settle();
  run.expectOffline('after the refusal');
  const log = run.log;
  if (log !== null && log.state !== 'closed') {
    const again = await log.appendAsLeader(producerBatchAt(log.logEndOffset), { leaderEpoch: 1 }).then(() => 'resolved', (e: unknown) => codeOf(e));
    if (again === 'resolved') throw new Violation('an append after the refusal was acknowledged');
  }
  await run.manager?.close().catch(() => undefined);
}

/** Every acknowledged record survives a reopen: written ones a process crash, durable ones a power loss. */
async function checkReopen(run: Run): Promise<void> {
  for (const mode of ['process', 'power-clean'] as const) {
    const view = run.io.recover(mode);
    const manager = await LogManager.open(view, DATA, { defaultConfig: config(run.variant), minFreeBytes: 0, checkpointIntervalMs: 0, now: () => T0 + 2000, arena: ARENA }).catch((e: unknown) => {
      throw new Violation(`reopen (${mode}) failed: ${codeOf(e)} ${(e as Error).message}`);
    });
    try {
      const log = manager.getLog('t', 0);
      const end = log?.logEndOffset ?? 0;
      const needed = mode === 'process' ? run.writtenEnd : run.durableEnd;
      if (end < needed) throw new Violation(`reopen (${mode}): log end ${end} below the acknowledged ${needed}`);
    } finally {
      await manager.close();
    }
  }
}

export interface KindRun {
  readonly injected: number;
  readonly refused: boolean;
  readonly violation: string | null;
}

/** One run of the workload with the n-th matching write/sync failing. */
export async function runKind(schedule: KindSchedule, n: number): Promise<KindRun> {
  const io = await newMachine();
  io.setFaults(faultsOf(schedule, n));
  const run = new Run(io, faultKind(schedule), schedule.variant);
  let error: unknown = null;
  try {
    try {
      await workload(run);
    } catch (caught) {
      if (caught instanceof Violation) throw caught;
      error = caught;
    }
    if (error === null && run.injected > 0) throw new Violation(`${run.injected} fault(s) injected, yet the workload completed`);
    if (error !== null && run.injected === 0) throw new Violation(`no fault injected, yet refused: ${codeOf(error)} ${(error as Error).message}`);
    if (error !== null) await checkRefused(run, error);
    await checkReopen(run);
    return { injected: run.injected, refused: error !== null, violation: null };
  } catch (failure) {
    await run.manager?.close().catch(() => undefined);
    const message = failure instanceof Violation ? failure.message : (failure as Error).stack ?? String(failure);
    return {
      injected: run.injected, refused: error !== null,
      violation: `${scheduleName(schedule)}, n=${n} (steps ${run.steps.slice(-4).join(' > ')}; error ${error === null ? 'none' : codeOf(error)}): ${message}`,
    };
  }
}

export interface KindStats {
  readonly schedule: KindSchedule;
  runs: number;
  faultedRuns: number;
  completedAt: number | null;
  readonly violations: string[];
}

/** n = 1, 1 + stride, … until a run completes with no fault injected (or maxRuns). */
export async function runKindSchedule(schedule: KindSchedule, options: { stride: number; maxRuns: number }): Promise<KindStats> {
  const stats: KindStats = { schedule, runs: 0, faultedRuns: 0, completedAt: null, violations: [] };
  for (let n = 1; stats.runs < options.maxRuns; n += options.stride) {
    const { injected, violation } = await runKind(schedule, n);
    stats.runs++;
    if (injected > 0) stats.faultedRuns++;
    if (violation !== null) stats.violations.push(`${violation}\n  replay: SEGLOG_FAULT_KIND_ONLY='${scheduleName(schedule)}@${n}' npx vitest run test/faults-file-kinds`);
    if (injected === 0) {
      stats.completedAt = n;
      break;
    }
  }
  return stats;
}

/** The issue-note table: file kind × write/sync → offline before the next ack (yes/no), cases run. */
export function kindTable(all: readonly KindStats[]): string {
  const lines = ['| file kind | write EIO: offline before next ack | sync EIO: offline before next ack |', '|---|---|---|'];
  for (const kind of FILE_KINDS) {
    const cell = (op: FaultOp): string => {
      const mine = all.filter((s) => s.schedule.kind === kind && s.schedule.op === op);
      if (mine.length === 0) return 'n/a (never written)';
      const faulted = mine.reduce((sum, s) => sum + s.faultedRuns, 0);
      const runs = mine.reduce((sum, s) => sum + s.runs, 0);
      const bad = mine.reduce((sum, s) => sum + s.violations.length, 0);
      if (faulted === 0) return `not exercised (${runs} runs)`;
      return `${bad === 0 ? 'yes' : `NO (${bad} violations)`} — ${faulted} faulted cases / ${runs} runs`;
    };
    lines.push(`| ${kind.name} | ${cell('write')} | ${cell('sync')} |`);
  }
  return lines.join('\n');
}
