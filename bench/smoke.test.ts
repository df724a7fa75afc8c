// Every benchmark runs with its small parameters in `pnpm test`, so none of
// them rots: each must exit 0 and print its table and environment line.
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const names = readdirSync(here).filter((f) => f.endsWith('.bench.ts')).map((f) => f.replace(/\.bench\.ts$/, '')).sort();

describe('benchmark smoke', () => {
  it('finds the benchmarks', () => expect(names.length).toBeGreaterThan(0));
  for (const name of names) {
    it(name, () => {
      const r = spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', 'bench/run.ts', name, '--quick', '--runs', '1'], {
        cwd: root, encoding: 'utf8', timeout: 540_000,
      });
      expect(r.stderr).not.toMatch(/Error/);
      expect(r.status).toBe(0);
      expect(r.stdout).toContain(`# bench ${name}`);
      expect(r.stdout).toMatch(/-{4,}/); // a printed table
    });
  }
  it('hotpath-append (the append group of hotpath alone)', () => {
    const r = spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', 'bench/hotpath-append.ts', '--records', '20000', '--runs', '1'], {
      cwd: root, encoding: 'utf8', timeout: 540_000,
    });
    expect(r.stderr).not.toMatch(/Error/);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/-{4,}/);
    expect(r.stdout).toContain('placement buffered: caller');
    expect(r.stdout).toContain('placement direct: caller');
  });
});
