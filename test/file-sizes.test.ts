// The rooms of packages/log stay small enough to read (issue 17, STYLE.md
// "Packages and files"): no source file over 600 lines, no class over 400
// lines (declaration start to closing brace, as the TypeScript compiler
// parses it, nested and expression classes included), and every file opens
// with a comment that states its format or invariants. A room that grows
// past these is split by meaning (see packages/log/README.md, "Map of src/"),
// not trimmed of comments.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const logSrc = path.join(root, 'packages', 'log', 'src');

const MAX_FILE_LINES = 600;
const MAX_CLASS_LINES = 400;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(full);
  }
  return out.sort();
}

interface Measured {
  readonly lines: number;
  readonly classes: { readonly name: string; readonly lines: number }[];
  /** The file's first token is preceded by a comment (or the file is only a comment). */
  readonly opensWithComment: boolean;
}

/** Lines of the file (a final newline ends the last line, it does not start one) and of each class. */
function measure(text: string, fileName: string): Measured {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const classes: { name: string; lines: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
      const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const last = file.getLineAndCharacterOfPosition(node.end).line;
      classes.push({ name: node.name?.text ?? '<anonymous>', lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  const lines = text.length === 0 ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  const leading = text.trimStart();
  return { lines, classes, opensWithComment: leading.startsWith('//') || leading.startsWith('/*') };
}

/** What breaks the limits in `text`, one line each. */
function offences(text: string, name: string): string[] {
  const m = measure(text, name);
  const out: string[] = [];
  if (m.lines > MAX_FILE_LINES) out.push(`${name}: ${m.lines} lines (at most ${MAX_FILE_LINES})`);
  for (const c of m.classes) if (c.lines > MAX_CLASS_LINES) out.push(`${name}: class ${c.name} has ${c.lines} lines (at most ${MAX_CLASS_LINES})`);
  if (!m.opensWithComment) out.push(`${name}: does not open with a comment (format, invariants)`);
  return out;
}

function classOf(bodyLines: number): string {
  const members = Array.from({ length: bodyLines - 2 }, (_, i) => `  m${i}(): number { return ${i}; }`);
  return ['class Big {', ...members, '}'].join('\n');
}

describe('file and class sizes in packages/log/src', () => {
  it('the measure counts what the limits mean (and so can fail)', () => {
    expect(measure(`// c\n${classOf(MAX_CLASS_LINES)}\n`, 'a.ts').classes).toEqual([{ name: 'Big', lines: MAX_CLASS_LINES }]);
    expect(offences(`// c\n${classOf(MAX_CLASS_LINES)}\n`, 'a.ts')).toEqual([]);
    expect(offences(`// c\n${classOf(MAX_CLASS_LINES + 1)}\n`, 'a.ts')).toEqual([`a.ts: class Big has ${MAX_CLASS_LINES + 1} lines (at most ${MAX_CLASS_LINES})`]);
    // A class nested in a function and a class expression count too; a leading doc comment does not.
    const nested = `/** doc */\nexport function f() {\n  return ${classOf(MAX_CLASS_LINES + 1).replace('class Big', 'class')};\n}\n`;
    expect(measure(nested, 'b.ts').classes).toEqual([{ name: '<anonymous>', lines: MAX_CLASS_LINES + 1 }]);
    const file = `// c\n${'const x = 1;\n'.repeat(MAX_FILE_LINES - 1)}`;
    expect(measure(file, 'c.ts').lines).toBe(MAX_FILE_LINES);
    expect(offences(file, 'c.ts')).toEqual([]);
    expect(offences(`${file}const y = 2;\n`, 'c.ts')).toEqual([`c.ts: ${MAX_FILE_LINES + 1} lines (at most ${MAX_FILE_LINES})`]);
    expect(offences('\nimport x from "y";\n', 'd.ts')).toEqual(['d.ts: does not open with a comment (format, invariants)']);
    expect(offences('\n/**\n * c\n */\nimport x from "y";\n', 'd.ts')).toEqual([]);
  });

  it(`no file over ${MAX_FILE_LINES} lines, no class over ${MAX_CLASS_LINES}, every file opens with its comment`, () => {
    const files = sourceFiles(logSrc);
    expect(files.length).toBeGreaterThan(50);
    const found = files.flatMap((file) => offences(readFileSync(file, 'utf8'), path.relative(root, file)));
    expect(found).toEqual([]);
    // The measure saw the big classes this rule is about (Log, LogManager, Segment, DirectSegmentWriter).
    const names = new Set(files.flatMap((file) => measure(readFileSync(file, 'utf8'), file).classes.map((c) => c.name)));
    for (const name of ['Log', 'LogManager', 'Segment', 'DirectSegmentWriter']) expect(names.has(name)).toBe(true);
  });
});
