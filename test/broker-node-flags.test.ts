// The broker's node flags (packages/broker/src/node-flags.ts) reach its
// launchers: `pnpm start` (the root package.json script passes each one
// before the script path), and a broker started without them says so in its
// banner. `seglog serve` is checked in packages/cli/test/serve.test.ts.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { BROKER_NODE_FLAGS } from '@seglog/broker';
import { ROOT } from './lib/broker-process.js';

/** The banner of a broker started with these node flags (stopped with SIGTERM once printed). */
async function banner(flags: readonly string[]): Promise<string> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'seglog-node-flags-'));
  try {
    const child = spawn(process.execPath, [...flags, '--conditions=source', '--import', 'tsx', 'packages/broker/src/main.ts', '--port', '0', '--data-dir', dataDir], {
      cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (c: string) => {
        stdout += c;
        // The broker installs its SIGTERM handler right after its last banner line ("stop: ...").
        if (/^stop: /m.test(stdout)) resolve();
      });
      void exited.then(() => reject(new Error(`broker exited early: ${stdout}`)));
    });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    return stdout;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

describe('the broker node flags', () => {
  it('are in the start script, before the script path', () => {
    const start = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['start']!;
    const script = start.indexOf('packages/broker/src/main.ts');
    expect(script).toBeGreaterThan(0);
    expect(BROKER_NODE_FLAGS.length).toBeGreaterThan(0);
    for (const flag of BROKER_NODE_FLAGS) {
      const at = start.indexOf(` ${flag} `);
      expect(at).toBeGreaterThan(0);
      expect(at).toBeLessThan(script);
    }
  });

  it('are noted in the banner when missing, and only then', async () => {
    const note = `note:     node was started without ${BROKER_NODE_FLAGS.join(' ')}`;
    expect(await banner([])).toContain(note);
    expect(await banner(BROKER_NODE_FLAGS)).not.toContain('node was started without');
  });
});
