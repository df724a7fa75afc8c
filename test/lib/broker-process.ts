// A broker as a child process (`node --conditions=source --import tsx
// packages/broker/src/main.ts --port 0 ...`), for tests that stop it with a
// signal (graceful SIGTERM, or SIGKILL). The port is read from its first
// stdout line ("seglog broker listening on 127.0.0.1:PORT ...").

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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
  const node = [process.execPath, '--conditions=source', '--import', 'tsx', 'packages/broker/src/main.ts', '--port', '0', ...args];
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
