// `pnpm run docs` (TypeDoc, typedoc.json; bare `pnpm docs` is a pnpm built-in) builds the API reference from the doc
// comments with warnings treated as errors; here into a temporary folder,
// and the front door must be in it.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

describe('pnpm run docs', () => {
  it('builds the API reference without warnings, openLog included', () => {
    const config = JSON.parse(readFileSync(path.join(root, 'typedoc.json'), 'utf8')) as Record<string, unknown>;
    expect(config['treatWarningsAsErrors']).toBe(true);
    const scripts = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts['docs']).toBe('typedoc');
    expect(config['out']).toBe('docs/api');
    expect(readFileSync(path.join(root, '.gitignore'), 'utf8').split('\n')).toContain('docs/api/');
    const out = mkdtempSync(path.join(tmpdir(), 'seglog-docs-'));
    try {
      // Throws (non-zero exit) on any warning.
      execFileSync(path.join(root, 'node_modules', '.bin', 'typedoc'), ['--out', out, '--treatWarningsAsErrors'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      expect(existsSync(path.join(out, 'index.html'))).toBe(true);
      const pages = readdirSync(out, { recursive: true }).map(String);
      expect(pages.some((p) => p.includes('openLog'))).toBe(true);
      expect(pages.some((p) => p.includes('EmbeddedLog'))).toBe(true);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
