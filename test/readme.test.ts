// The README's quick start is exactly two commands, and .ci/run runs the test one.
import { describe, expect, it } from 'vitest';
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
