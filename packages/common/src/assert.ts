// Programmer-error assertions. Operating errors are SeglogError subclasses;
// an assertion failure means a bug in seglog or in its caller, and is never
// caught. Expensive checks go behind VERIFY, which tests and fuzzers enable
// with SEGLOG_VERIFY=1.

export class AssertionError extends Error {
  override readonly name = 'AssertionError';
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AssertionError(message);
}

/** True when expensive invariant checks should run (tests, fuzzers). */
export const VERIFY: boolean = process.env['SEGLOG_VERIFY'] === '1' || process.env['VITEST'] === 'true';
