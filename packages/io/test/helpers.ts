// Shared test helpers: tree dumps over any Io, error-code capture, temp dirs.
import fs, { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Io, NodeIoFs } from '../src/index.js';

/** path → file contents (hex) or 'dir', for every entry under `root` (recursive, sorted). */
export async function dumpTree(io: Io, root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (dir: string, rel: string): Promise<void> => {
    for (const name of await io.readdir(dir)) {
      const full = `${dir}/${name}`;
      const key = rel === '' ? name : `${rel}/${name}`;
      const stat = await io.stat(full);
      if (stat.isDirectory) {
        out[key] = 'dir';
        await walk(full, key);
      } else {
        out[key] = (await io.readFile(full)).toString('hex');
      }
    }
  };
  await walk(root, '');
  return out;
}

/** The code of the error `run` rejects with, or 'ok'. */
export async function codeOf(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
    return 'ok';
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code !== 'string') throw error;
    return code;
  }
}

/** A fresh temp dir (os.tmpdir() unless `base` is given) and its cleanup. */
export function tempDir(prefix: string, base: string = os.tmpdir()): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(base, `seglog-io-${prefix}-`));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function filled(length: number, byte: number): Buffer {
  return Buffer.alloc(length, byte);
}

/** node:fs's positional calls as an injected NodeIoFs: NodeIo then takes its injected-fs paths (no addon job, no gathering). */
export const realFs: NodeIoFs = {
  write: (fd, b, o, l, p, cb) => fs.write(fd, b, o, l, p, cb),
  writev: (fd, bs, p, cb) => fs.writev(fd, bs, p, cb),
  read: (fd, b, o, l, p, cb) => fs.read(fd, b, o, l, p, cb),
  writeSync: (fd, b, o, l, p) => fs.writeSync(fd, b, o, l, p),
  readSync: (fd, b, o, l, p) => fs.readSync(fd, b, o, l, p),
};
