// The CLI contract: help generated from (and so equal to) the parseArgs
// option tables, usage errors exit 2 on stderr, typed errors are one line
// and exit 1, --debug adds the stack, the progress bar only on a TTY.

import { describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { COMMANDS } from '../src/commands.js';
import { commandHelp, optionLabel } from '../src/help.js';
import { Progress } from '../src/internal/progress.js';
import { parseOptionsOf } from '../src/run-cli.js';
import { removeDir, runSeglog, tempDir } from './helpers.js';

describe('help', () => {
  it('seglog --help lists every command and exits 0', async () => {
    const r = await runSeglog(['--help']);
    expect(r.code).toBe(0);
    for (const command of COMMANDS) expect(r.stdout).toContain(`  ${command.name}`);
    expect(COMMANDS.map((c) => c.name)).toEqual(['dump', 'verify', 'recover', 'stats', 'serve']);
  });

  it('each command\'s help lists exactly the options its parser accepts', async () => {
    const results = await Promise.all(COMMANDS.map((command) => runSeglog([command.name, '--help'])));
    COMMANDS.forEach((command, i) => {
      const r = results[i];
      expect(r?.code, command.name).toBe(0);
      expect(r?.stdout).toBe(commandHelp(command));
      const parser = parseOptionsOf(command);
      // Every parser option is in the help, with its short form and value…
      for (const [name, option] of Object.entries(parser)) {
        const spec = command.options[name];
        expect(spec, `${command.name} --${name}`).toBeDefined();
        expect(spec?.type).toBe(option.type);
        expect(spec?.short).toBe(option.short);
        expect(r?.stdout).toContain(optionLabel(name, spec!));
      }
      // …and every --option the help mentions in its table is one the parser accepts.
      const listed = [...(r?.stdout ?? '').matchAll(/^ {2}(?:-\w, | {4})--([a-z-]+)/gm)].map((m) => m[1]);
      expect(listed.sort()).toEqual(Object.keys(parser).sort());
    });
  });

  it('help documents the options it is meant to (a drift guard against the tables themselves)', () => {
    const names = Object.fromEntries(COMMANDS.map((c) => [c.name, Object.keys(c.options).sort()]));
    expect(names).toEqual({
      dump: ['debug', 'help', 'json', 'max-bytes', 'records'],
      verify: ['debug', 'help', 'json', 'strict'],
      recover: ['config', 'debug', 'dry-run', 'help', 'json', 'truncate-corrupt'],
      stats: ['debug', 'help', 'json'],
      serve: ['debug', 'help'],
    });
  });
});

describe('usage errors exit 2 with the usage on stderr', () => {
  it('no command, an unknown command, an unknown option, a missing or extra argument, a bad value', async () => {
    const [none, unknown, option, missing, extra, badValue] = await Promise.all([
      runSeglog([]),
      runSeglog(['frobnicate']),
      runSeglog(['verify', '--frobnicate', '.']),
      runSeglog(['stats']),
      runSeglog(['dump', 'a.log', 'b.log']),
      runSeglog(['dump', '--max-bytes', 'lots', '00000000000000000000.log']),
    ]);
    for (const r of [none, unknown, option, missing, extra, badValue]) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('usage: seglog');
    }
    expect(unknown.stderr).toContain('seglog: unknown command "frobnicate"');
    expect(option.stderr).toMatch(/^seglog verify: Unknown option '--frobnicate'/);
    expect(option.stderr).toContain('usage: seglog verify [options] <data-dir|partition-dir>');
    expect(missing.stderr).toContain('seglog stats: missing argument: <data-dir|partition-dir>');
    expect(extra.stderr).toContain('seglog dump: unexpected argument "b.log"');
    expect(badValue.stderr).toContain('--max-bytes must be a non-negative integer');
  });
});

describe('typed errors', () => {
  it('print one line "seglog: <code>: <message>", exit 1, no stack; --debug adds the stack', async () => {
    const dir = tempDir('errors');
    try {
      const missing = path.join(dir, 'nope');
      const notSegment = path.join(dir, 'notes.txt');
      writeFileSync(notSegment, 'hello');
      const [notFound, debug, unknownFile, notLogDir] = await Promise.all([
        runSeglog(['verify', missing]),
        runSeglog(['stats', '--debug', missing]),
        runSeglog(['dump', notSegment]),
        runSeglog(['verify', dir]),
      ]);
      expect(notFound.code).toBe(1);
      expect(notFound.stderr.trimEnd().split('\n')).toEqual([expect.stringMatching(/^seglog: SEGLOG_ERR_IO_NOT_FOUND: .*nope/)]);
      expect(debug.code).toBe(1);
      expect(debug.stderr).toMatch(/^seglog: SEGLOG_ERR_IO_NOT_FOUND: /);
      expect(debug.stderr).toContain('    at ');
      expect(unknownFile.code).toBe(1);
      expect(unknownFile.stderr).toMatch(/^seglog: SEGLOG_ERR_CLI_UNKNOWN_FILE: cannot tell what notes.txt is/);
      expect(notLogDir.code).toBe(1);
      expect(notLogDir.stderr).toMatch(/^seglog: SEGLOG_ERR_CLI_NOT_A_LOG_DIR: /);
    } finally {
      removeDir(dir);
    }
  });
});

describe('Progress', () => {
  const stream = (isTTY: boolean): { isTTY: boolean; text: string; write(t: string): boolean } => ({
    isTTY, text: '', write(t: string) { this.text += t; return true; },
  });

  it('draws nothing when the stream is not a TTY', () => {
    const s = stream(false);
    let now = 0;
    const p = new Progress(s, { label: 'verify', totalBytes: 100, now: () => now });
    for (let i = 0; i < 10; i++) { now += 1000; p.advance(10); }
    p.done();
    expect(s.text).toBe('');
  });

  it('on a TTY draws after the delay, at most once per interval, and erases itself', () => {
    const s = stream(true);
    let now = 0;
    const p = new Progress(s, { label: 'verify', totalBytes: 1024 * 1024, now: () => now, delayMs: 300, intervalMs: 100 });
    p.advance(1024);
    expect(s.text).toBe(''); // a short scan never shows a bar
    now = 400;
    p.advance(512 * 1024 - 1024);
    expect(s.text).toBe(`\rverify [${'#'.repeat(15)}${'.'.repeat(15)}]  50% 0.5/1.0 MiB`);
    now = 450;
    p.advance(1);
    expect(s.text.split('\r')).toHaveLength(2); // throttled
    p.done();
    expect(s.text.endsWith('\r\x1b[K')).toBe(true);
  });
});
