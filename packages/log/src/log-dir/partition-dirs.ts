// The partition directories of a data directory: `<topic>-<partition>/`
// (one Log each) are found at open; `<topic>-<p>.<uuid>-delete` directories
// (an interrupted deleteLog) are removed; `-future`/`-stray` and unparseable
// names are skipped and listed with the reason. The naming rule is
// FileNames.classifyDataDirEntry, shared with the CLI. Also here: loading
// the found partitions a few at a time, and deleting one (rename to
// `-delete`, fsync, remove).
import { randomUUID } from 'node:crypto';
import type { Io } from '@seglog/io';
import { FileNames } from '../file-names.js';
import type { ParsedPartitionDirName } from '../file-names.js';

/** A directory entry open() did not load, and why. */
export interface SkippedEntry {
  readonly name: string;
  readonly reason: string;
}

/** What discoverPartitionDirs found: partitions to load and `-delete` directories to remove. */
export interface PartitionDirs {
  readonly toLoad: ParsedPartitionDirName[];
  readonly toDelete: string[];
}

export function join(dir: string, name: string): string {
  return dir.endsWith('/') ? dir + name : `${dir}/${name}`;
}

/** Classifies every entry of `dir`; skipped ones are appended to `skipped`. */
export async function discoverPartitionDirs(io: Io, dir: string, skipped: SkippedEntry[]): Promise<PartitionDirs> {
  const toLoad: ParsedPartitionDirName[] = [];
  const toDelete: string[] = [];
  for (const name of await io.readdir(dir)) {
    const parsed = await classify(io, dir, name, skipped);
    if (parsed === null) continue;
    if (parsed.state === 'live') toLoad.push(parsed);
    else if (parsed.state === 'delete') toDelete.push(name);
    else skipped.push({ name, reason: `a -${parsed.state} directory (not loaded)` });
  }
  return { toLoad, toDelete };
}

/**
 * A partition directory's parsed name, or null for anything else (recorded
 * in `skipped` unless it is one of the data directory's own files). The rule
 * is FileNames.classifyDataDirEntry, shared with the CLI.
 */
async function classify(io: Io, dir: string, name: string, skipped: SkippedEntry[]): Promise<ParsedPartitionDirName | null> {
  const stat = await io.stat(join(dir, name));
  const entry = FileNames.classifyDataDirEntry(name, stat.isDirectory);
  if (entry.kind === 'partition') return entry.partition;
  if (entry.kind === 'other') skipped.push({ name, reason: entry.reason });
  return null;
}

/** Removes a partition directory: its files, then the directory (not fsynced: the caller fsyncs the parent). */
export async function removeTree(io: Io, path: string): Promise<void> {
  for (const name of await io.readdir(path)) {
    const child = join(path, name);
    if ((await io.stat(child)).isDirectory) await removeTree(io, child);
    else await io.unlink(child);
  }
  await io.rmdir(path);
}

/**
 * Deletes a closed partition's directory: renamed to
 * `<topic>-<p>.<uuid>-delete` (FileNames.deleteDirName), the data directory
 * fsynced (from here on the deletion survives a crash, finished by the next
 * open), then its files and the directory removed and the data directory
 * fsynced again.
 */
export async function deletePartitionDir(io: Io, dir: string, topic: string, partition: number): Promise<void> {
  const doomed = join(dir, FileNames.deleteDirName(topic, partition, randomUUID().replaceAll('-', '')));
  await io.rename(join(dir, FileNames.partitionDirName(topic, partition)), doomed);
  await io.fsyncDir(dir);
  await removeTree(io, doomed);
  await io.fsyncDir(dir);
}

/**
 * Runs `load` for every partition of `toLoad`, in order, at most
 * `concurrency` at once; once all have settled, rejects with the first
 * failure (in worker order), if any.
 */
export async function loadPartitions(toLoad: readonly ParsedPartitionDirName[], concurrency: number, load: (tp: ParsedPartitionDirName) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < toLoad.length) await load(toLoad[next++] as ParsedPartitionDirName);
  };
  const workers = Array.from({ length: Math.min(concurrency, toLoad.length) }, worker);
  const results = await Promise.allSettled(workers);
  const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (rejected !== undefined) throw rejected.reason;
}

/** Removes the `-delete` directories discoverPartitionDirs found, then fsyncs the data directory (if any went). */
export async function removeDeleteDirs(io: Io, dir: string, names: readonly string[]): Promise<void> {
  for (const name of names) await removeTree(io, join(dir, name));
  if (names.length > 0) await io.fsyncDir(dir);
}
