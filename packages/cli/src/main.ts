// `seglog` entry point: runs the CLI on the real process and sets the exit code.
// `node --conditions=source --import tsx packages/cli/src/main.ts <command> ...`
// (pnpm seglog, bin/seglog.js) or `node packages/cli/dist/main.js` when built.

import { NodeIo } from '@seglog/io';
import { runCli } from './run-cli.js';

// `seglog dump x.log | head` closes the pipe early: stop quietly, as Unix tools do.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});

process.exitCode = await runCli(process.argv.slice(2), new NodeIo(), { stdout: process.stdout, stderr: process.stderr });
