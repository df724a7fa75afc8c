// CI smoke of every fuzz target: a small budget each; the canary must fail.
import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { runTarget, type FuzzTarget } from './lib/target.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const names = readdirSync(path.join(here, 'targets')).filter((f) => f.endsWith('.ts')).map((f) => f.slice(0, -3)).sort();

describe('fuzz smoke', () => {
  it('has a canary and at least one real target', () => {
    expect(names).toContain('canary');
    expect(names.length).toBeGreaterThan(1);
  });
  for (const name of names) {
    it(`${name}`, async () => {
      const { target } = (await import(pathToFileURL(path.join(here, 'targets', `${name}.ts`)).href)) as { target: FuzzTarget };
      const outcome = await runTarget(target, { seed: 42, runs: target.canary === true ? 2000 : 300 });
      if (target.canary === true) expect(outcome.failed, 'canary must fail').toBe(true);
      else expect(outcome.error).toBeNull();
    });
  }
});
