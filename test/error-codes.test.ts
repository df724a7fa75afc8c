// Keeps docs/errors.md true: every SEGLOG_ERR_* code that appears as a string
// literal in packages/*/src is documented there, and every documented code
// still exists in the source.
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function walk(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

function codesIn(text: string): Set<string> {
  return new Set([...text.matchAll(/SEGLOG_ERR_[A-Z0-9]+(?:_[A-Z0-9]+)+/g)].map((m) => m[0]));
}

describe('error code table', () => {
  const sources = readdirSync(path.join(root, 'packages')).flatMap((p) => {
    const src = path.join(root, 'packages', p, 'src');
    try { return walk(src, []); } catch { return []; }
  });
  const inSource = new Set<string>();
  for (const file of sources) for (const code of codesIn(readFileSync(file, 'utf8'))) inSource.add(code);
  const doc = readFileSync(path.join(root, 'docs', 'errors.md'), 'utf8');
  const documented = codesIn(doc);

  it('documents every code the source raises', () => {
    const missing = [...inSource].filter((c) => !documented.has(c)).sort();
    expect(missing).toEqual([]);
  });
  it('documents no code the source no longer has', () => {
    const stale = [...documented].filter((c) => !inSource.has(c)).sort();
    expect(stale).toEqual([]);
  });
});
