// Finding the partitions an operator command works on. A path is either a
// partition directory (it holds `.log` files, or its name is
// `<topic>-<partition>` with no partition directories inside) or a data
// directory (reference/kafka-storage.md §1: `<topic>-<partition>`
// subdirectories plus `.lock`, checkpoints and the clean-shutdown marker).
// Read only: nothing here creates, locks or changes a file.

import path from 'node:path';
import type { Io } from '@seglog/io';
import { FileNames } from '@seglog/log';
import type { TopicPartition } from '@seglog/log';
import { cliError } from './cli-error.js';

export interface PartitionDir {
  readonly dir: string;
  /** Parsed from the directory name, or null when the name is not `<topic>-<partition>`. */
  readonly topicPartition: TopicPartition | null;
  /** Display name: the directory's base name. */
  readonly name: string;
}

export interface LogDirs {
  readonly kind: 'data' | 'partition';
  /** The data directory (for 'partition': its parent, which may not be one). */
  readonly dataDir: string;
  readonly partitions: PartitionDir[];
}

const DATA_DIR_FILES: readonly string[] = [
  FileNames.recoveryPointCheckpoint, FileNames.logStartOffsetCheckpoint, FileNames.cleanShutdown, FileNames.lock, FileNames.sealedSizes,
  FileNames.cleanerOffsetCheckpoint, FileNames.cleanerStats,
];

/** A live `<topic>-<partition>` name, or null (FileNames.classifyDataDirEntry's rule, as the LogManager loads). */
function parseLive(name: string): TopicPartition | null {
  const entry = FileNames.classifyDataDirEntry(name, true);
  if (entry.kind !== 'partition' || entry.partition.state !== 'live') return null;
  return { topic: entry.partition.topic, partition: entry.partition.partition };
}

/** Resolves `target` to a data directory or a partition directory. */
export async function resolveLogDirs(io: Io, target: string): Promise<LogDirs> {
  const dir = path.resolve(target);
  const stat = await io.stat(dir);
  if (!stat.isDirectory) throw cliError('SEGLOG_ERR_CLI_NOT_A_LOG_DIR', `${target} is not a directory`, { path: dir });
  const names = await io.readdir(dir);
  const partitions: PartitionDir[] = [];
  for (const name of names) {
    const topicPartition = parseLive(name);
    if (topicPartition === null) continue;
    if ((await io.stat(path.join(dir, name))).isDirectory) partitions.push({ dir: path.join(dir, name), topicPartition, name });
  }
  const hasLogs = names.some((name) => name.endsWith('.log'));
  const ownName = path.basename(dir);
  if (hasLogs || (partitions.length === 0 && parseLive(ownName) !== null && !names.some((n) => DATA_DIR_FILES.includes(n)))) {
    return { kind: 'partition', dataDir: path.dirname(dir), partitions: [{ dir, topicPartition: parseLive(ownName), name: ownName }] };
  }
  if (partitions.length === 0 && !names.some((n) => DATA_DIR_FILES.includes(n))) {
    throw cliError('SEGLOG_ERR_CLI_NOT_A_LOG_DIR', `${target} is neither a data directory nor a partition directory (no <topic>-<partition> directories, no .log files)`, { path: dir });
  }
  partitions.sort((a, b) => compareTopicPartition(a.topicPartition, b.topicPartition));
  return { kind: 'data', dataDir: dir, partitions };
}

function compareTopicPartition(a: TopicPartition | null, b: TopicPartition | null): number {
  if (a === null || b === null) return 0;
  return a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition;
}

export interface SegmentFiles {
  readonly baseOffset: number;
  /** Path of the .log file. */
  readonly log: string;
  readonly logBytes: number;
}

/** The `.log` files of a partition directory (no transient suffix), by base offset. */
export async function listSegments(io: Io, dir: string): Promise<SegmentFiles[]> {
  const segments: SegmentFiles[] = [];
  for (const name of await io.readdir(dir)) {
    let parsed;
    try {
      parsed = FileNames.parseSegmentFileName(name);
    } catch {
      continue;
    }
    if (parsed === null || parsed.kind !== 'log' || parsed.transient !== null) continue;
    const log = path.join(dir, name);
    segments.push({ baseOffset: parsed.offset, log, logBytes: (await io.stat(log)).size });
  }
  return segments.sort((a, b) => a.baseOffset - b.baseOffset);
}

/** `<dir>/<20-digit base>.<kind>`. */
export function segmentPath(dir: string, baseOffset: number, kind: 'log' | 'index' | 'timeindex' | 'txnindex' | 'snapshot'): string {
  return path.join(dir, FileNames.segmentFileName(baseOffset, kind));
}
