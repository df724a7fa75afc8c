// runCli: argument parsing, dispatch and the error contract of `seglog`.
// - usage errors (unknown command or option, wrong arguments): a message and
//   the usage on stderr, exit code 2;
// - typed errors (SeglogError, engine or CLI): one line
//   `seglog: <code>: <message>`, exit code 1; with --debug the stack (and
//   causes) follow;
// - anything else is a bug: the stack is printed, exit code 1.

import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { isSeglogError } from '@seglog/common';
import type { Io } from '@seglog/io';
import type { CommandSpec } from './command-spec.js';
import { COMMANDS } from './commands.js';
import { commandHelp, mainHelp } from './help.js';
import { CliContext } from './internal/cli-context.js';
import type { CliStreams } from './internal/cli-context.js';
import { isUsageError, usageError } from './internal/cli-error.js';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

type ParseOptions = NonNullable<ParseArgsConfig['options']>;

/** The parseArgs option table of a command (exported so tests can compare it with the help text). */
export function parseOptionsOf(command: CommandSpec): ParseOptions {
  const options: ParseOptions = {};
  for (const [name, spec] of Object.entries(command.options)) {
    options[name] = {
      type: spec.type,
      ...(spec.short === undefined ? {} : { short: spec.short }),
      ...(spec.multiple === true ? { multiple: true } : {}),
    };
  }
  return options;
}

function checkPositionals(command: CommandSpec, positionals: readonly string[]): void {
  const [min, max] = typeof command.positionals === 'number' ? [command.positionals, command.positionals] : command.positionals;
  if (positionals.length < min) throw usageError(`missing argument: ${command.args}`, command.name);
  if (positionals.length > max) throw usageError(`unexpected argument ${JSON.stringify(positionals[max])}`, command.name);
}

function printError(ctx: CliContext, error: unknown, debug: boolean): void {
  if (isSeglogError(error)) {
    ctx.err(`seglog: ${error.code}: ${error.message}`);
    if (debug) {
      ctx.err(error.stack ?? '');
      if (Object.keys(error.context).length > 0) ctx.err(`context: ${JSON.stringify(error.context)}`);
      for (let cause = error.cause; cause !== undefined; cause = cause instanceof Error ? cause.cause : undefined) {
        ctx.err(`caused by: ${cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)}`);
      }
    }
    return;
  }
  ctx.err(`seglog: internal error (a bug, please report it): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
}

/** Runs `seglog <argv>`; resolves to the exit code. Never throws. */
export async function runCli(argv: readonly string[], io: Io, streams: CliStreams): Promise<number> {
  const ctx = new CliContext(io, streams);
  const debug = argv.includes('--debug');
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    if (name === undefined) {
      ctx.err(mainHelp(COMMANDS).trimEnd());
      return EXIT_USAGE;
    }
    ctx.out(mainHelp(COMMANDS).trimEnd());
    await ctx.flush();
    return EXIT_OK;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (command === undefined) {
    ctx.err(`seglog: unknown command ${JSON.stringify(name)}`);
    ctx.err(mainHelp(COMMANDS).trimEnd());
    return EXIT_USAGE;
  }
  try {
    let parsed;
    try {
      parsed = parseArgs({ args: [...rest], options: parseOptionsOf(command), allowPositionals: true, strict: command.passThrough !== true });
    } catch (error) {
      throw usageError(error instanceof Error ? error.message : String(error), command.name);
    }
    if (parsed.values['help'] === true) {
      ctx.out(commandHelp(command).trimEnd());
      await ctx.flush();
      return EXIT_OK;
    }
    if (command.passThrough !== true) checkPositionals(command, parsed.positionals);
    const code = await command.run(ctx, parsed.positionals, parsed.values, rest);
    await ctx.flush();
    return code;
  } catch (error) {
    await ctx.flush().catch(() => undefined);
    if (isUsageError(error)) {
      ctx.err(`seglog ${command.name}: ${error instanceof Error ? error.message : String(error)}`);
      ctx.err(commandHelp(command).trimEnd());
      return EXIT_USAGE;
    }
    printError(ctx, error, debug);
    return EXIT_FAILURE;
  }
}
