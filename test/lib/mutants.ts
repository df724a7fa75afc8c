// Mutants (reliability.md §3.6 "the harness must kill mutants"): deliberately
// broken engine variants, switched on through the TEST-ONLY seams object of
// packages/log/src/internal/test-seams.ts, each of which the suite must catch:
//
// | seam                 | broken behaviour                                   | killed by |
// |----------------------|----------------------------------------------------|-----------|
// | ackBeforeSync        | durable() resolves before the fdatasync completes  | crash enumeration (basic), power-clean: [durability] |
// | skipSegmentDirFsync  | no directory fsync after creating a segment        | crash enumeration (basic), power-clean after a roll: [durability]/[second-life] |
// | skipRecoveryCrc      | recovery does not check batch CRCs                 | segment-file fuzz, full rescan: [integrity] |
// | truncateBelowDurable | recovery cuts damage below the recovery point      | segment-file fuzz, checkpointed: [durability] |
// | keepIndexFailure     | a failed index write-back waits for the next call  | per-file-kind schedule (.index write EIO): log open after the fault |
//
// The seams file is loaded at run time: until it lands in packages/log, the
// mutants cannot be switched on and mutantsAvailable() is false.

import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { enumerateCrashes, WORKLOADS } from './reliability-crash.js';

export interface Seams {
  ackBeforeSync: boolean;
  skipSegmentDirFsync: boolean;
  skipRecoveryCrc: boolean;
  truncateBelowDurable: boolean;
  keepIndexFailure: boolean;
}
export type MutantName = keyof Seams;
export const MUTANTS: readonly MutantName[] = ['ackBeforeSync', 'skipSegmentDirFsync', 'skipRecoveryCrc', 'truncateBelowDurable', 'keepIndexFailure'];

const SEAMS_PATH = fileURLToPath(new URL('../../packages/log/src/internal/test-seams.ts', import.meta.url));

export function mutantsAvailable(): boolean {
  return existsSync(SEAMS_PATH);
}

async function loadSeams(): Promise<Seams> {
  const module = (await import(pathToFileURL(SEAMS_PATH).href)) as { seams: Seams };
  return module.seams;
}

export interface MutantOutcome {
  readonly mutant: MutantName;
  readonly killed: boolean;
  /** What caught it (first violation), or why it survived. */
  readonly evidence: string;
}

async function crashKiller(stride: number): Promise<string | null> {
  const basic = WORKLOADS.find((w) => w.name === 'basic')!;
  const stats = await enumerateCrashes(basic, { seeds: 1, recoveryCrashes: 0, stride }, '<mutant run>');
  return stats.violations[0] ?? null;
}

async function fuzzKiller(runs: number): Promise<string | null> {
  const { target } = await import('../../fuzz/targets/segment-file.js');
  const details = await fc.check(target.property() as fc.IAsyncProperty<unknown>, { seed: 42, numRuns: runs });
  return details.failed ? String(details.errorInstance) : null;
}

async function fileKindKiller(): Promise<string | null> {
  const { kindSchedules, runKindSchedule, scheduleName } = await import('./reliability-file-kinds.js');
  const schedule = kindSchedules().find((s) => scheduleName(s) === '.index write EIO, transient')!;
  const stats = await runKindSchedule(schedule, { stride: 1, maxRuns: 60 });
  return stats.violations[0] ?? null;
}

/** Switches one mutant on, runs the checks that must kill it, switches it off. `scale` multiplies the budgets. */
export async function runMutant(mutant: MutantName, scale = 1): Promise<MutantOutcome> {
  const seams = await loadSeams();
  seams[mutant] = true;
  try {
    const evidence = mutant === 'ackBeforeSync' || mutant === 'skipSegmentDirFsync'
      ? await crashKiller(Math.max(1, Math.round(6 / scale)))
      : mutant === 'keepIndexFailure' ? await fileKindKiller() : await fuzzKiller(300 * scale);
    return { mutant, killed: evidence !== null, evidence: evidence?.split('\n')[0] ?? 'survived: no check reported a violation' };
  } finally {
    seams[mutant] = false;
  }
}
