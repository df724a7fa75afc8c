// Reads the data directory's offset checkpoints (recovery point, log start)
// through the engine's OffsetCheckpoint, for the read-only commands. A
// missing file is an empty map; an unreadable one is reported, not thrown.

import path from 'node:path';
import type { Io } from '@seglog/io';
import { FileNames, OffsetCheckpoint } from '@seglog/log';

export interface CheckpointRead {
  readonly path: string;
  readonly exists: boolean;
  /** `<topic>-<partition>` → offset. */
  readonly offsets: Map<string, number>;
  /** The parse or read error, if any. */
  readonly error: unknown;
}

export async function readOffsetCheckpoint(io: Io, dataDir: string, name: string): Promise<CheckpointRead> {
  const file = path.join(dataDir, name);
  const offsets = new Map<string, number>();
  if (!(await io.exists(file))) return { path: file, exists: false, offsets, error: null };
  try {
    for (const entry of await new OffsetCheckpoint(io, file).read()) offsets.set(FileNames.partitionDirName(entry.topic, entry.partition), entry.offset);
    return { path: file, exists: true, offsets, error: null };
  } catch (error) {
    return { path: file, exists: true, offsets, error };
  }
}
