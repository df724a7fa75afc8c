// The partition directories of a data directory: `<topic>-<partition>/`
// (one Log each) are found at open; `<topic>-<p>.<uuid>-delete` directories
// (an interrupted deleteLog) are removed; `-future`/`-stray` and unparseable
// names are skipped and listed with the reason. The naming rule is
// FileNames.classifyDataDirEntry, shared with the CLI.
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
