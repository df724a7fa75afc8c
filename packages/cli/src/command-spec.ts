// CommandSpec: one `seglog` command — its name, usage, option table and
// runner. The option table is the single source of truth: main hands it to
// node:util parseArgs and help.ts prints it, so help cannot drift from what
// the parser accepts (test/help.test.ts compares them).

import type { CliContext } from './internal/cli-context.js';

export interface OptionSpec {
  readonly type: 'boolean' | 'string';
  readonly short?: string;
  /** May be given more than once (values collected in an array). */
  readonly multiple?: boolean;
  /** Shown in help as `--name <valueName>` (string options). */
  readonly valueName?: string;
  /** Shown in help; string options only. */
  readonly defaultValue?: string;
  readonly description: string;
}

export type OptionValues = Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;

export interface CommandSpec {
  readonly name: string;
  /** One line for `seglog --help`. */
  readonly summary: string;
  /** Positional arguments as shown in usage, e.g. `<data-dir|partition-dir>`. */
  readonly args: string;
  /** Paragraphs shown by `seglog <command> --help` after the usage line. */
  readonly description: readonly string[];
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Accept options the table does not list and pass them through (serve → broker). */
  readonly passThrough?: boolean;
  /** Exact number of positionals, or a [min, max] range. */
  readonly positionals: number | readonly [number, number];
  /** Runs the command; resolves to the exit code. */
  run(ctx: CliContext, positionals: readonly string[], values: OptionValues, argv: readonly string[]): Promise<number>;
}

/** Options every command takes. */
export const COMMON_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  help: { type: 'boolean', short: 'h', description: 'show this help and exit' },
  debug: { type: 'boolean', description: 'print the stack trace of an error' },
};
