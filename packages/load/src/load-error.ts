// Operating errors of the load/diagnostic client (`pnpm load`): a usage
// mistake, a connection that failed or closed, a request that timed out, and
// a setup step the broker refused (topic, metadata, producer id), a group
// step the coordinator refused with a non-retriable error. Integrity
// violations are not errors: they are collected in the report.

import { SeglogError } from '@seglog/common';

export const LoadErrorCode = {
  USAGE: 'SEGLOG_ERR_LOAD_USAGE',
  CONNECTION: 'SEGLOG_ERR_LOAD_CONNECTION',
  TIMEOUT: 'SEGLOG_ERR_LOAD_TIMEOUT',
  SETUP: 'SEGLOG_ERR_LOAD_SETUP',
  GROUP: 'SEGLOG_ERR_LOAD_GROUP',
} as const;
export type LoadErrorCodeName = (typeof LoadErrorCode)[keyof typeof LoadErrorCode];

export function loadError(code: LoadErrorCodeName, message: string, context: Readonly<Record<string, unknown>> = {}, cause?: unknown): SeglogError {
  return new SeglogError(code, message, cause === undefined ? { context } : { context, cause });
}
