// For every file kind the engine writes, the n-th write or sync failing makes
// the log offline before any later acknowledgement (test/lib/reliability-file-kinds.ts).
// Prints the table for the issue note. Every n by default (SEGLOG_FAULT_STRIDE
// to thin it out). Replay one run: SEGLOG_FAULT_KIND_ONLY='<schedule>@<n>' npx vitest run test/faults-file-kinds
import { describe, expect, it } from 'vitest';
import { kindSchedules, kindTable, runKind, runKindSchedule, scheduleName } from './lib/reliability-file-kinds.js';
import type { KindStats } from './lib/reliability-file-kinds.js';

const STRIDE = Number(process.env['SEGLOG_FAULT_STRIDE'] ?? '1');
const ONLY = process.env['SEGLOG_FAULT_KIND_ONLY'] ?? '';

describe('fault schedules per file kind: offline before any later acknowledgement', () => {
  const all: KindStats[] = [];
  for (const schedule of kindSchedules()) {
    const name = scheduleName(schedule);
    it(name, async () => {
      if (ONLY !== '') {
        const [only, n] = ONLY.split('@');
        if (only !== name) return;
        expect((await runKind(schedule, Number(n))).violation).toBeNull();
        return;
      }
      const stats = await runKindSchedule(schedule, { stride: STRIDE, maxRuns: 200 });
      all.push(stats);
      expect(stats.completedAt, 'the schedule must reach a run the fault never hits').not.toBeNull();
      expect(stats.violations.slice(0, 3)).toEqual([]);
    });
  }

  it('every file kind is exercised by a fault (the table)', () => {
    if (ONLY !== '') return;
    console.log(`\n${kindTable(all)}\n`);
    for (const stats of all) expect(stats.faultedRuns, scheduleName(stats.schedule)).toBeGreaterThan(0);
  });
});
