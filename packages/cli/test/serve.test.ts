// `seglog serve`: forwards its arguments to the broker (packages/broker's
// main.ts in a child process while @seglog/broker exports no runBrokerMain)
// and forwards SIGTERM for a graceful stop.

import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { removeDir, repoRoot, runSeglog, tempDir } from './helpers.js';

describe('seglog serve', () => {
  it('passes arguments after -- to the broker (its own --help)', async () => {
    const r = await runSeglog(['serve', '--', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--data-dir DIR');
    expect(r.stdout).toContain('--port N');
  });

  it('starts the broker with the given options and stops it on SIGTERM (exit 0)', async () => {
    const dataDir = tempDir('serve');
    try {
      const child = spawn(process.execPath, ['--conditions=source', '--import', 'tsx', 'packages/cli/src/main.ts', 'serve', '--port', '0', '--data-dir', dataDir], {
        cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr += c; });
      const listening = new Promise<void>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (c: string) => {
          stdout += c;
          // The broker installs its SIGTERM handler right after printing its last banner line ("stop: ...").
          if (/^stop: /m.test(stdout)) resolve();
        });
        child.once('exit', () => reject(new Error(`serve exited early: ${stdout}${stderr}`)));
      });
      await listening;
      expect(stdout).toMatch(/seglog broker listening on 127\.0\.0\.1:\d+/);
      expect(stdout).not.toContain('note:     node was started without'); // serve passes BROKER_NODE_FLAGS
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(stdout).toContain('stopped');
      expect(existsSync(path.join(dataDir, '.kafka_cleanshutdown'))).toBe(true);
    } finally {
      removeDir(dataDir);
    }
  });
});
