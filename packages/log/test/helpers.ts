// Shared test helpers for @seglog/log (not a test file itself).

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface IndexVector {
  readonly file: string;
  readonly description: string;
  readonly hex: string;
}

/** The `indexEntries` vectors of the shared Kafka fixture. */
export function indexVectors(): IndexVector[] {
  const fixture = JSON.parse(readFileSync(path.resolve(repoRoot, 'test/fixtures/kafka-v2-vectors.json'), 'utf8')) as {
    indexEntries: IndexVector[];
  };
  return fixture.indexEntries;
}

export function vector(file: string): IndexVector {
  const found = indexVectors().find((v) => v.file === file);
  if (found === undefined) throw new Error(`no fixture vector for ${file}`);
  return found;
}

/** Runs `fn` and returns the error it throws (failing the test if it does not). */
export function thrown(fn: () => unknown): { code?: string; message: string; context?: Record<string, unknown> } {
  try {
    fn();
  } catch (error) {
    return error as { code?: string; message: string };
  }
  expect.fail('expected an error');
}

/** Awaits `promise` and returns its rejection (failing the test if it resolves). */
export async function rejected(promise: Promise<unknown>): Promise<{ code?: string; message: string; context?: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    return error as { code?: string; message: string };
  }
  expect.fail('expected a rejection');
}
