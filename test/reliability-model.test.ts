// fast-check model run of the Log API with crash and fault commands
// (test/lib/reliability-model.ts): after every crash the model adopts the
// recovered end m, which must lie in [durable, end]; faults must surface typed
// and take the log offline. Smoke: 25 runs of ≤ 40 commands.
// Replay: SEGLOG_MODEL_SEED=<seed> SEGLOG_MODEL_PATH=<path> npx vitest run test/reliability-model
import { expect, it } from 'vitest';
import { runModel } from './lib/reliability-model.js';

it('model run: append / durable / roll / read / retention / crash / fault against an array model', async () => {
  const seed = Number(process.env['SEGLOG_MODEL_SEED'] ?? '42');
  const path = process.env['SEGLOG_MODEL_PATH'];
  const stats = await runModel({ seed, runs: Number(process.env['SEGLOG_MODEL_RUNS'] ?? '25'), ...(path === undefined ? {} : { path }) });
  console.log(`model: ${stats.runs} runs (seed ${seed}), ${stats.crashes} crashes, ${stats.faults} faults injected`);
  expect(stats.failure).toBeNull();
  expect(stats.crashes).toBeGreaterThan(0);
});
