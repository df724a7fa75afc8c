// DirState: what `seglog recover` compares before and after the engine's
// recovery ran, to report what it did without reaching into the engine:
// every file's size, and a SHA-256 of the small files (indexes, snapshots,
// checkpoints). `.log` files are compared by size only — recovery changes a
// .log only by cutting its tail or deleting it, and hashing gigabytes would
// make a dry run as slow as a copy.

import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Io } from '@seglog/io';
import { FileNames } from '@seglog/log';

export interface FileState {
  readonly size: number;
  /** SHA-256 (hex) for files other than .log, else null. */
  readonly hash: string | null;
  /** The bytes of files other than .log (to put them back if the engine refuses), else null. */
  readonly bytes: Buffer | null;
}

/** File name → state, for one directory (not recursive). */
export type DirState = Map<string, FileState>;

/** Files whose change says nothing about recovery (the lock; the marker recover itself removes and the engine rewrites). */
const IGNORED: ReadonlySet<string> = new Set([FileNames.lock, FileNames.cleanShutdown]);

export async function readDirState(io: Io, dir: string): Promise<DirState> {
  const state: DirState = new Map();
  for (const name of await io.readdir(dir)) {
    if (IGNORED.has(name)) continue;
    const file = path.join(dir, name);
    const stat = await io.stat(file);
    if (!stat.isFile) continue;
    const bytes = name.endsWith('.log') ? null : await io.readFile(file);
    state.set(name, { size: stat.size, hash: bytes === null ? null : createHash('sha256').update(bytes).digest('hex'), bytes });
  }
  return state;
}

export interface FileChange {
  readonly name: string;
  readonly kind: 'log-cut' | 'log-deleted' | 'log-created' | 'log-grown' | 'rebuilt' | 'created' | 'deleted';
  readonly before: number;
  readonly after: number;
}

/** The changes from `before` to `after`, in name order. */
export function diffDirState(before: DirState, after: DirState): FileChange[] {
  const changes: FileChange[] = [];
  const names = [...new Set([...before.keys(), ...after.keys()])].sort();
  for (const name of names) {
    const was = before.get(name);
    const now = after.get(name);
    const isLog = name.endsWith('.log');
    if (was !== undefined && now === undefined) {
      changes.push({ name, kind: isLog ? 'log-deleted' : 'deleted', before: was.size, after: 0 });
    } else if (was === undefined && now !== undefined) {
      changes.push({ name, kind: isLog ? 'log-created' : 'created', before: 0, after: now.size });
    } else if (was !== undefined && now !== undefined) {
      if (isLog && now.size < was.size) changes.push({ name, kind: 'log-cut', before: was.size, after: now.size });
      else if (isLog && now.size > was.size) changes.push({ name, kind: 'log-grown', before: was.size, after: now.size });
      else if (!isLog && (now.hash !== was.hash || now.size !== was.size)) changes.push({ name, kind: 'rebuilt', before: was.size, after: now.size });
    }
  }
  return changes;
}

/**
 * Puts back every file other than .log that differs from `before` (changed
 * or deleted): used when the engine refused a recovery after it had already
 * reset indexes it was about to rebuild. `.log` files are never touched here.
 */
export async function restoreSmallFiles(io: Io, dir: string, before: DirState): Promise<string[]> {
  const now = await readDirState(io, dir);
  const restored: string[] = [];
  for (const [name, was] of before) {
    if (was.bytes === null || now.get(name)?.hash === was.hash) continue;
    const handle = await io.open(path.join(dir, name), { create: true });
    try {
      await handle.truncate(0);
      if (was.bytes.length > 0) await handle.pwrite(was.bytes, 0);
      await handle.fsync();
    } finally {
      await handle.close();
    }
    restored.push(name);
  }
  if (restored.length > 0) await io.fsyncDir(dir);
  return restored;
}
