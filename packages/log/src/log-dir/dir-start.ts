// The start state of a data directory: what LogManager.open learns from it
// before loading any log, and the clean-shutdown marker close() writes.
//
// Files:
// - `.kafka_cleanshutdown`: JSON `{"version":0,"brokerEpoch":N}` (Kafka's
//   CleanShutdownFileHandler). Read and then DELETED (unlink + directory
//   fsync) before any log is loaded, so a crash while loading counts as
//   unclean; written `.tmp`, fsync, rename, directory fsync.
// - `.seglog_sealed_sizes` (sealed-sizes.ts): read with the marker and
//   deleted before the same fsync; used only when the marker was there.
// - `recovery-point-offset-checkpoint`, `log-start-offset-checkpoint`:
//   OffsetCheckpoint files. An unreadable recovery-point checkpoint makes
//   every recovery point unknown (null), never 0; an unreadable log-start
//   checkpoint means log start 0. Both are noted.
import type { Io } from '@seglog/io';
import { OffsetCheckpoint } from '../checkpoint/offset-checkpoint.js';
import { FileNames } from '../file-names.js';
import type { ParsedPartitionDirName } from '../file-names.js';
import { replaceFile } from '../internal/replace-file.js';
import { join } from './partition-dirs.js';
import { takeSealedSizes } from './sealed-sizes.js';
import type { SealedFacts, SealedSizes } from './sealed-sizes.js';

export const CLEAN_SHUTDOWN_VERSION = 0;

/** What open() learns from the directory before loading the logs. */
export interface StartState {
  readonly hadCleanShutdown: boolean;
  readonly brokerEpoch: number;
  /** null: the recovery-point checkpoint exists but could not be read (every recovery point unknown). */
  readonly recoveryPoints: Map<string, number> | null;
  readonly logStartOffsets: Map<string, number>;
  /** What the clean close knew of every sealed segment (sealed-sizes.ts); null without a clean shutdown or the file. */
  readonly sealedSizes: SealedSizes | null;
  readonly notes: string[];
}

/**
 * Reads and deletes the marker, then reads both checkpoints. An unreadable
 * recovery-point checkpoint makes every recovery point unknown (null: the
 * loader scans everything and refuses to cut anything but a zero tail),
 * never 0 (which would license cutting every segment); an unreadable
 * log-start checkpoint means log start 0 (the first segment's base: nothing
 * is cut, deleted records may reappear). Both are noted.
 */
export async function readStartState(io: Io, dir: string): Promise<StartState> {
  const notes: string[] = [];
  const markerPath = join(dir, FileNames.cleanShutdown);
  const hadCleanShutdown = await io.exists(markerPath);
  let brokerEpoch = -1;
  // Before the marker goes: both are deleted before the one directory fsync (a stale file without the marker is deleted unread).
  const sealedSizes = await takeSealedSizes(io, dir, hadCleanShutdown, notes);
  if (hadCleanShutdown) {
    brokerEpoch = parseMarker((await io.readFile(markerPath)).toString('utf8'));
    await io.unlink(markerPath);
    await io.fsyncDir(dir);
  }
  const recoveryPoints = await readCheckpointMap(new OffsetCheckpoint(io, join(dir, FileNames.recoveryPointCheckpoint)), notes,
    'every recovery point is unknown: recovery scans every segment and refuses to cut anything but a zero tail');
  const logStartOffsets = await readCheckpointMap(new OffsetCheckpoint(io, join(dir, FileNames.logStartOffsetCheckpoint)), notes,
    'every log start offset is taken from the first segment') ?? new Map<string, number>();
  return { hadCleanShutdown, brokerEpoch, recoveryPoints, logStartOffsets, sealedSizes, notes };
}

/** The checkpoint's map (empty when the file is missing), or null with a note when it exists but cannot be read. */
async function readCheckpointMap(checkpoint: OffsetCheckpoint, notes: string[], consequence: string): Promise<Map<string, number> | null> {
  try {
    return OffsetCheckpoint.toMap(await checkpoint.read());
  } catch (error) {
    notes.push(`${checkpoint.path} could not be read (${(error as Error).message}); ${consequence}`);
    return null;
  }
}

/** Kafka's CleanShutdownFileHandler.read: the broker epoch, or -1 when it cannot be read. */
function parseMarker(text: string): number {
  try {
    const parsed = JSON.parse(text) as { version?: unknown; brokerEpoch?: unknown };
    if (parsed.version !== CLEAN_SHUTDOWN_VERSION) return -1;
    return typeof parsed.brokerEpoch === 'number' && Number.isSafeInteger(parsed.brokerEpoch) ? parsed.brokerEpoch : -1;
  } catch {
    return -1;
  }
}

/** `.kafka_cleanshutdown`: written to `.tmp`, fsynced, renamed, directory fsynced. */
export async function writeCleanShutdownMarker(io: Io, dir: string, brokerEpoch: number): Promise<void> {
  await replaceFile(io, join(dir, FileNames.cleanShutdown), Buffer.from(JSON.stringify({ version: CLEAN_SHUTDOWN_VERSION, brokerEpoch }), 'utf8'));
  await io.fsyncDir(dir);
}

/** The positions a found partition opens with: its recovery point and log start from the checkpoints, the marker's verdict. */
export function startPositions(start: StartState, tp: ParsedPartitionDirName): { topic: string; partition: number; recoveryPoint: number | null; logStartOffset: number; hadCleanShutdown: boolean; sealedSizes?: ReadonlyMap<number, SealedFacts> } {
  const name = `${tp.topic}-${tp.partition}`;
  const sealedSizes = start.sealedSizes?.get(name);
  return {
    ...(sealedSizes === undefined ? {} : { sealedSizes }),
    topic: tp.topic,
    partition: tp.partition,
    recoveryPoint: start.recoveryPoints === null ? null : (start.recoveryPoints.get(name) ?? 0),
    logStartOffset: start.logStartOffsets.get(name) ?? 0,
    hadCleanShutdown: start.hadCleanShutdown,
  };
}
