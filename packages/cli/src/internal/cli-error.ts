// Errors the CLI itself raises. They are SeglogErrors like the engine's, so
// main prints every typed error the same way (`seglog: <code>: <message>`).
// A usage error exits 2, every other error 1.

import { SeglogError } from '@seglog/common';

export type CliErrorCode =
  | 'SEGLOG_ERR_CLI_USAGE'
  | 'SEGLOG_ERR_CLI_NOT_A_LOG_DIR'
  | 'SEGLOG_ERR_CLI_UNKNOWN_FILE'
  | 'SEGLOG_ERR_CLI_BROKER_UNAVAILABLE';

export function cliError(code: CliErrorCode, message: string, context: Readonly<Record<string, unknown>> = {}, cause?: unknown): SeglogError {
  return new SeglogError(code, message, cause === undefined ? { context } : { context, cause });
}

/** Bad arguments: printed with the command's usage, exit code 2. */
export function usageError(message: string, command: string | null = null): SeglogError {
  return cliError('SEGLOG_ERR_CLI_USAGE', message, { command });
}

export function isUsageError(error: unknown): boolean {
  return error instanceof SeglogError && error.code === 'SEGLOG_ERR_CLI_USAGE';
}
