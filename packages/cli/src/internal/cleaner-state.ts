// The log cleaner's state as the files show it (stats, verify): the first
// dirty offset from the data directory's cleaner-offset-checkpoint, and the
// dirty ratio by whole segments as the cleaner computes it (cleanable.ts in
// @seglog/log): clean = segments wholly below the first dirty offset, dirty =
// the later sealed segments (the last, active segment is never cleaned; the
// HW and the compaction lag, which only a running broker knows, are not
// applied). "Last clean" is the checkpoint's modification time: the cleaner
// writes it after every pass that moved it. Bytes saved are a running
// broker's figure (LogManager.cleaner.stateOf), not on disk.

import path from 'node:path';
import type { Io } from '@seglog/io';
import { CLEANER_OFFSET_CHECKPOINT } from '@seglog/log';
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
}

export interface CleanerCheckpoint {
  readonly read: CheckpointRead;
  readonly mtimeMs: number;
}

export async function readCleanerCheckpoint(io: Io, dataDir: string): Promise<CleanerCheckpoint> {
  const read = await readOffsetCheckpoint(io, dataDir, CLEANER_OFFSET_CHECKPOINT);
  const mtimeMs = read.exists ? (await io.stat(path.join(dataDir, CLEANER_OFFSET_CHECKPOINT))).mtimeMs : -1;
  return { read, mtimeMs };
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
  return { firstDirtyOffset: firstDirty, cleanBytes, dirtyBytes, dirtyRatio: total === 0 ? 0 : dirtyBytes / total, lastCheckpointMs: checkpoint.mtimeMs };
}

export function cleanerText(state: CleanerFileState): string {
  return `cleaner: first dirty offset ${state.firstDirtyOffset}, dirty ratio ${state.dirtyRatio.toFixed(3)} (clean ${state.cleanBytes} B, dirty ${state.dirtyBytes} B), ` +
    `last checkpoint ${state.lastCheckpointMs < 0 ? '-' : new Date(state.lastCheckpointMs).toISOString()}`;
}
