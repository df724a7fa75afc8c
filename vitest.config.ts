import { defineConfig } from 'vitest/config';

// Tests import workspace packages through the "source" export condition, so
// they run against src/*.ts without a build step.
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'], externalConditions: ['source'] } },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'test/**/*.test.ts', 'bench/**/*.test.ts', 'fuzz/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    // Under CI, also write a JSON summary that .ci/run turns into one plain
    // 'N passed, N failed' line.
    reporters: process.env['CI'] === 'true' ? ['default', ['json', { outputFile: '.ci-results/vitest.json' }]] : ['default'],
  },
});
