// Mutants must be killed (test/lib/mutants.ts): each deliberately broken
// engine variant is switched on through packages/log's TEST-ONLY seams and
// the relevant checker workloads must report a violation. Until the seams
// file lands (it needs a 4-line change in packages/log, held back while the
// direct-writer / placement work there was uncommitted), these are skipped.
import { describe, expect, it } from 'vitest';
import { MUTANTS, mutantsAvailable, runMutant } from './lib/mutants.js';

const available = mutantsAvailable();

describe.skipIf(!available)('mutants are killed (skipped: seams land with packages/log/src/internal/test-seams.ts, after the log developer\'s direct-writer/placement work is committed)', () => {
  for (const mutant of MUTANTS) {
    it(`${mutant} is caught`, async () => {
      const outcome = await runMutant(mutant);
      console.log(`mutant ${mutant}: ${outcome.killed ? 'killed' : 'SURVIVED'} — ${outcome.evidence.slice(0, 200)}`);
      expect(outcome.killed, `mutant ${mutant} survived the suite`).toBe(true);
    }, 120_000);
  }
});
