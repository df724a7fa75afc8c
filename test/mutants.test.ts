// Mutants must be killed (test/lib/mutants.ts): each deliberately broken
// engine variant is switched on through packages/log's TEST-ONLY seams and
// the relevant checker workloads must report a violation. The seams live in
// packages/log/src/internal/test-seams.ts; if that file is ever removed the
// suite is skipped and says so.
import { describe, expect, it } from 'vitest';
import { MUTANTS, mutantsAvailable, runMutant } from './lib/mutants.js';

const available = mutantsAvailable();

describe.skipIf(!available)('mutants are killed (skipped only if packages/log/src/internal/test-seams.ts is missing)', () => {
  for (const mutant of MUTANTS) {
    it(`${mutant} is caught`, async () => {
      const outcome = await runMutant(mutant);
      console.log(`mutant ${mutant}: ${outcome.killed ? 'killed' : 'SURVIVED'} — ${outcome.evidence.slice(0, 200)}`);
      expect(outcome.killed, `mutant ${mutant} survived the suite`).toBe(true);
    });
  }
});
