// scripts/install.cjs never fails an install: SEGLOG_NATIVE=0 skips the
// build, a missing node-gyp or a missing compiler only prints why. Run on a
// copy of the package so the real build/ is left alone.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './helpers.js';

const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

function copyPackage(root: string, withNodeModules: boolean): string {
  const dir = join(root, withNodeModules ? 'with-modules' : 'bare');
  for (const entry of ['package.json', 'binding.gyp', 'csrc', 'scripts']) {
    cpSync(join(PACKAGE_DIR, entry), join(dir, entry), { recursive: true });
  }
  if (withNodeModules) symlinkSync(join(PACKAGE_DIR, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

function install(dir: string, env: Record<string, string>): { status: number | null; output: string } {
  const child = spawnSync(process.execPath, ['scripts/install.cjs'], {
    // NODE_PATH (set by pnpm's runners) would find node-gyp outside the copy.
    cwd: dir, env: { ...process.env, SEGLOG_NATIVE: '', NODE_PATH: '', ...env }, encoding: 'utf8', timeout: 540_000,
  });
  return { status: child.status, output: `${child.stdout}${child.stderr}` };
}

describe('scripts/install.cjs', () => {
  const tmp = tempDir('install');
  afterAll(() => tmp.remove());
  const withModules = copyPackage(tmp.path, true);
  const bare = copyPackage(tmp.path, false);

  it('exits 0 without building when SEGLOG_NATIVE=0', () => {
    const result = install(withModules, { SEGLOG_NATIVE: '0' });
    expect(result.status).toBe(0);
    expect(result.output).toContain('SEGLOG_NATIVE=0, addon not built');
    expect(existsSync(join(withModules, 'build'))).toBe(false);
  });

  it('exits 0 when node-gyp cannot be found', () => {
    const result = install(bare, {});
    expect(result.status).toBe(0);
    expect(result.output).toContain('node-gyp not found');
  });

  it('exits 0 when the C++ compiler is missing, and leaves no addon behind', () => {
    const result = install(withModules, { CXX: '/nonexistent/c++', CC: '/nonexistent/cc' });
    expect(result.status).toBe(0);
    expect(result.output).toContain('@seglog/native: build failed');
    expect(existsSync(join(withModules, 'build', 'Release', 'seglog_native.node'))).toBe(false);
  });
});
