// The log cleaner's state as the files show it (stats, verify): the first
// dirty offset from the data directory's cleaner-offset-checkpoint, and the
// dirty ratio by whole segments as the cleaner computes it (cleanable.ts in
// @seglog/log): clean = segments wholly below the first dirty offset, dirty =
// the later sealed segments (the last, active segment is never cleaned; the
// HW and the compaction lag, which only a running broker knows, are not
// applied). "Last clean" is the checkpoint's modification time: the cleaner
// writes it after every pass that moved it. The last clean time and the
// bytes saved by every pass come from `cleaner-stats` (issue 20; written by
// the cleaner after every pass that cleaned), null when it has no entry for
// the partition (a version before it, or never cleaned) or is unreadable
// (verify notes that).

import path from 'node:path';
import type { Io } from '@seglog/io';
import { CLEANER_OFFSET_CHECKPOINT, CLEANER_STATS_FILE, CleanerStatsCheckpoint } from '@seglog/log';
import type { CleanerStatsEntry } from '@seglog/log';
import type { SegmentFiles } from './log-dirs.js';
import { readOffsetCheckpoint } from './checkpoints.js';
import type { CheckpointRead } from './checkpoints.js';

export interface CleanerFileState {
  readonly firstDirtyOffset: number;
  readonly cleanBytes: number;
  readonly dirtyBytes: number;
  readonly dirtyRatio: number;
  /** mtime of cleaner-offset-checkpoint (ms), the last pass that moved it. */
  readonly lastCheckpointMs: number;
  /** When the last pass that cleaned started (ms, cleaner-stats); null: not recorded. */
  readonly lastCleanMs: number | null;
  /** Bytes saved by every pass (cleaner-stats); null: not recorded. */
  readonly bytesSaved: number | null;
}

export interface CleanerStatsRead {
  readonly path: string;
  readonly exists: boolean;
  /** `<topic>-<partition>` → entry. */
  readonly entries: Map<string, CleanerStatsEntry>;
  /** The parse or read error, if any (then no entries). */
  readonly error: unknown;
}

export interface CleanerCheckpoint {
  readonly read: CheckpointRead;
  readonly mtimeMs: number;
  readonly stats: CleanerStatsRead;
}

async function readCleanerStats(io: Io, dataDir: string): Promise<CleanerStatsRead> {
  const file = path.join(dataDir, CLEANER_STATS_FILE);
  if (!(await io.exists(file))) return { path: file, exists: false, entries: new Map(), error: null };
  try {
    return { path: file, exists: true, entries: CleanerStatsCheckpoint.toMap(await new CleanerStatsCheckpoint(io, file).read()), error: null };
  } catch (error) {
    return { path: file, exists: true, entries: new Map(), error };
  }
}

export async function readCleanerCheckpoint(io: Io, dataDir: string): Promise<CleanerCheckpoint> {
  const read = await readOffsetCheckpoint(io, dataDir, CLEANER_OFFSET_CHECKPOINT);
  const mtimeMs = read.exists ? (await io.stat(path.join(dataDir, CLEANER_OFFSET_CHECKPOINT))).mtimeMs : -1;
  return { read, mtimeMs, stats: await readCleanerStats(io, dataDir) };
}

/** The partition's state, or null when the checkpoint has no entry for it (never cleaned). */
export function cleanerStateOf(checkpoint: CleanerCheckpoint, partition: string, segments: readonly SegmentFiles[]): CleanerFileState | null {
  const firstDirty = checkpoint.read.offsets.get(partition);
  if (firstDirty === undefined) return null;
  let cleanBytes = 0;
  let dirtyBytes = 0;
  for (let i = 0; i < segments.length - 1; i++) {
    const end = (segments[i + 1] as SegmentFiles).baseOffset;
    if (end <= firstDirty) cleanBytes += (segments[i] as SegmentFiles).logBytes;
    else dirtyBytes += (segments[i] as SegmentFiles).logBytes;
  }
  const total = cleanBytes + dirtyBytes;
  const stats = checkpoint.stats.entries.get(partition);
  return {
    firstDirtyOffset: firstDirty, cleanBytes, dirtyBytes, dirtyRatio: total === 0 ? 0 : dirtyBytes / total, lastCheckpointMs: checkpoint.mtimeMs,
    lastCleanMs: stats === undefined || stats.lastCleanMs < 0 ? null : stats.lastCleanMs, bytesSaved: stats?.bytesSaved ?? null,
  };
}

function timeText(ms: number | null): string {
  return ms === null || ms < 0 ? '-' : new Date(ms).toISOString();
}

export function cleanerText(state: CleanerFileState): string {
  return `cleaner: first dirty offset ${state.firstDirtyOffset}, dirty ratio ${state.dirtyRatio.toFixed(3)} (clean ${state.cleanBytes} B, dirty ${state.dirtyBytes} B), ` +
    `last checkpoint ${timeText(state.lastCheckpointMs)}, last clean ${timeText(state.lastCleanMs)}, bytes saved ${state.bytesSaved ?? '-'}`;
}
