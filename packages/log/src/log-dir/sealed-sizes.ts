// `.seglog_sealed_sizes`: what a clean close knew of every sealed segment,
// so the next clean open stats none of them (issue 24). A sealed segment
// costs three stat() calls otherwise (.log, .index, .timeindex): 300,000 at
// 100,000 segments, tens of seconds on a busy VM.
//
// Format (text, one line each): `seglog-sealed-sizes 1 <crc32c>` over the
// rest, then `<partition dir> <base> <log bytes> <mtime ms> <index bytes>
// <timeindex bytes>` per sealed segment. Written `.tmp`, fsync, rename by
// LogManager.close() just before the clean-shutdown marker, whose directory
// fsync makes the rename durable; read and deleted by open() with the marker
// (dir-start.ts), and used only when the marker was there: a file without
// the marker is stale and is deleted unread. A file that does not parse or
// fails its CRC is noted and ignored (every segment is then stat'ed, as
// without it). What the file says is trusted only as far as the directory
// listing agrees (the loader opens a segment the normal way when its .index
// or .timeindex is missing or it has a .txnindex), and a segment's .log size
// is checked against the file the first time its indexes load
// (index-residency.ts): a .log that changed after the clean close is
// refused there as damage, as a cut-short one is without this file.
import type { Io } from '@seglog/io';
import { crc32c } from '@seglog/records';
import { FileNames } from '../file-names.js';
import { replaceFile } from '../internal/replace-file.js';
import { join } from './partition-dirs.js';

export const SEALED_SIZES_FILE = FileNames.sealedSizes;
const MAGIC = 'seglog-sealed-sizes';
const VERSION = 1;

/** What a clean close knew of one sealed segment. */
export interface SealedFacts {
  readonly size: number;
  readonly mtimeMs: number;
  readonly indexBytes: number;
  readonly timeIndexBytes: number;
}

/** By partition directory name, then by base offset. */
export type SealedSizes = ReadonlyMap<string, ReadonlyMap<number, SealedFacts>>;

/** The shape of a Segment this file reads (segment.ts imports this file). */
interface SealedSegment {
  readonly baseOffset: number;
  /** What the file would record of it (a segment never used since a clean open gives back its record). */
  sealedFacts(): SealedFacts;
}

/** Every segment but the last (the active one), as the file records it. */
export function sealedFactsOf(segments: readonly SealedSegment[]): Array<readonly [number, SealedFacts]> {
  const out: Array<readonly [number, SealedFacts]> = [];
  for (let i = 0; i < segments.length - 1; i++) {
    const s = segments[i] as SealedSegment;
    out.push([s.baseOffset, s.sealedFacts()]);
  }
  return out;
}

/** Writes the file (`.tmp`, fsync, rename); the caller's clean-shutdown marker fsyncs the directory after it. */
export async function writeSealedSizes(io: Io, dir: string, logs: Iterable<readonly [string, Iterable<readonly [number, SealedFacts]>]>): Promise<void> {
  const lines: string[] = [];
  for (const [name, segments] of logs) {
    for (const [base, f] of segments) lines.push(`${name} ${base} ${f.size} ${Math.round(f.mtimeMs)} ${f.indexBytes} ${f.timeIndexBytes}`);
  }
  const body = Buffer.from(lines.length === 0 ? '' : `${lines.join('\n')}\n`, 'utf8');
  const bytes = Buffer.concat([Buffer.from(`${MAGIC} ${VERSION} ${crc32c(body)}\n`, 'utf8'), body]);
  await replaceFile(io, join(dir, SEALED_SIZES_FILE), bytes);
}

/**
 * Reads the file when `clean` (the marker was there) and deletes it either
 * way (the caller fsyncs the directory). Null when absent, stale or unreadable
 * (unreadable: noted).
 */
export async function takeSealedSizes(io: Io, dir: string, clean: boolean, notes: string[]): Promise<SealedSizes | null> {
  const path = join(dir, SEALED_SIZES_FILE);
  if (!(await io.exists(path))) return null;
  let sizes: SealedSizes | null = null;
  if (clean) {
    try {
      sizes = parseSealedSizes((await io.readFile(path)).toString('utf8'));
    } catch (error) {
      notes.push(`${path} could not be read (${(error as Error).message}); every sealed segment is stat'ed at open`);
    }
  }
  await io.unlink(path);
  return sizes;
}

/** Parses the file's text; throws on anything but a whole, CRC-valid file. */
export function parseSealedSizes(text: string): SealedSizes {
  const newline = text.indexOf('\n');
  const header = (newline < 0 ? text : text.slice(0, newline)).split(' ');
  if (header.length !== 3 || header[0] !== MAGIC || header[1] !== String(VERSION)) throw new Error('not a sealed-sizes file of version 1');
  const body = newline < 0 ? '' : text.slice(newline + 1);
  if (String(crc32c(Buffer.from(body, 'utf8'))) !== header[2]) throw new Error('CRC mismatch');
  const out = new Map<string, Map<number, SealedFacts>>();
  for (const line of body.split('\n')) {
    if (line === '') continue;
    const [name, ...fields] = line.split(' ');
    const n = fields.map(Number);
    if (name === undefined || n.length !== 5 || !n.every((x) => Number.isSafeInteger(x) && x >= 0)) throw new Error(`malformed line '${line.slice(0, 80)}'`);
    const [base, size, mtimeMs, indexBytes, timeIndexBytes] = n as [number, number, number, number, number];
    let segments = out.get(name);
    if (segments === undefined) {
      segments = new Map();
      out.set(name, segments);
    }
    segments.set(base, { size, mtimeMs, indexBytes, timeIndexBytes });
  }
  return out;
}
