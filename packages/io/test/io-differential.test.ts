// The same random sequence of operations against NodeIo (a real temp dir),
// NodeIo without the addon's one-job pwritevDatasync (an injected node:fs,
// so the write-then-fdatasync fallback runs) and SimIo (no faults, no crash)
// must give the same results, the same error codes and the same tree. This
// keeps SimIo honest (engine tests run on it) and the native write+sync path
// equal to its fallback.
import fs from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capabilities } from '@seglog/native';
import { NodeIo, SimIo } from '../src/index.js';
import type { AllocateMode, Io, IoFile, NodeIoFs } from '../src/index.js';
import { codeOf, dumpTree, tempDir } from './helpers.js';

const SLOTS = 3;
const names = ['a', 'b', 'c', 'd', 'e', 'd/a', 'd/b', 'e/a', 'd/e'] as const;
type Name = (typeof names)[number];

type Op =
  | { op: 'open'; slot: number; name: Name; create: boolean; exclusive: boolean; readOnly: boolean }
  | { op: 'close' | 'fdatasync' | 'fsync' | 'size'; slot: number }
  | { op: 'pwrite' | 'pwriteSync'; slot: number; position: number; data: Uint8Array }
  | { op: 'pwritev' | 'pwritevDatasync'; slot: number; position: number; parts: Uint8Array[] }
  | { op: 'pread' | 'preadSync'; slot: number; position: number; length: number }
  | { op: 'truncate'; slot: number; size: number }
  | { op: 'allocate'; slot: number; position: number; length: number; mode: AllocateMode }
  | { op: 'rename'; from: Name; to: Name }
  | { op: 'unlink' | 'rmdir' | 'readdir' | 'readFile' | 'stat' | 'exists' | 'fsyncDir'; name: Name }
  | { op: 'mkdir'; name: Name; recursive: boolean };

const slot = fc.integer({ min: 0, max: SLOTS - 1 });
const name = fc.constantFrom(...names);
const position = fc.oneof(fc.integer({ min: 0, max: 9000 }), fc.constantFrom(0, 4095, 4096, 8192));
const data = fc.uint8Array({ maxLength: 3000 });

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('open' as const), slot, name, create: fc.boolean(), exclusive: fc.boolean(),
      readOnly: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('close' as const, 'fdatasync' as const, 'fsync' as const, 'size' as const), slot }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constantFrom('pwrite' as const, 'pwriteSync' as const), slot, position, data }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constantFrom('pwritev' as const, 'pwritevDatasync' as const), slot, position, parts: fc.array(data, { maxLength: 4 }) }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constantFrom('pread' as const, 'preadSync' as const), slot, position, length: fc.integer({ min: 0, max: 5000 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('truncate' as const), slot, size: fc.integer({ min: 0, max: 10000 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('allocate' as const), slot, position, length: fc.integer({ min: 1, max: 9000 }),
      mode: fc.constantFrom<AllocateMode>('fallocate', 'fallocate-keep-size', 'truncate', 'zero'),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('rename' as const), from: name, to: name }) },
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constantFrom('unlink' as const, 'rmdir' as const, 'readdir' as const, 'readFile' as const, 'stat' as const, 'exists' as const, 'fsyncDir' as const),
      name,
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('mkdir' as const), name, recursive: fc.boolean() }) },
);

/** Runs one op; returns a comparable result string (value or error code). */
async function exec(io: Io, slots: Array<IoFile | null>, op: Op, root: string): Promise<string> {
  const at = (n: Name): string => `${root}/${n}`;
  if ('slot' in op && op.op !== 'open' && slots[op.slot] === null) return 'no-handle';
  const file = 'slot' in op ? (slots[op.slot] as IoFile) : (null as unknown as IoFile);
  const result = async (): Promise<string> => {
    switch (op.op) {
      case 'open': {
        const previous = slots[op.slot];
        if (previous !== null && previous !== undefined) {
          slots[op.slot] = null;
          await previous.close();
        }
        const options = { ...(op.create ? { create: true } : {}), ...(op.create && op.exclusive ? { exclusive: true } : {}), ...(op.readOnly ? { readOnly: true } : {}) };
        slots[op.slot] = await io.open(at(op.name), options);
        return 'opened';
      }
      case 'close':
        slots[op.slot] = null;
        await file.close();
        return 'closed';
      case 'fdatasync':
        await file.fdatasync();
        return 'synced';
      case 'fsync':
        await file.fsync();
        return 'synced';
      case 'size':
        return `size ${await file.size()}`;
      case 'pwrite':
        await file.pwrite(op.data, op.position);
        return 'written';
      case 'pwriteSync':
        file.pwriteSync(op.data, op.position);
        return 'written';
      case 'pwritev':
        await file.pwritev(op.parts, op.position);
        return 'written';
      case 'pwritevDatasync':
        await file.pwritevDatasync(op.parts, op.position);
        return 'written and synced';
      case 'pread':
      case 'preadSync': {
        const buffer = Buffer.alloc(op.length);
        const n = op.op === 'pread' ? await file.pread(buffer, op.position) : file.preadSync(buffer, op.position);
        return `read ${n} ${buffer.subarray(0, n).toString('hex')}`;
      }
      case 'truncate':
        await file.truncate(op.size);
        return 'truncated';
      case 'allocate':
        await file.allocate(op.position, op.length, op.mode);
        return 'allocated';
      case 'rename':
        await io.rename(at(op.from), at(op.to));
        return 'renamed';
      case 'unlink':
        await io.unlink(at(op.name));
        return 'unlinked';
      case 'rmdir':
        await io.rmdir(at(op.name));
        return 'removed';
      case 'readdir':
        return `entries ${(await io.readdir(at(op.name))).join(',')}`;
      case 'readFile':
        return `file ${(await io.readFile(at(op.name))).toString('hex')}`;
      case 'stat': {
        const s = await io.stat(at(op.name));
        return s.isFile ? `file size ${s.size}` : `dir ${s.isDirectory}`;
      }
      case 'exists':
        return `exists ${await io.exists(at(op.name))}`;
      case 'fsyncDir':
        await io.fsyncDir(at(op.name));
        return 'dir synced';
      case 'mkdir':
        await io.mkdir(at(op.name), { recursive: op.recursive });
        return 'made';
    }
  };
  let value = '';
  const code = await codeOf(async () => (value = await result()));
  return code === 'ok' ? value : code;
}

/** node:fs passed through: NodeIo then never uses the addon's pwritevDatasync (the fallback path). */
const plainFs = {
  write: fs.write, writev: fs.writev, read: fs.read, writeSync: fs.writeSync, readSync: fs.readSync,
} as unknown as NodeIoFs;

async function runBoth(ops: readonly Op[]): Promise<void> {
  const { dir, cleanup } = tempDir('diff');
  const root = `${dir}/root`;
  const fallbackRoot = `${dir}/fallback`;
  const node = new NodeIo();
  const fallback = new NodeIo({ fs: plainFs });
  const sim = new SimIo();
  const nodeSlots: Array<IoFile | null> = new Array<IoFile | null>(SLOTS).fill(null);
  const fallbackSlots: Array<IoFile | null> = new Array<IoFile | null>(SLOTS).fill(null);
  const simSlots: Array<IoFile | null> = new Array<IoFile | null>(SLOTS).fill(null);
  try {
    await node.mkdir(root);
    await fallback.mkdir(fallbackRoot);
    await sim.mkdir(root, { recursive: true });
    const nodeResults: string[] = [];
    const fallbackResults: string[] = [];
    const simResults: string[] = [];
    for (const op of ops) {
      nodeResults.push(`${op.op}: ${await exec(node, nodeSlots, op, root)}`);
      fallbackResults.push(`${op.op}: ${await exec(fallback, fallbackSlots, op, fallbackRoot)}`);
      simResults.push(`${op.op}: ${await exec(sim, simSlots, op, root)}`);
      expect(simResults).toEqual(nodeResults);
      expect(fallbackResults).toEqual(nodeResults);
    }
    const tree = await dumpTree(node, root);
    expect(await dumpTree(sim, root)).toEqual(tree);
    expect(await dumpTree(fallback, fallbackRoot)).toEqual(tree);
    // Which path served pwritevDatasync: the addon when present, never for the injected fs.
    expect(fallback.stats.writeSyncNative).toBe(0);
    if (capabilities.pwritevDatasync) expect(node.stats.writeSyncFallback).toBe(0);
    else expect(node.stats.writeSyncNative).toBe(0);
    for (let i = 0; i < SLOTS; i++) {
      await nodeSlots[i]?.close();
      await fallbackSlots[i]?.close();
      await simSlots[i]?.close();
    }
    expect(node.openHandles()).toEqual([]);
    expect(fallback.openHandles()).toEqual([]);
    expect(sim.openHandles()).toEqual([]);
  } finally {
    for (const f of nodeSlots) await f?.close().catch(() => {});
    for (const f of fallbackSlots) await f?.close().catch(() => {});
    cleanup();
  }
}

/** Every run starts with a directory and a handle in each slot, so data operations have files to act on. */
const prologue: readonly Op[] = [
  { op: 'mkdir', name: 'd', recursive: false },
  { op: 'open', slot: 0, name: 'a', create: true, exclusive: true, readOnly: false },
  { op: 'open', slot: 1, name: 'b', create: true, exclusive: false, readOnly: false },
  { op: 'open', slot: 2, name: 'd/a', create: true, exclusive: false, readOnly: false },
];

describe('NodeIo and SimIo agree', () => {
  it('on random operation sequences: results, error codes and final tree', async () => {
    const sequences = fc.array(opArb, { minLength: 5, maxLength: 60 }).map((ops) => [...prologue, ...ops]);
    await fc.assert(fc.asyncProperty(sequences, runBoth), { numRuns: 150 });
  });

  it('on pwritevDatasync: appends, overwrites, holes, empty parts, read-only and closed handles', async () => {
    const bytes = (n: number, v: number): Uint8Array => new Uint8Array(n).fill(v);
    await runBoth([
      ...prologue,
      { op: 'pwritevDatasync', slot: 0, position: 0, parts: [bytes(3000, 1), bytes(0, 0), bytes(1500, 2)] },
      { op: 'pwritevDatasync', slot: 0, position: 4000, parts: [bytes(200, 3)] },
      { op: 'pwritevDatasync', slot: 0, position: 9000, parts: [bytes(10, 4)] },
      { op: 'pwritevDatasync', slot: 1, position: 0, parts: [] },
      { op: 'pread', slot: 0, position: 0, length: 9010 },
      { op: 'open', slot: 2, name: 'a', create: false, exclusive: false, readOnly: true },
      { op: 'pwritevDatasync', slot: 2, position: 0, parts: [bytes(1, 5)] },
      { op: 'close', slot: 1 },
      { op: 'open', slot: 1, name: 'b', create: false, exclusive: false, readOnly: false },
      { op: 'close', slot: 1 },
      { op: 'pwritevDatasync', slot: 1, position: 0, parts: [bytes(1, 6)] },
    ]);
  });

  it('on the rename and directory edge cases', async () => {
    const ops: Op[] = [
      { op: 'mkdir', name: 'd', recursive: false },
      { op: 'open', slot: 0, name: 'd/a', create: true, exclusive: true, readOnly: false },
      { op: 'rename', from: 'd/a', to: 'd' },
      { op: 'rename', from: 'd', to: 'd/e' },
      { op: 'rename', from: 'c', to: 'd/a/x' as Name },
      { op: 'rename', from: 'd', to: 'a' },
      { op: 'mkdir', name: 'e', recursive: false },
      { op: 'rename', from: 'd/a', to: 'e' },
      { op: 'rename', from: 'e', to: 'd' },
      { op: 'open', slot: 1, name: 'd', create: false, exclusive: false, readOnly: true },
      { op: 'open', slot: 1, name: 'd', create: true, exclusive: true, readOnly: true },
      { op: 'unlink', name: 'd' },
      { op: 'rmdir', name: 'd/a' },
      { op: 'rmdir', name: 'd' },
      { op: 'mkdir', name: 'd/a', recursive: true },
      { op: 'mkdir', name: 'd/e', recursive: true },
      { op: 'unlink', name: 'd/a' },
      { op: 'pwrite', slot: 0, position: 10, data: new Uint8Array([1, 2, 3]) },
      { op: 'pread', slot: 0, position: 0, length: 20 },
      { op: 'rename', from: 'e', to: 'd/e' },
      { op: 'readdir', name: 'd' },
    ];
    await runBoth(ops);
  });
});
