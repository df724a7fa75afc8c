// Test helpers: a finished message as one Buffer, and the code of what a call throws.

import { isSeglogError } from '@seglog/common';

export function concatParts(parts: readonly unknown[]): Buffer {
  return Buffer.concat(parts.map((part) => {
    if (!Buffer.isBuffer(part)) throw new Error('test: a non-Buffer part');
    return part;
  }));
}

/** 'ok' when `run` returns; the SeglogError code when it throws one; 'UNTYPED: …' otherwise. */
export function outcome(run: () => unknown): string {
  try {
    run();
    return 'ok';
  } catch (error) {
    if (isSeglogError(error)) return error.code;
    return `UNTYPED: ${String(error)}`;
  }
}
