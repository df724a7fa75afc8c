// The README's quick start is exactly two commands, and .ci/run runs the test
// one; its embedding example runs as written (so it cannot rot).
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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

describe('README "Embed seglog in 20 lines"', () => {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
  const block = /## Embed seglog in 20 lines\s+```js\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';

  it('follows the quick start directly and is at most 20 lines', () => {
    expect(/^# seglog\s+## Quick start\s+```sh\n[^`]*```[\s\S]*?\n## Embed seglog in 20 lines/.test(readme)).toBe(true);
    expect(readme.indexOf('## Embed seglog')).toBeLessThan(readme.indexOf('## What seglog is'));
    expect(block.split('\n').filter((l) => l.trim() !== '').length).toBeLessThanOrEqual(20);
    expect(block).toContain("from '@seglog/log'");
  });

  it('runs as written: appends, makes durable, reads every record back', () => {
    // The program is written into test/ so '@seglog/log' resolves as a workspace
    // dependency (source condition, no build); it runs in a fresh directory.
    const program = path.join(root, 'test', `.readme-embed-${process.pid}.mjs`);
    const cwd = mkdtempSync(path.join(tmpdir(), 'seglog-readme-'));
    writeFileSync(program, block);
    const tsx = pathToFileURL(path.join(root, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs')).href;
    try {
      const out = execFileSync(process.execPath, ['--conditions=source', '--import', tsx, program], { cwd, encoding: 'utf8' });
      expect(out).toContain('durable below offset 1000 - the next append gets 1000');
      expect(out).toContain('read back 1000 records');
      // Run again: the log reopens cleanly and keeps growing.
      const again = execFileSync(process.execPath, ['--conditions=source', '--import', tsx, program], { cwd, encoding: 'utf8' });
      expect(again).toContain('read back 2000 records');
    } finally {
      rmSync(program, { force: true });
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
