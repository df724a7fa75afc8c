// A broker as a child process (`node --conditions=source --import tsx
// packages/broker/src/main.ts --port 0 ...`), for tests that stop it with a
// signal (graceful SIGTERM, or SIGKILL). The port is read from its first
// stdout line ("seglog broker listening on 127.0.0.1:PORT ...").
// BrokerResources keeps what a test file starts and makes (broker children,
// temp directories) so that its afterEach kills and removes them.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BROKER_NODE_FLAGS } from '@seglog/broker';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface BrokerChild {
  readonly child: ChildProcess;
  readonly port: number;
  readonly output: () => string;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `shell`: commands bash runs before exec'ing the broker (e.g. `ulimit -n 400`). */
export async function startBrokerChild(args: readonly string[], timeoutMs = 30_000, options: { shell?: string } = {}): Promise<BrokerChild> {
  const node = [process.execPath, ...BROKER_NODE_FLAGS, '--conditions=source', '--import', 'tsx', 'packages/broker/src/main.ts', '--port', '0', ...args];
  const [file, argv] = options.shell === undefined
    ? [node[0] as string, node.slice(1)]
    : ['bash', ['-c', `${options.shell}; exec "$@"`, 'bash', ...node]];
  const child = spawn(file, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`broker did not start in ${timeoutMs} ms:\n${output}`)), timeoutMs);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      const match = /listening on 127\.0\.0\.1:(\d+)/.exec(output);
      if (match !== null) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`broker exited (${code ?? signal}) before listening:\n${output}`));
    });
  });
  return { child, port, output: () => output, exited };
}

/**
 * The broker children and temp directories of one test file. The file calls
 * `afterEach(() => resources.cleanup())`: cleanup SIGKILLs every tracked child
 * still running (a failed test may leave one) and removes every directory.
 */
export class BrokerResources {
  private readonly children: BrokerChild[] = [];
  private readonly dirs: string[] = [];

  /** `prefix`: the temp directories' name prefix (e.g. `seglog-startup-`). */
  constructor(private readonly prefix: string) {}

  /** Tracks `child` for cleanup and returns it. */
  track(child: BrokerChild): BrokerChild {
    this.children.push(child);
    return child;
  }

  /** A new directory under the OS temp directory, removed at cleanup. */
  tempDir(): string {
    const dir = mkdtempSync(path.join(os.tmpdir(), this.prefix));
    this.dirs.push(dir);
    return dir;
  }

  cleanup(): void {
    for (const c of this.children.splice(0)) if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
    for (const d of this.dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  }
}
