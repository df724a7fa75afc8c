// Replacing a small file whole: written to `<path>.tmp`, fsynced, renamed
// over `path`. The caller fsyncs the directory when the rename must be
// durable before it goes on (the clean-shutdown marker does; the sealed
// sizes record relies on the marker's fsync that follows it).
import type { Io } from '@seglog/io';

export async function replaceFile(io: Io, path: string, bytes: Buffer): Promise<void> {
  const tmp = `${path}.tmp`;
  const file = await io.open(tmp, { create: true });
  try {
    await file.truncate(0);
    await file.pwrite(bytes, 0);
    await file.fsync();
  } finally {
    await file.close();
  }
  await io.rename(tmp, path);
}
