import { defineConfig } from 'vitest/config';

// Tests import workspace packages through the "source" export condition, so
// they run against src/*.ts without a build step.
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'], externalConditions: ['source'] } },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts', 'bench/**/*.test.ts', 'fuzz/**/*.test.ts'],
    // Timeouts only guard against a hang; they never decide a verdict. Every
    // long test is bounded by counts (crash points, cases, seeds), so a busy
    // machine makes it slower, not red: 10 minutes, far above any test's time
    // on a loaded 2-core machine (the slowest takes about 2 minutes there).
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: 'forks',
    maxWorkers: 2,
    // Under CI, also write a JSON summary that .ci/run turns into one plain
    // 'N passed, N failed' line.
    reporters: process.env['CI'] === 'true' ? ['default', ['json', { outputFile: '.ci-results/vitest.json' }]] : ['default'],
  },
});
