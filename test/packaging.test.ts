// The packages as a project outside the workspace gets them (issue 19):
// build (tsc -b), `pnpm pack` every package, `npm install` the tarballs into
// a fresh temporary project (mkdtemp, outside the workspace, no "source"
// condition), then run there a plain ESM JavaScript program and a
// TypeScript program typechecked by tsc, both using the front door: append,
// durable, read back, reopen, records intact. A second project installs
// with --ignore-scripts (no native build: addon, zstd, fs-ext, mmap-io) and
// checks every package still imports, the pure-JS paths work, zstd and the
// directory lock refuse with typed errors, and `npm rebuild fs-ext` (the
// remedy the lock error names) makes openLog work.
//
// Our packages install from the local tarballs; third-party dependencies
// (and typescript for the TypeScript program) come from the npm registry.
// Bounded by counts (100 records), never by time.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const packagesDir = path.join(root, 'packages');
const TYPESCRIPT = 'typescript@5.9.3';
const TYPES_NODE = '@types/node@20.19.43';

function run(command: string, args: readonly string[], cwd: string): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_update_notifier: 'false' } });
}

const ESM_PROGRAM = `
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openLog } from '@seglog/log';

const dir = path.join(mkdtempSync(path.join(tmpdir(), 'seglog-consumer-')), 'data');
const log = await openLog(dir);
for (let i = 0; i < 100; i += 10) {
  await log.append(Array.from({ length: 10 }, (_, k) => ({ key: 'k' + (i + k), value: 'v' + (i + k) })));
}
await log.durable();
const durable = log.durableOffset;
await log.close();
const again = await openLog(dir);
let count = 0;
for await (const record of again.records()) {
  if (record.value.toString() !== 'v' + record.offset || record.key.toString() !== 'k' + record.offset) throw new Error('record ' + record.offset + ' differs');
  count++;
}
await again.close();
console.log(JSON.stringify({ count, durable, clean: again.hadCleanShutdown }));
`;

const TS_PROGRAM = `
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openLog } from '@seglog/log';
import type { EmbeddedLog } from '@seglog/log';
import type { LogRecord } from '@seglog/records';

async function main(): Promise<void> {
  const dir: string = path.join(mkdtempSync(path.join(tmpdir(), 'seglog-consumer-ts-')), 'data');
  const log: EmbeddedLog = await openLog(dir, { config: { segmentBytes: 4096 } });
  for (let i = 0; i < 100; i++) {
    const result = await log.append([{ value: Buffer.from('value-' + i) }]);
    if (result.lastOffset !== i) throw new Error('offset ' + result.lastOffset);
  }
  await log.durable();
  await log.close();
  const again: EmbeddedLog = await openLog(dir);
  const values: string[] = [];
  for await (const record of again.records({ from: 0 })) {
    const typed: LogRecord = record;
    values.push(typed.value?.toString('utf8') ?? '');
  }
  await again.close();
  const intact = values.every((v, i) => v === 'value-' + i);
  console.log(JSON.stringify({ count: values.length, intact, segments: again.log.numberOfSegments }));
}
await main();
`;

const IMPORT_PROGRAM = `
const names = ['common', 'records', 'io', 'native', 'log', 'fetch', 'protocol', 'broker', 'load', 'cli'];
const loaded = [];
for (const name of names) { await import('@seglog/' + name); loaded.push(name); }
const { buildBatch, RecordBatch, Codec, compress } = await import('@seglog/records');
const batch = new RecordBatch(buildBatch({ records: [{ value: 'x' }], compression: Codec.gzip }));
let zstd = 'ok';
try { compress(Codec.zstd, Buffer.from('abc')); } catch (error) { zstd = error.code; }
const { openLog } = await import('@seglog/log');
const { mkdtempSync } = await import('node:fs');
const { tmpdir } = await import('node:os');
let lock = 'ok';
try {
  const log = await openLog(mkdtempSync(tmpdir() + '/seglog-bare-') + '/data');
  await log.append([{ value: 'x' }]);
  await log.durable();
  await log.close();
} catch (error) { lock = error.code; }
console.log(JSON.stringify({ loaded: loaded.length, valid: batch.isValid(), zstd, lock }));
`;

function packAll(into: string): string[] {
  run(path.join(root, 'node_modules', '.bin', 'tsc'), ['-b'], root);
  for (const name of readdirSync(packagesDir).sort()) {
    run('npx', ['-y', 'pnpm@12.4.2', 'pack', '--pack-destination', into], path.join(packagesDir, name));
  }
  return readdirSync(into).filter((f) => f.endsWith('.tgz')).map((f) => path.join(into, f)).sort();
}

function newProject(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'seglog-packaging-'));
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'seglog-consumer', private: true, type: 'module' }));
  return dir;
}

describe('the packages installed outside the workspace', () => {
  it('pack, install with npm, and run an ESM program and a tsc-checked TypeScript program', () => {
    const work = mkdtempSync(path.join(tmpdir(), 'seglog-tarballs-'));
    const project = newProject();
    const bare = newProject();
    try {
      const tarballs = packAll(work);
      expect(tarballs.map((t) => path.basename(t))).toEqual(readdirSync(packagesDir).sort().map((n) => `seglog-${n}-0.1.0.tgz`));
      for (const name of readdirSync(packagesDir)) {
        const manifest = JSON.parse(readFileSync(path.join(packagesDir, name, 'package.json'), 'utf8')) as Record<string, unknown>;
        expect(manifest['private']).toBeUndefined();
        expect(manifest['license']).toBe('Apache-2.0');
        expect(Object.keys((manifest['exports'] as Record<string, Record<string, string>>)['.']!)).toEqual(['source', 'types', 'default']);
      }

      run('npm', ['install', '--no-audit', '--no-fund', ...tarballs, TYPESCRIPT, TYPES_NODE], project);
      writeFileSync(path.join(project, 'main.mjs'), ESM_PROGRAM);
      expect(JSON.parse(run('node', ['main.mjs'], project))).toEqual({ count: 100, durable: 100, clean: true });

      writeFileSync(path.join(project, 'main.ts'), TS_PROGRAM);
      writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({
        compilerOptions: { target: 'ES2023', lib: ['ES2023'], module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: ['node'], outDir: 'out', skipLibCheck: false },
        files: ['main.ts'],
      }));
      run(path.join(project, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], project);
      expect(JSON.parse(run('node', ['out/main.js'], project))).toEqual({ count: 100, intact: true, segments: expect.any(Number) as number });

      run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', ...tarballs], bare);
      writeFileSync(path.join(bare, 'imports.mjs'), IMPORT_PROGRAM);
      // Without fs-ext's build there is no flock: openLog refuses (typed) rather than fake the lock ...
      expect(JSON.parse(run('node', ['imports.mjs'], bare))).toEqual({
        loaded: 10, valid: true, zstd: 'SEGLOG_ERR_RECORDS_UNSUPPORTED_CODEC', lock: 'SEGLOG_ERR_IO_LOCK_UNAVAILABLE',
      });
      // ... and the remedy its message names works.
      run('npm', ['rebuild', 'fs-ext'], bare);
      expect(JSON.parse(run('node', ['imports.mjs'], bare))).toMatchObject({ loaded: 10, lock: 'ok' });
    } finally {
      for (const dir of [work, project, bare]) rmSync(dir, { recursive: true, force: true });
    }
  });
});
