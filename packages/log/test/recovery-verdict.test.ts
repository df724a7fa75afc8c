// recoveryVerdict, the one decision of what recovery may cut (shared by the
// loader and `seglog recover`), rule by rule against a table of facts.
import { describe, expect, it } from 'vitest';
import { recoveryVerdict } from '../src/recovery/recovery-verdict.js';
import type { RecoveryFacts } from '../src/recovery/recovery-verdict.js';

const base: RecoveryFacts = { hadCleanShutdown: false, recoveryPoint: 10, stop: 'end', nextOffset: 20, truncatedBytes: 0, nextSegmentBase: null };
const verdict = (facts: Partial<RecoveryFacts>): string => {
  const v = recoveryVerdict({ ...base, ...facts });
  return v.action === 'cut' ? `cut${v.deleteLater ? '+later' : ''}` : v.action === 'refuse' ? `refuse: ${v.reason}` : 'keep';
};

describe('recoveryVerdict', () => {
  it('keeps a segment whose scan ended at its size, and a durable gap', () => {
    expect(verdict({})).toBe('keep');
    expect(verdict({ nextSegmentBase: 20 })).toBe('keep');
    expect(verdict({ nextSegmentBase: 25, nextOffset: 8 })).toBe('keep'); // gap below the recovery point (follower, compaction)
    expect(verdict({ nextSegmentBase: 25, hadCleanShutdown: true })).toBe('keep');
    expect(verdict({ nextSegmentBase: 25, recoveryPoint: null })).toBe('keep'); // unknown: never cuts for a gap
  });
  it('deletes the later segments after a gap at or beyond the recovery point after an unclean stop (ENGINE BUG 3)', () => {
    expect(verdict({ nextSegmentBase: 25 })).toBe('cut+later');
  });
  it('cuts a torn tail at or beyond the recovery point, and the later segments with it', () => {
    expect(verdict({ stop: 'partial', truncatedBytes: 5 })).toBe('cut');
    expect(verdict({ stop: 'corrupt', truncatedBytes: 5, nextOffset: 10 })).toBe('cut');
    expect(verdict({ stop: 'corrupt', truncatedBytes: 5, nextSegmentBase: 30 })).toBe('cut+later');
  });
  it('cuts zeros before a next segment that starts right there, keeping it (a trim not yet durable)', () => {
    expect(verdict({ stop: 'zero', truncatedBytes: 4000, nextSegmentBase: 20, nextOffset: 20, recoveryPoint: 99 })).toBe('cut');
    expect(verdict({ stop: 'zero', truncatedBytes: 4000, nextSegmentBase: 20, recoveryPoint: null, hadCleanShutdown: true })).toBe('cut');
  });
  it('refuses a cut below the recovery point', () => {
    expect(verdict({ stop: 'corrupt', truncatedBytes: 5, nextOffset: 9 })).toBe('refuse: invalid batch (corrupt) below the recovery point');
    expect(verdict({ stop: 'zero', truncatedBytes: 5, nextOffset: 9 })).toMatch(/^refuse: .*below the recovery point$/);
  });
  it('refuses a sealed segment that lost bytes after a clean shutdown, whatever the recovery point (issue 23 0a)', () => {
    expect(verdict({ hadCleanShutdown: true, stop: 'partial', truncatedBytes: 1_000_000, nextSegmentBase: 30, recoveryPoint: 0 })).toMatch(/^refuse: .*sealed segment after a clean shutdown/);
    expect(verdict({ hadCleanShutdown: true, stop: 'partial', truncatedBytes: 30 })).toBe('cut'); // the active segment's torn tail
  });
  it('with the recovery point unknown, cuts only a zero tail of the last segment (issue 23 0b)', () => {
    expect(verdict({ recoveryPoint: null, stop: 'zero', truncatedBytes: 4000 })).toBe('cut');
    expect(verdict({ recoveryPoint: null, stop: 'partial', truncatedBytes: 30 })).toMatch(/^refuse: .*recovery point is unknown/);
    expect(verdict({ recoveryPoint: null, stop: 'corrupt', truncatedBytes: 30, nextSegmentBase: 40 })).toMatch(/^refuse: .*recovery point is unknown/);
    expect(verdict({ recoveryPoint: null, stop: 'zero', truncatedBytes: 30, nextSegmentBase: 40 })).toMatch(/^refuse: /);
  });
});
