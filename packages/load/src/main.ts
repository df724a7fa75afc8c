// `pnpm load`: the load/diagnostic client's command line over runLoad.
// Exit codes: 0 all acknowledged and verified (or verification skipped or
// refused by a blackhole broker), 1 integrity violations, records not
// acknowledged, or an operating error, 2 usage.

import { isSeglogError } from '@seglog/common';
import { formatReport } from './format-report.js';
import { LOAD_USAGE, parseLoadArgs } from './load-args.js';
import { LoadErrorCode } from './load-error.js';
import { runLoad } from './run-load.js';

async function main(): Promise<void> {
  let parsed: ReturnType<typeof parseLoadArgs>;
  try {
    parsed = parseLoadArgs(process.argv.slice(2));
    if (parsed === 'help') {
      process.stdout.write(`${LOAD_USAGE}\n`);
      return;
    }
    const report = await runLoad(parsed.options);
    process.stdout.write(`${parsed.json ? JSON.stringify(report, null, 2) : formatReport(report)}\n`);
    process.exitCode = report.ok ? 0 : 1;
  } catch (error) {
    if (!isSeglogError(error)) throw error;
    const usage = error.code === LoadErrorCode.USAGE;
    process.stderr.write(`seglog load: ${error.code}: ${error.message}\n${usage ? `${LOAD_USAGE}\n` : ''}`);
    process.exitCode = usage ? 2 : 1;
  }
}

await main();
