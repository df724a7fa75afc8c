// A fuzz target: a fast-check property over hostile input, replayable from a
// seed. `canary` targets check a deliberately broken function and MUST fail;
// they prove the runner reports failures.
import fc from 'fast-check';

export interface FuzzTarget {
  readonly description: string;
  readonly canary?: boolean;
  property(): fc.IProperty<any> | fc.IAsyncProperty<any>;
}

export interface FuzzOutcome {
  readonly failed: boolean;
  readonly seed: number;
  readonly runs: number;
  readonly counterexamplePath: string | null;
  readonly error: string | null;
}

export async function runTarget(target: FuzzTarget, options: { seed: number; runs: number; path?: string }): Promise<FuzzOutcome> {
  const params: fc.Parameters<unknown> = { seed: options.seed, numRuns: options.runs, endOnFailure: false };
  if (options.path !== undefined) (params as { path?: string }).path = options.path;
  const details = await fc.check(target.property() as fc.IAsyncProperty<unknown>, params);
  return {
    failed: details.failed,
    seed: details.seed,
    runs: details.numRuns,
    counterexamplePath: details.counterexamplePath ?? null,
    error: details.failed ? String(details.errorInstance ?? 'property returned false') : null,
  };
}
