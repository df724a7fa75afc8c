// Crash-point enumeration over more workloads (test/lib/reliability-crash.ts):
// the transactional workload (idempotent + transactional producers,
// appendMarker COMMIT/ABORT, read_committed LSO and aborted list, duplicate
// answers after recovery), and the basic and transactional workloads in
// direct write mode. The basic buffered workload is enumerated in full by
// test/crash-points.test.ts; test/reliability-run.ts runs all four with larger
// budgets and prints the summary table.
//
// Smoke budget: every 3rd crash point (txn) / every 4th (direct), 1 chaotic
// seed per PSOW setting, 2 crash points inside recovery.
// Replay one case: SEGLOG_RELIABILITY_ONLY=<workload>:<k>:<variant> npx vitest run test/reliability-crash
import { describe, expect, it } from 'vitest';
import { enumerateCrashes, WORKLOADS } from './lib/reliability-crash.js';
import type { CrashBudget } from './lib/reliability-crash.js';

const REPLAY = 'SEGLOG_RELIABILITY_ONLY=<case> npx vitest run test/reliability-crash';

function budgetFor(name: string, stride: number): CrashBudget | null {
  const only = process.env['SEGLOG_RELIABILITY_ONLY'];
  if (only === undefined || only === '') return { seeds: 1, recoveryCrashes: 2, stride };
  const [workload, k, variant] = only.split(':');
  if (workload !== name) return null;
  return { seeds: 4, recoveryCrashes: 4, stride: 1, only: { k: Number(k), variant: variant ?? '' } };
}

async function enumerate(name: string, stride: number): Promise<void> {
  const spec = WORKLOADS.find((w) => w.name === name)!;
  const budget = budgetFor(name, stride);
  if (budget === null) return;
  const stats = await enumerateCrashes(spec, budget, REPLAY);
  console.log(`${name}: ${stats.explored}/${stats.crashPoints} crash points × ${[...stats.modes].join(', ')} = ${stats.cases} cases, ` +
    `${stats.recoveryCrashes} crashes inside recovery, ${stats.detected} non-PSOW corruptions detected, ${stats.violations.length} violations`);
  expect(stats.cases).toBeGreaterThan(0);
  expect(stats.violations.slice(0, 3)).toEqual([]);
}

describe('crash-point enumeration, more workloads', () => {
  it('transactional workload: every 3rd crash point × process / power-clean / chaotic / non-PSOW, read_committed and duplicates after recovery', () => enumerate('txn', 3), 120_000);
});

describe('direct-mode enumeration (regressions for engine bugs 7 and 7b, fixed: sealed-segment trim synced at roll; SimIo kept views of reused staging chunks)', () => {
  // A segment written in direct mode is padded with zeros to the page
  // (4096 B) and trimmed to its logical end when it is sealed (roll). That
  // ftruncate is never fdatasynced: the flush that covers the sealed segment
  // ran before the trim. A clean power loss brings the padding back; the
  // segment is below the recovery point, so open() reads the zero header as
  // "invalid batch (zero) below the recovery point" and refuses with
  // SEGLOG_ERR_LOG_CORRUPTION — no record is lost, but the log cannot open
  // after an ordinary power cut. Replay: SEGLOG_RELIABILITY_ONLY=direct:230:power-clean
  // (from the basic workload: the crash lands in retention after the clean reopen).
  // (That one is fixed by the log developer's uncommitted work at the time of writing.)
  //
  // ENGINE BUG 7b, only with VERIFY on (vitest, SEGLOG_VERIFY=1: the arena
  // poisons released staging chunks with 0xA5): a durable page is written
  // from, or rewritten out of, a staging chunk already released — chaotic
  // power loss (PSOW) then shows "invalid batch (corrupt) below the recovery
  // point" after only three appends and a durable wait. Without VERIFY the
  // released chunk still holds the right bytes by luck; with a shared arena
  // another log may overwrite it. Replay: SEGLOG_RELIABILITY_ONLY=direct:24:chaotic-0
  it('direct workload: every 4th crash point × process / power-clean / chaotic / non-PSOW (was ENGINE BUG 7: an unsynced trim of a sealed segment)', () => enumerate('direct', 4), 120_000);
  it('transactional workload in direct mode: every 4th crash point', () => enumerate('txn-direct', 4), 120_000);
});
