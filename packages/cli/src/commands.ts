// The command table of `seglog`, in the order help lists them.

import type { CommandSpec } from './command-spec.js';
import { dumpCommand } from './commands/dump.js';
import { recoverCommand } from './commands/recover.js';
import { serveCommand } from './commands/serve.js';
import { statsCommand } from './commands/stats.js';
import { verifyCommand } from './commands/verify.js';

export const COMMANDS: readonly CommandSpec[] = [dumpCommand, verifyCommand, recoverCommand, statsCommand, serveCommand];
