// The data directory's `.lock` file: held through Io.lock (flock + a
// process-wide table on NodeIo) from LogManager.open to close, so a second
// manager on the directory, in this process or another, gets
// SEGLOG_ERR_LOG_LOCKED. A missing data directory is created first and its
// parent fsynced (the directory entry is durable before anything is written
// in it).
import { SeglogError } from '@seglog/common';
import type { Io, IoLock } from '@seglog/io';
import { FileNames } from '../file-names.js';
import { join } from './partition-dirs.js';

function lockedError(dir: string, cause: unknown): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_LOCKED', `data directory ${dir} is in use by another LogManager (this process or another)`, {
    context: { dir },
    cause,
  });
}

function parentOf(dir: string): string {
  const trimmed = dir.length > 1 && dir.endsWith('/') ? dir.slice(0, -1) : dir;
  const slash = trimmed.lastIndexOf('/');
  if (slash > 0) return trimmed.slice(0, slash);
  return slash === 0 ? '/' : '.';
}

/** Creates `dir` if missing (parent fsynced) and takes its `.lock`; SEGLOG_ERR_LOG_LOCKED when another manager holds it. */
export async function lockDataDir(io: Io, dir: string): Promise<IoLock> {
  if (!(await io.exists(dir))) {
    await io.mkdir(dir, { recursive: true });
    await io.fsyncDir(parentOf(dir));
  }
  try {
    return await io.lock(join(dir, FileNames.lock));
  } catch (error) {
    throw (error as { code?: unknown } | null)?.code === 'SEGLOG_ERR_IO_LOCKED' ? lockedError(dir, error) : error;
  }
}
