// `seglog serve [broker options]`: starts the reference broker. The broker
// owns its options; serve forwards every argument unchanged. It calls
// `runBrokerMain(argv)` (or `main(argv)`) when @seglog/broker exports one,
// and otherwise runs packages/broker/src/main.ts in a child node process
// (with the broker's BROKER_NODE_FLAGS and the same --conditions=source
// --import tsx loader), forwarding SIGINT/SIGTERM and exiting with its code.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { COMMON_OPTIONS } from '../command-spec.js';
import type { CommandSpec } from '../command-spec.js';
import { cliError } from '../internal/cli-error.js';

type BrokerMain = (argv: readonly string[]) => Promise<number | undefined | void> | number | undefined | void;

async function brokerEntryPoint(): Promise<{ main: BrokerMain | null; nodeFlags: readonly string[] }> {
  const broker = (await import('@seglog/broker')) as Record<string, unknown>;
  const main = broker['runBrokerMain'] ?? broker['main'];
  const nodeFlags = (broker['BROKER_NODE_FLAGS'] as readonly string[] | undefined) ?? [];
  return { main: typeof main === 'function' ? (main as BrokerMain) : null, nodeFlags };
}

/** packages/broker/src/main.ts, from src/commands or dist/commands alike. */
const BROKER_MAIN = fileURLToPath(new URL('../../../broker/src/main.ts', import.meta.url));

function spawnBroker(argv: readonly string[], flags: readonly string[]): Promise<number> {
  if (!existsSync(BROKER_MAIN)) {
    throw cliError('SEGLOG_ERR_CLI_BROKER_UNAVAILABLE', `the broker is not available: @seglog/broker exports no runBrokerMain and ${BROKER_MAIN} does not exist`, { path: BROKER_MAIN });
  }
  const child = spawn(process.execPath, [...flags, '--conditions=source', '--import', 'tsx', BROKER_MAIN, ...argv], { stdio: 'inherit' });
  const forward = (signal: NodeJS.Signals): void => void child.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  return new Promise((resolve, reject) => {
    child.once('error', (error) => reject(cliError('SEGLOG_ERR_CLI_BROKER_UNAVAILABLE', `could not start the broker: ${error.message}`, { path: BROKER_MAIN }, error)));
    child.once('exit', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code ?? 128 + (signal === null ? 0 : (os.constants.signals[signal] ?? 0)));
    });
  });
}

export const serveCommand: CommandSpec = {
  name: 'serve',
  summary: 'start the reference Kafka-protocol broker (arguments are passed to it)',
  args: '[broker options]',
  description: [
    'Every argument after "serve" is passed to the broker unchanged; see the broker\'s own --help',
    '(seglog serve -- --help) for its options. The broker runs in this process when @seglog/broker exports',
    'runBrokerMain(argv), else as a child process running packages/broker/src/main.ts.',
  ],
  options: { ...COMMON_OPTIONS },
  passThrough: true,
  positionals: [0, Number.MAX_SAFE_INTEGER],
  async run(_ctx, _positionals, _values, argv) {
    const forwarded = argv[0] === '--' ? argv.slice(1) : argv.filter((arg) => arg !== '--debug');
    const { main, nodeFlags } = await brokerEntryPoint();
    if (main !== null) return (await main(forwarded)) ?? 0;
    return spawnBroker(forwarded, nodeFlags);
  },
};
