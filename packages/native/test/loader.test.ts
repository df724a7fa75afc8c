// The loader: SEGLOG_NATIVE=0, missing or stale builds and failed
// self-tests all leave loaded=false with a reason and never throw; the debug
// line appears only with SEGLOG_NATIVE_DEBUG=1. Also checked end to end in a
// child process importing the real module.
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as native from '../src/index.js';
import type { RawBinding } from '../src/internal/binding.js';
import { DEFAULT_ADDON_PATH, loadNative } from '../src/internal/loader.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const INDEX_URL = pathToFileURL(fileURLToPath(new URL('../src/index.ts', import.meta.url))).href;
const disabledHere = process.env['SEGLOG_NATIVE'] === '0';

const real = loadNative({ env: {} }).binding;
const withReal = disabledHere || real === null ? describe.skip : describe;

/** The real binding with some members replaced. */
function patched(overrides: Partial<Record<keyof RawBinding, unknown>>): () => unknown {
  return () => ({ ...(real as unknown as Record<string, unknown>), ...overrides });
}

function expectAllOff(result: ReturnType<typeof loadNative>, reason: RegExp): void {
  expect(result.binding).toBeNull();
  expect(result.capabilities).toEqual({
    loaded: false, reason: expect.stringMatching(reason), crc32c: false, crc32cHardware: false,
    fallocate: false, sendfile: false, fadvise: false, writeback: false, pwritevDatasync: false, pwritevMany: false, alignedAlloc: false,
  });
  expect(Object.isFrozen(result.capabilities)).toBe(true);
}

function runChild(env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const script = `const m = await import(${JSON.stringify(INDEX_URL)});
const fns = ['crc32c', 'fallocate', 'fallocateSync', 'fadvise', 'startWriteback', 'sendfile', 'pwritevDatasync', 'pwritevMany', 'alignedAlloc', 'bufferAddressMod', 'indexBatches', 'indexBatchesAsync', 'scanBatch', 'pageSize'];
console.log(JSON.stringify({ capabilities: m.capabilities, nulls: fns.filter((f) => m[f] === null) }));`;
  const child = spawnSync(process.execPath, ['--conditions=source', '--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: REPO_ROOT, env: { ...process.env, SEGLOG_NATIVE: '', SEGLOG_NATIVE_DEBUG: '', ...env }, encoding: 'utf8',
  });
  return { status: child.status, stdout: child.stdout, stderr: child.stderr };
}

describe('loadNative', () => {
  it.skipIf(disabledHere)('loads the built addon (build it with: node packages/native/scripts/install.cjs)', () => {
    // The guard for every native test: a build that fails to load or fails
    // its self-test must fail the suite, not skip it.
    expect(native.capabilities.reason).toBeNull();
    expect(native.capabilities.loaded).toBe(true);
  });

  it('is off with SEGLOG_NATIVE=0 and never touches the addon', () => {
    let required = false;
    const result = loadNative({ env: { SEGLOG_NATIVE: '0' }, requireAddon: () => { required = true; return real; } });
    expectAllOff(result, /SEGLOG_NATIVE=0/);
    expect(required).toBe(false);
  });

  it('reports a missing build instead of throwing', () => {
    expectAllOff(loadNative({ env: {}, addonPath: '/nonexistent/seglog_native.node' }), /addon not loaded from \/nonexistent/);
    expectAllOff(loadNative({ env: {}, requireAddon: () => { throw new Error('boom'); } }), /boom/);
  });

  it('refuses foreign or stale builds', () => {
    expectAllOff(loadNative({ env: {}, requireAddon: () => 42 }), /not an object/);
    expectAllOff(loadNative({ env: {}, requireAddon: () => ({ abiVersion: 0 }) }), /abiVersion 0, expected 5/);
  });

  it('logs one line only when SEGLOG_NATIVE_DEBUG=1', () => {
    const lines: string[] = [];
    loadNative({ env: { SEGLOG_NATIVE: '0' }, log: (line) => lines.push(line) });
    expect(lines).toEqual([]);
    loadNative({ env: { SEGLOG_NATIVE: '0', SEGLOG_NATIVE_DEBUG: '1' }, log: (line) => lines.push(line) });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!.replace('@seglog/native: ', ''))).toMatchObject({ loaded: false });
  });

  it('child process with SEGLOG_NATIVE=0: loaded=false with a reason, every function null, nothing logged', () => {
    const child = runChild({ SEGLOG_NATIVE: '0' });
    expect(child.status).toBe(0);
    expect(child.stderr).toBe('');
    const out = JSON.parse(child.stdout) as { capabilities: native.NativeCapabilities; nulls: string[] };
    expect(out.capabilities.loaded).toBe(false);
    expect(out.capabilities.reason).toMatch(/SEGLOG_NATIVE=0/);
    expect(out.nulls).toEqual(['crc32c', 'fallocate', 'fallocateSync', 'fadvise', 'startWriteback', 'sendfile', 'pwritevDatasync', 'pwritevMany', 'alignedAlloc', 'bufferAddressMod', 'indexBatches', 'indexBatchesAsync', 'scanBatch', 'pageSize']);
  });
});

withReal('loadNative with the built addon', () => {
  it('loads it by default with every capability of this Linux x86-64 machine', () => {
    expect(native.capabilities).toEqual({
      loaded: true, reason: null, crc32c: true, crc32cHardware: real!.crc32cHardwareAvailable,
      fallocate: true, sendfile: true, fadvise: true, writeback: true, pwritevDatasync: true, pwritevMany: true, alignedAlloc: true,
    });
    expect(Object.isFrozen(native.capabilities)).toBe(true);
    expect(DEFAULT_ADDON_PATH).toMatch(/build\/Release\/seglog_native\.node$/);
  });

  it('refuses a build whose CRC is wrong (known answers)', () => {
    const wrong = (buf: Uint8Array, seed: number): number => (real!.crc32c(buf, seed) ^ 1) >>> 0;
    expectAllOff(loadNative({ env: {}, requireAddon: patched({ crc32c: wrong }) }), /self-test failed: crc32c\(9 bytes\)/);
    expectAllOff(loadNative({ env: {}, requireAddon: patched({ crc32cSoftware: wrong }) }), /self-test failed: crc32cSoftware/);
  });

  it('refuses a build whose hardware CRC disagrees with software on long buffers only', () => {
    if (!real!.crc32cHardwareAvailable) return; // no hardware path on this CPU
    const longWrong = (buf: Uint8Array, seed: number): number =>
      buf.length > 1000 ? (real!.crc32cHardware(buf, seed) ^ 0x80) >>> 0 : real!.crc32cHardware(buf, seed);
    expectAllOff(loadNative({ env: {}, requireAddon: patched({ crc32cHardware: longWrong }) }), /crc32cHardware disagrees/);
  });

  it('refuses a build whose seed chaining is wrong', () => {
    const noChain = (buf: Uint8Array, seed: number): number => real!.crc32c(buf, seed === 0 ? 0 : seed ^ 1);
    expectAllOff(loadNative({ env: {}, requireAddon: patched({ crc32c: noChain }) }), /seed chaining/);
  });

  it('refuses a build whose aligned allocation is misaligned or not zeroed', () => {
    const misaligned = (size: number, alignment: number): Buffer => real!.alignedAlloc(size + 16, alignment).subarray(16);
    expectAllOff(loadNative({ env: {}, requireAddon: patched({ alignedAlloc: misaligned }) }), /address mod 4096 = 16/);
    const dirty = (size: number, alignment: number): Buffer => real!.alignedAlloc(size, alignment).fill(1, 100, 101);
    expectAllOff(loadNative({ env: {}, requireAddon: patched({ alignedAlloc: dirty }) }), /byte 100 not zero/);
  });

  it('refuses a build that claims a feature without its function, or throws in the self-test', () => {
    expectAllOff(loadNative({ env: {}, requireAddon: patched({ sendfile: undefined }) }), /features.sendfile without function sendfile/);
    const throwing = (): number => { throw new Error('kaput'); };
    expectAllOff(loadNative({ env: {}, requireAddon: patched({ crc32c: throwing }) }), /self-test failed: threw kaput/);
  });

  it('child process with SEGLOG_NATIVE_DEBUG=1 prints the capabilities once to stderr', () => {
    const child = runChild({ SEGLOG_NATIVE_DEBUG: '1' });
    expect(child.status).toBe(0);
    expect(child.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^@seglog\/native: \{"loaded":true,"reason":null/)]);
    expect((JSON.parse(child.stdout) as { nulls: string[] }).nulls).toEqual([]);
  });
});
