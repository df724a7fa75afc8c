// startupRefusal: every start-up failure becomes one line (file, reason,
// command) and an exit code; the integration side (real processes, real
// corruption, EMFILE, producer-id file) is test/startup-refusals.test.ts.

import { describe, expect, it } from 'vitest';
import { SeglogError } from '@seglog/common';
import { startupRefusal } from '../src/internal/startup-error.js';

const ctx = { dataDir: '/srv/data', host: '127.0.0.1', port: 9092 };

describe('startupRefusal', () => {
  it('keeps the port-in-use and lock lines', () => {
    const listen = new SeglogError('SEGLOG_ERR_BROKER_LISTEN', 'cannot listen', { context: { errno: 'EADDRINUSE' } });
    expect(startupRefusal(listen, ctx)).toEqual({
      exitCode: 2, line: 'seglog broker: port 9092 is already in use on 127.0.0.1. Stop the other process, or pass another port: pnpm start -- --port 0 (any free port)',
    });
    const locked = new SeglogError('SEGLOG_ERR_LOG_LOCKED', 'data directory /srv/data is in use by another LogManager (this process or another)');
    expect(startupRefusal(locked, ctx).line).toBe('seglog broker: data directory /srv/data is in use by another LogManager (this process or another). Is another broker running on this data directory?');
  });

  it('finds EMFILE along the cause chain, typed or raw', () => {
    const raw = Object.assign(new Error('EMFILE: too many open files, open \'/srv/data/t-0/x.index\''), { code: 'EMFILE', syscall: 'open', path: '/srv/data/t-0/x.index' });
    const wrapped = new SeglogError('SEGLOG_ERR_LOG_OFFLINE', 'log offline', { context: { dir: '/srv/data/t-0' }, cause: raw });
    expect(startupRefusal(wrapped, ctx)).toEqual({
      exitCode: 2,
      line: 'seglog broker: cannot start: /srv/data/t-0/x.index: too many open files (EMFILE during open, SEGLOG_ERR_IO_TOO_MANY_FILES). ' +
        'Raise the open-file limit (ulimit -n; LimitNOFILE= under systemd) and start again (pnpm seglog verify /srv/data checks the data)',
    });
  });

  it('any other typed or errno error: file, message, code, the verify command, on one line', () => {
    const other = new SeglogError('SEGLOG_ERR_CHECKPOINT_CORRUPT', 'bad checkpoint\nline two', { context: { path: '/srv/data/recovery-point-offset-checkpoint' } });
    expect(startupRefusal(other, ctx)).toEqual({
      exitCode: 2, line: 'seglog broker: cannot start: /srv/data/recovery-point-offset-checkpoint: bad checkpoint line two (SEGLOG_ERR_CHECKPOINT_CORRUPT). Inspect: pnpm seglog verify /srv/data',
    });
    const denied = Object.assign(new Error('EACCES'), { code: 'EACCES', syscall: 'mkdir', path: '/srv/data' });
    expect(startupRefusal(denied, ctx)).toEqual({ exitCode: 2, line: 'seglog broker: cannot start: /srv/data: EACCES during mkdir. Inspect: pnpm seglog verify /srv/data' });
  });

  it('an internal error is one line too, exit 1, pointing at SEGLOG_DEBUG=1', () => {
    expect(startupRefusal(new TypeError('x is undefined'), ctx)).toEqual({
      exitCode: 1, line: 'seglog broker: cannot start: internal error: x is undefined (a bug: SEGLOG_DEBUG=1 pnpm start prints the stack; please report it)',
    });
  });
});
