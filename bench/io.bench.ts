// The I/O seam's fast paths, each against its fallback in the same run:
// - CRC-32C: the native addon (SSE4.2) vs the crc-32 package, 1 KiB..1 MiB;
// - 1 MiB sequential writes to a fresh file through NodeIo: O_DIRECT with
//   AlignedArena buffers vs buffered, each finished by one fdatasync (so
//   both figures are "on the disk"), with 1 and 4 writes in flight.
// The file lives on the disk behind os.tmpdir() (ext4 here; tmpfs would
// accept O_DIRECT without meaning it). Set SEGLOG_BENCH_DIR to choose.
import CRC32C from 'crc-32/crc32c.js';
import { crc32c as nativeCrc32c, capabilities } from '@seglog/native';
import { AlignedArena, NodeIo, type IoFile } from '@seglog/io';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fmtMBps, pretouch, printTable, runCases, type BenchOptions, type Case } from './lib/harness.js';

const MiB = 1024 * 1024;

async function crcTable(options: BenchOptions): Promise<void> {
  const sizes = [1024, 16 * 1024, MiB];
  const total = options.quick ? 16 * MiB : 256 * MiB;
  const rows = [['CRC-32C', 'native (median)', 'min-max', 'crc-32 (median)', 'min-max', 'native / crc-32']];
  for (const size of sizes) {
    const buf = Buffer.alloc(size);
    for (let i = 0; i < size; i++) buf[i] = (i * 131 + 7) & 0xff;
    const reps = Math.max(1, Math.floor(total / size));
    const cases: Case[] = [{
      name: 'crc-32',
      run: () => { let c = 0; for (let i = 0; i < reps; i++) c = (c + (CRC32C.buf(buf) >>> 0)) >>> 0; return { units: reps * size, checksum: c }; },
    }];
    if (nativeCrc32c !== null) {
      const native = nativeCrc32c;
      cases.push({ name: 'native', run: () => { let c = 0; for (let i = 0; i < reps; i++) c = (c + native(buf, 0)) >>> 0; return { units: reps * size, checksum: c }; } });
    }
    for (const c of cases) await c.run();
    const [js, native] = await runCases(cases, options);
    if (native !== undefined && native.checksum !== js!.checksum) throw new Error(`CRC mismatch at ${size} B: native and crc-32 disagree`);
    rows.push([
      `${size >= MiB ? `${size / MiB} MiB` : `${size / 1024} KiB`}`,
      native === undefined ? 'n/a (addon off)' : fmtMBps(native.median),
      native === undefined ? '' : `${(native.min / 1e6).toFixed(0)}-${(native.max / 1e6).toFixed(0)}`,
      fmtMBps(js!.median), `${(js!.min / 1e6).toFixed(0)}-${(js!.max / 1e6).toFixed(0)}`,
      native === undefined ? '' : `${(native.median / js!.median).toFixed(1)}x`,
    ]);
  }
  console.log(`\nCRC-32C (native: ${capabilities.loaded ? (capabilities.crc32cHardware ? 'SSE4.2' : 'software') : 'not loaded'})`);
  printTable(rows);
}

/** Writes totalBytes sequentially from `chunks` (one per slot in flight), then one fdatasync; removes the file. */
export async function writeFile(io: NodeIo, file: string, direct: boolean, chunks: Buffer[], totalBytes: number, inFlight: number): Promise<number> {
  const handle: IoFile = await io.open(file, { create: true, direct });
  let position = 0;
  let checksum = 0;
  const next = async (slot: number): Promise<void> => {
    const buf = chunks[slot]!;
    while (position < totalBytes) {
      const at = position;
      position += buf.length;
      await handle.pwrite(buf, at);
      checksum = (checksum + at / MiB) >>> 0;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, (_, slot) => next(slot)));
  await handle.fdatasync();
  await handle.close();
  await io.unlink(file);
  return checksum;
}

async function writeTable(options: BenchOptions): Promise<void> {
  const dir = mkdtempSync(path.join(process.env['SEGLOG_BENCH_DIR'] ?? os.tmpdir(), 'seglog-bench-io-'));
  const io = new NodeIo();
  const total = options.quick ? 32 * MiB : 512 * MiB;
  const arena = new AlignedArena({ chunkBytes: MiB, chunkCount: 4 });
  const aligned = [arena.acquire()!, arena.acquire()!, arena.acquire()!, arena.acquire()!];
  const plain = aligned.map(() => Buffer.alloc(MiB));
  for (const b of [...aligned, ...plain]) { b.fill(0x61); pretouch(b); }
  let n = 0;
  const cases: Case[] = [];
  for (const inFlight of [1, 4]) {
    cases.push({ name: `O_DIRECT, ${inFlight} in flight`, run: async () => ({ units: total, checksum: await writeFile(io, path.join(dir, `d${n++}`), true, aligned, total, inFlight) }) });
    cases.push({ name: `buffered, ${inFlight} in flight`, run: async () => ({ units: total, checksum: await writeFile(io, path.join(dir, `b${n++}`), false, plain, total, inFlight) }) });
  }
  try {
    const results = await runCases(cases, options);
    const base = results.find((r) => r.name === 'buffered, 1 in flight')!;
    const rows = [['1 MiB writes + final fdatasync', 'median', 'min-max MB/s', 'vs buffered qd1', 'checksum']];
    for (const r of results) rows.push([r.name, fmtMBps(r.median), `${(r.min / 1e6).toFixed(0)}-${(r.max / 1e6).toFixed(0)}`, `${(r.median / base.median).toFixed(2)}x`, String(r.checksum)]);
    console.log(`\nSequential writes of ${total / MiB} MiB to a fresh file in ${dir} (arena: ${arena.constructor.name}, alignment ${io.directAlignment})`);
    printTable(rows);
  } finally {
    for (const b of aligned) arena.release(b);
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(options: BenchOptions): Promise<void> {
  await crcTable(options);
  await writeTable(options);
}
