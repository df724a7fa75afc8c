// FdBudget (internal/fd-budget.ts): /proc/self/limits parsing, and admission
// against a model: a creation is admitted exactly when its partitions fit
// beside the open, reserved and expected-internal ones; a release returns
// exactly what it reserved, once.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isSeglogError } from '@seglog/common';
import { FdBudget, MIN_AUTO_MAX_OPEN_SEGMENT_FILES, autoMaxOpenSegmentFiles, parseSoftNoFileLimit } from '../src/internal/fd-budget.js';

describe('parseSoftNoFileLimit', () => {
  it('reads the soft column, null for unlimited or missing', () => {
    const line = (soft: string, hard: string): string => `Limit                     Soft Limit           Hard Limit           Units     \nMax open files            ${soft}                ${hard}                files     \n`;
    expect(parseSoftNoFileLimit(line('1024', '524288'))).toBe(1024);
    expect(parseSoftNoFileLimit(line('unlimited', 'unlimited'))).toBeNull();
    expect(parseSoftNoFileLimit('Max processes 10 10 processes\n')).toBeNull();
  });
});

describe('FdBudget admission', () => {
  it('admits exactly what fits; releases once', () => {
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 500 }), fc.integer({ min: 0, max: 20 }),
      fc.array(fc.oneof(fc.record({ kind: fc.constant('admit' as const), count: fc.integer({ min: 1, max: 200 }), open: fc.integer({ min: 0, max: 300 }) }),
        fc.record({ kind: fc.constant('release' as const), index: fc.nat() })), { maxLength: 40 }),
      (limit, cache, internal, ops) => {
        const budget = new FdBudget({ limit, maxOpenSegmentFiles: cache });
        if (internal > 0) budget.expectInternal('__consumer_offsets', internal);
        let reserved = internal;
        const releases: { release: () => void; count: number; done: boolean }[] = [];
        for (const op of ops) {
          if (op.kind === 'admit') {
            const fits = (op.open + reserved + op.count) * 4 + cache + 128 <= limit;
            try {
              const release = budget.admit('t', op.count, op.open);
              expect(fits).toBe(true);
              releases.push({ release, count: op.count, done: false });
              reserved += op.count;
            } catch (error) {
              expect(fits).toBe(false);
              expect(isSeglogError(error) && error.code === 'SEGLOG_ERR_BROKER_FD_BUDGET' && error.kafka === 'POLICY_VIOLATION').toBe(true);
            }
          } else if (releases.length > 0) {
            const r = releases[op.index % releases.length] as (typeof releases)[number];
            r.release();
            if (!r.done) reserved -= r.count;
            r.done = true;
          }
          expect(budget.reserved).toBe(reserved);
        }
      }));
  });

  it('no limit: everything is admitted; the start-up check passes', () => {
    const budget = new FdBudget({ limit: null, maxOpenSegmentFiles: 1000 });
    expect(() => budget.checkStartup('/d', 1_000_000)).not.toThrow();
    expect(() => budget.admit('t', 10_000, 1_000_000)).not.toThrow();
  });
});

describe('autoMaxOpenSegmentFiles (no --max-open-segment-files given)', () => {
  it('is the default where it fits, else what the limit leaves, never below the minimum; a default broker fits ulimit -n 1024', () => {
    expect(autoMaxOpenSegmentFiles(null, 10)).toBe(1000);
    expect(autoMaxOpenSegmentFiles(20_000, 100)).toBe(1000);
    // The common soft limit with the two internal topics' 100 partitions: 1024 − 400 − 128 = 496.
    expect(autoMaxOpenSegmentFiles(1024, 100)).toBe(496);
    expect(autoMaxOpenSegmentFiles(128, 300)).toBe(MIN_AUTO_MAX_OPEN_SEGMENT_FILES);
    fc.assert(fc.property(fc.integer({ min: 64, max: 100_000 }), fc.integer({ min: 0, max: 20_000 }), (limit, partitions) => {
      const cache = autoMaxOpenSegmentFiles(limit, partitions);
      const budget = new FdBudget({ limit, maxOpenSegmentFiles: cache });
      // Whenever the minimum cache fits, the sized budget starts; otherwise start-up refuses.
      const fits = budget.required(partitions) <= limit;
      expect(fits).toBe(partitions * 4 + MIN_AUTO_MAX_OPEN_SEGMENT_FILES + 128 <= limit);
      expect(cache).toBeGreaterThanOrEqual(MIN_AUTO_MAX_OPEN_SEGMENT_FILES);
      expect(cache).toBeLessThanOrEqual(1000);
    }));
  });
});
