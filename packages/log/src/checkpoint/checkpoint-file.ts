// CheckpointFile: Kafka's generic text checkpoint format (reference/kafka-storage.md §9),
// used by leader-epoch-checkpoint, recovery-point-offset-checkpoint,
// log-start-offset-checkpoint and replication-offset-checkpoint.
//
// On-disk format (UTF-8, '\n' line endings, every line terminated):
//   <version>\n
//   <entryCount>\n
//   <entry line>\n  × entryCount
// where an entry line is whitespace-separated fields defined by the
// CheckpointFormat (e.g. "<epoch> <startOffset>", "<topic> <partition> <offset>").
//
// Reading follows Kafka's rules exactly, and everything else is
// SEGLOG_ERR_CHECKPOINT_CORRUPT (naming the path, line and reason):
// - an empty file, or a file with a version line and no count line, has no
//   entries; a missing file has no entries (Kafka creates it empty);
// - the version must be the format's; numbers are Java-style decimal
//   (optional sign, ASCII digits) within their type's range, and int64
//   values must also be safe JS integers;
// - lines end at '\n', '\r\n' or '\r' (Java's readLine); a line is split on
//   runs of whitespace, a trailing run is ignored, a leading one yields an
//   empty first field (so the line is malformed);
// - the number of entry lines must equal the count (extra or missing lines
//   are corrupt); a malformed line is corrupt. Nothing is allocated from the
//   count, and the file is bounded (CHECKPOINT_MAX_BYTES) before it is read.
//
// Writing is atomic and durable: write `<path>.tmp` (truncated first),
// fdatasync it, close, rename it over `<path>`, fsync the directory. Writes
// through one CheckpointFile run one at a time; a path must have one owner.

import { dirname } from 'node:path';
import { assert, SeglogError } from '@seglog/common';
import type { Io } from '@seglog/io';

/** Upper bound on a checkpoint file's size (a million partitions fit well below it). */
export const CHECKPOINT_MAX_BYTES = 64 * 1024 * 1024;

/** How one kind of checkpoint turns entries into lines and back. */
export interface CheckpointFormat<T> {
  readonly version: number;
  /** The entry line, without the newline. */
  format(entry: T): string;
  /**
   * The entry for the whitespace-split fields of a line, or a string saying
   * why the line is malformed.
   */
  parse(fields: readonly string[]): T | string;
}

const INT32_MIN = -0x80000000;
const INT32_MAX = 0x7fffffff;
const JAVA_INTEGER = /^[+-]?[0-9]+$/;
const JAVA_WHITESPACE = /[ \t\n\x0B\f\r]+/;

/** Java's Integer.parseInt: a number, or undefined when Java would throw NumberFormatException. */
export function parseJavaInt(text: string): number | undefined {
  if (!JAVA_INTEGER.test(text)) return undefined;
  const value = Number(text);
  return value >= INT32_MIN && value <= INT32_MAX ? value : undefined;
}

/**
 * Java's Long.parseLong restricted to safe JS integers: a number, or
 * undefined when the text is not an int64 or not representable exactly.
 */
export function parseJavaSafeLong(text: string): number | undefined {
  if (!JAVA_INTEGER.test(text)) return undefined;
  const digits = text.replace(/^[+-]?0*/, '');
  if (digits.length > 16) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

function corrupt(path: string, line: number | null, reason: string): SeglogError {
  const where = line === null ? '' : ` line ${line}`;
  return new SeglogError('SEGLOG_ERR_CHECKPOINT_CORRUPT', `corrupt checkpoint ${path}${where}: ${reason}`, {
    kafka: 'KAFKA_STORAGE_ERROR',
    context: { path, line, reason },
  });
}

/** Splits text into lines the way Java's BufferedReader.readLine does. */
function javaLines(text: string): string[] {
  if (text.length === 0) return [];
  const lines = text.split(/\r\n|\n|\r/);
  // A terminated last line does not start another (empty) line.
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Java's line.split("\\s+"): trailing empty fields removed, a leading one kept. */
function javaFields(line: string): string[] {
  const fields = line.split(JAVA_WHITESPACE);
  while (fields.length > 1 && fields[fields.length - 1] === '') fields.pop();
  return fields;
}

export class CheckpointFile<T> {
  readonly path: string;
  private readonly io: Io;
  private readonly format: CheckpointFormat<T>;
  private tail: Promise<void>;

  constructor(io: Io, path: string, format: CheckpointFormat<T>) {
    assert(Number.isInteger(format.version), 'CheckpointFile: format version must be an integer');
    this.io = io;
    this.path = path;
    this.format = format;
    this.tail = Promise.resolve();
  }

  /** The text of a checkpoint holding `entries`. */
  static encode<T>(format: CheckpointFormat<T>, entries: readonly T[]): string {
    let text = `${format.version}\n${entries.length}\n`;
    for (const entry of entries) {
      const line = format.format(entry);
      assert(!/[\r\n]/.test(line), 'CheckpointFile.encode: an entry line must not contain a line break');
      text += `${line}\n`;
    }
    return text;
  }

  /** Parses checkpoint text (Kafka's rules); `path` names the file in errors. */
  static decode<T>(format: CheckpointFormat<T>, text: string, path: string): T[] {
    const lines = javaLines(text);
    const versionLine = lines[0];
    if (versionLine === undefined) return [];
    const version = parseJavaInt(versionLine);
    if (version === undefined) throw corrupt(path, 1, `malformed version line ${JSON.stringify(versionLine)}`);
    if (version !== format.version) throw corrupt(path, 1, `unrecognised version ${version}, expected ${format.version}`);
    const countLine = lines[1];
    if (countLine === undefined) return [];
    const count = parseJavaInt(countLine);
    if (count === undefined) throw corrupt(path, 2, `malformed count line ${JSON.stringify(countLine)}`);
    const entries: T[] = [];
    for (let i = 2; i < lines.length; i++) {
      const line = lines[i] as string;
      const parsed = format.parse(javaFields(line));
      if (typeof parsed === 'string') throw corrupt(path, i + 1, `malformed line ${JSON.stringify(line)}: ${parsed}`);
      entries.push(parsed);
    }
    if (entries.length !== count) throw corrupt(path, null, `expected ${count} entries but found ${entries.length}`);
    return entries;
  }

  /** Reads the checkpoint; a missing file has no entries. */
  async read(): Promise<T[]> {
    let bytes: Buffer;
    try {
      const stat = await this.io.stat(this.path);
      if (stat.size > CHECKPOINT_MAX_BYTES) {
        throw corrupt(this.path, null, `file is ${stat.size} bytes, more than the ${CHECKPOINT_MAX_BYTES} allowed`);
      }
      bytes = await this.io.readFile(this.path);
    } catch (error) {
      if (error instanceof SeglogError && error.code === 'SEGLOG_ERR_IO_NOT_FOUND') return [];
      throw error;
    }
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
    } catch (cause) {
      throw new SeglogError('SEGLOG_ERR_CHECKPOINT_CORRUPT', `corrupt checkpoint ${this.path}: not valid UTF-8`, {
        kafka: 'KAFKA_STORAGE_ERROR',
        context: { path: this.path, line: null, reason: 'not valid UTF-8' },
        cause,
      });
    }
    return CheckpointFile.decode(this.format, text, this.path);
  }

  /**
   * Replaces the checkpoint with `entries`, atomically and durably (tmp file,
   * fdatasync, rename, directory fsync). Resolves when the new content is
   * durable. Writes through this object run one at a time, in call order.
   */
  write(entries: readonly T[]): Promise<void> {
    const bytes = Buffer.from(CheckpointFile.encode(this.format, entries), 'utf8');
    const result = this.tail.then(() => this.writeBytes(bytes));
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  private async writeBytes(bytes: Buffer): Promise<void> {
    const tmpPath = `${this.path}.tmp`;
    const file = await this.io.open(tmpPath, { create: true });
    let written = false;
    try {
      await file.truncate(0);
      await file.pwrite(bytes, 0);
      await file.fdatasync();
      written = true;
    } finally {
      await (written ? file.close() : file.close().catch(() => undefined));
    }
    await this.io.rename(tmpPath, this.path);
    await this.io.fsyncDir(dirname(this.path));
  }
}
