// The import graph of packages/*/src has no circle, and no package imports one
// above it in the layer table of ARCHITECTURE.md. A circle means two modules are
// one concept split badly (or two concepts tangled): evaluation order then
// depends on which file is loaded first, and neither can be read alone.
// `import type` counts too: a type-only circle is the same tangle of meaning.
// A relative import never leaves its package's src/: another package is
// reached through its public index (`@seglog/<name>`), never its internals.
import { describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const packagesDir = path.join(root, 'packages');

// Bottom to top; a package imports only packages before it in this list.
const layers = ['common', 'native', 'records', 'io', 'log', 'fetch', 'protocol', 'broker', 'load', 'cli'] as const;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (/\.(ts|mts|cts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

/** Every static, type-only, re-export and dynamic import specifier in `file`. */
function specifiers(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles.map((f) => f.fileName);
}

/** './x.js' → './x.ts' or './x/index.ts'; undefined if it is not a source file. */
function resolveRelative(from: string, spec: string): string | undefined {
  const base = path.resolve(path.dirname(from), spec);
  const stem = base.replace(/\.(js|mjs|cjs|ts)$/, '');
  for (const candidate of [`${stem}.ts`, `${stem}.mts`, `${stem}.cts`, path.join(base, 'index.ts')]) {
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

interface Graph {
  edges: Map<string, string[]>;
  upward: string[];
  unresolved: string[];
  escaping: string[];
}

function buildGraph(): Graph {
  const edges = new Map<string, string[]>();
  const upward: string[] = [];
  const unresolved: string[] = [];
  const escaping: string[] = [];
  for (const pkg of readdirSync(packagesDir)) {
    const src = path.join(packagesDir, pkg, 'src');
    if (!existsSync(src)) continue;
    const layer = layers.indexOf(pkg as (typeof layers)[number]);
    for (const file of sourceFiles(src)) {
      const targets: string[] = [];
      const rel = path.relative(root, file);
      for (const spec of specifiers(file)) {
        if (spec.startsWith('.')) {
          const target = resolveRelative(file, spec);
          if (target === undefined) {
            unresolved.push(`${rel} → ${spec}`);
            continue;
          }
          targets.push(target);
          if (path.relative(src, target).startsWith('..')) escaping.push(`${rel} → ${spec}`);
          continue;
        }
        const match = /^@seglog\/([^/]+)/.exec(spec);
        if (match === null) continue;
        const other = match[1] as string;
        const otherLayer = layers.indexOf(other as (typeof layers)[number]);
        if (layer < 0 || otherLayer < 0 || otherLayer >= layer) {
          if (other !== pkg || layer < 0) upward.push(`${rel} → ${spec}`);
        }
      }
      edges.set(file, targets);
    }
  }
  return { edges, upward, unresolved, escaping };
}

/** Strongly connected components with more than one file, or a file importing itself (Tarjan). */
function cycles(edges: Map<string, string[]>): string[][] {
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    indexOf.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!indexOf.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, indexOf.get(w) as number));
      }
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(path.relative(root, w));
      } while (w !== v);
      if (component.length > 1 || (edges.get(v) ?? []).includes(v)) out.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!indexOf.has(v)) visit(v);
  return out;
}

describe('import graph of packages/*/src', () => {
  const graph = buildGraph();

  it('sees the source files (the test can fail)', () => {
    expect(graph.edges.size).toBeGreaterThan(50);
    expect(cycles(new Map([['a', ['b']], ['b', ['a']]]))).toHaveLength(1);
  });
  it('resolves every relative import to a source file', () => {
    expect(graph.unresolved).toEqual([]);
  });
  it('has no import circle', () => {
    expect(cycles(graph.edges)).toEqual([]);
  });
  it('imports only packages below in the layer table', () => {
    expect(graph.upward).toEqual([]);
  });
  it('reaches other packages only through @seglog/<name>, never by a relative path', () => {
    expect(graph.escaping).toEqual([]);
  });
});
