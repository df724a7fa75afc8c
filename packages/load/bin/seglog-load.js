#!/usr/bin/env node
// `seglog-load` launcher (the load/diagnostic client). By default it runs
// the TypeScript source through tsx with the workspace's "source" export
// condition, exactly as `pnpm load` does, so it always runs the current code of every package (a dist/ built
// earlier may be stale for any one of them). SEGLOG_LOAD_DIST=1 runs the
// compiled dist/main.js instead (after `tsc -b`; no tsx needed). Exit code
// and SIGINT/SIGTERM pass through.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// Installed from the registry (no tsx beside it), the compiled dist/ is what there is.
let tsx = null;
try {
  tsx = import.meta.resolve('tsx');
} catch {
  tsx = null;
}
const useDist = process.env.SEGLOG_LOAD_DIST === '1' || tsx === null;
const args = useDist
  ? [fileURLToPath(new URL('../dist/main.js', import.meta.url)), ...process.argv.slice(2)]
  // tsx resolved from here, so the launcher works from any working directory.
  : ['--conditions=source', '--import', tsx, fileURLToPath(new URL('../src/main.ts', import.meta.url)), ...process.argv.slice(2)];
const child = spawn(process.execPath, args, { stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  if (signal !== null) process.kill(process.pid, signal);
  else process.exit(code ?? 1);
});
