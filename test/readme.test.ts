// The README's quick start is exactly two commands, and .ci/run runs the test one.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

describe('README quick start', () => {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const block = /## Quick start\s+```sh\n([\s\S]*?)```/.exec(readme);
  const commands = (block?.[1] ?? '').split('\n').filter((l) => l.trim() !== '');

  it('has exactly two commands: run, then test', () => {
    expect(commands).toHaveLength(2);
    expect(commands[0]).toMatch(/ start$/);
    expect(commands[1]).toMatch(/ test$/);
  });
  it('is what .ci/run runs', () => {
    const ci = readFileSync(path.join(root, '.ci', 'run'), 'utf8');
    expect(ci.split('\n').map((l) => l.trim())).toContain(commands[1]);
  });
});

describe('the repository stands on its own', () => {
  it('no tracked file refers to the workspace folder beside the clone', () => {
    // A fresh clone has nothing beside it: fixtures live in test/fixtures/.
    // .ci/run is excluded because it holds the same check, spelled so that it
    // does not match itself.
    const pattern = ['\\.\\.', 'shared'].join('/');
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0')
      .filter((f) => f !== '' && f !== '.ci/run' && !f.endsWith('pnpm-lock.yaml'));
    const offenders = files.filter((f) => {
      try {
        return new RegExp(pattern).test(readFileSync(path.join(root, f), 'utf8'));
      } catch {
        return false; // deleted in the work tree, or not a text file
      }
    });
    expect(offenders).toEqual([]);
  });
});
