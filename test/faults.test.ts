// Fault schedules on the basic crash workload (test/lib/reliability-faults.ts):
// fail the n-th I/O for n = 1, 2, … until a run completes — write EIO and
// sync EIO (persistent and transient), zero-progress writes, ENOSPC quotas —
// plus short writes (absorbed) and the lying-fsync canary. Smoke: every 2nd n
// (SEGLOG_FAULT_STRIDE=1 for all; test/reliability-run.ts runs all of them).
// Replay one run: SEGLOG_FAULT_ONLY='<schedule name>@<n>' npx vitest run test/faults
import { describe, expect, it } from 'vitest';
import { lyingSyncCaught, runFaulted, runSchedule, SCHEDULES } from './lib/reliability-faults.js';

const STRIDE = Number(process.env['SEGLOG_FAULT_STRIDE'] ?? '2');
const ONLY = process.env['SEGLOG_FAULT_ONLY'] ?? '';
const REPLAY = "SEGLOG_FAULT_ONLY='<case>' npx vitest run test/faults";

describe('fault schedules (n-th I/O fails, n = 1, 2, … until a run completes)', () => {
  for (const schedule of SCHEDULES) {
    it(schedule.name, async () => {
      if (ONLY !== '') {
        const [name, n] = ONLY.split('@');
        if (name !== schedule.name) return;
        const { violation } = await runFaulted(schedule, Number(n));
        expect(violation).toBeNull();
        return;
      }
      const stats = await runSchedule(schedule, { stride: STRIDE, maxRuns: 400 }, REPLAY);
      console.log(`${schedule.name}: ${stats.runs} runs, ${stats.faultedRuns} faulted, ${stats.injected} faults injected, completed at n=${stats.completedAt}, ${stats.violations.length} violations`);
      expect(stats.completedAt, 'the schedule must reach a run the fault never hits').not.toBeNull();
      expect(stats.faultedRuns).toBeGreaterThan(0);
      expect(stats.violations.slice(0, 3)).toEqual([]);
    });
  }

  it('harness canary: with a lying fsync the checker reports lost acknowledged records', async () => {
    expect(await lyingSyncCaught()).toEqual({ caught: true, rule: 'durability' });
  });
});
