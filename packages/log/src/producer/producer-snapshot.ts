// ProducerSnapshot: the `<20-digit offset>.snapshot` file of a partition,
// Kafka's producer-state snapshot, version 1 (reference/kafka-storage.md §8).
//
// On-disk format (big-endian, no varints):
//   version                 int16  = 1
//   crc                     uint32 = CRC-32C over bytes [6, EOF) (everything after the crc)
//   producerEntriesCount    int32
//   entry × count, 46 bytes each:
//     producerId            int64
//     epoch                 int16
//     lastSequence          int32  (-1 if the producer has no batch)
//     lastOffset            int64  (last offset of its last data batch; -1 if none)
//     offsetDelta           int32  (lastOffset − firstOffset of that batch; 0 if none)
//     timestamp             int64  (the entry's lastTimestamp: its last batch's max
//                                   timestamp, or its last marker's timestamp)
//     coordinatorEpoch      int32  (-1 if none)
//     currentTxnFirstOffset int64  (-1 if no transaction is open)
//
// Invariants:
// - The offset in the name is the map end offset: the state covers every
//   offset below it. The file length is exactly 10 + 46 × count.
// - Readers assume no order of entries (Kafka writes hash-map order; we write
//   the manager's insertion order).
// - Only the last batch of each producer is stored, so after a reload the
//   5-batch duplicate window holds one batch, whose timestamp is the entry's
//   lastTimestamp (Kafka's behaviour).
// - Reading rejects, as SEGLOG_ERR_SNAPSHOT_CORRUPT: a length below 10 or not
//   10 + 46 × count, a version other than 1, a CRC mismatch, and (stricter
//   than Kafka, which never writes them) int64 fields outside the safe-integer
//   range, negative values where Kafka writes only ≥ -1, and a producer id
//   listed twice. The caller deletes a corrupt snapshot and tries the previous
//   one.
// - Writing is atomic and durable: `<name>.tmp` is written, fdatasync'd,
//   closed, renamed over `<name>`, and the directory fsync'd. Kafka writes
//   the snapshot on roll without fsync and fsyncs it later from the flush;
//   a crash in between can then leave a torn or missing snapshot that Kafka
//   detects (CRC) and rebuilds from the log. We pay one fdatasync per roll so
//   that a snapshot, once its name exists, is whole: the recovery scan never
//   depends on a torn-file check.

import { dirname } from 'node:path';
import { assert, SeglogError } from '@seglog/common';
import type { Io } from '@seglog/io';
import { crc32c } from '@seglog/records';
import { FileNames } from '../file-names.js';
import { corruptSnapshot } from './producer-errors.js';
import { readInt64BE, writeInt64BE } from '../internal/int64.js';

export const PRODUCER_SNAPSHOT_VERSION = 1;
export const PRODUCER_SNAPSHOT_HEADER_BYTES = 10;
export const PRODUCER_SNAPSHOT_ENTRY_BYTES = 46;
/** Bytes [0, 6) (version, crc) are outside the CRC. */
const CRC_START = 6;
const CRC_OFFSET = 2;
/**
 * Upper bound on a snapshot file read into memory: 2^22 producers (46 bytes
 * each, ~193 MB). A partition with more live producer ids than that is far
 * outside what a Kafka broker keeps; a larger file is treated as corrupt.
 */
export const PRODUCER_SNAPSHOT_MAX_BYTES = PRODUCER_SNAPSHOT_HEADER_BYTES + PRODUCER_SNAPSHOT_ENTRY_BYTES * 2 ** 22;

/** One producer as a snapshot stores it. */
export interface ProducerSnapshotEntry {
  readonly producerId: number;
  readonly producerEpoch: number;
  readonly lastSequence: number;
  readonly lastOffset: number;
  readonly offsetDelta: number;
  readonly timestamp: number;
  readonly coordinatorEpoch: number;
  readonly currentTxnFirstOffset: number;
}

/** Encodes a version-1 snapshot. */
export function encodeSnapshot(entries: readonly ProducerSnapshotEntry[]): Buffer {
  const bytes = Buffer.alloc(PRODUCER_SNAPSHOT_HEADER_BYTES + PRODUCER_SNAPSHOT_ENTRY_BYTES * entries.length);
  bytes.writeInt16BE(PRODUCER_SNAPSHOT_VERSION, 0);
  bytes.writeInt32BE(entries.length, 6);
  let at = PRODUCER_SNAPSHOT_HEADER_BYTES;
  for (const entry of entries) {
    writeInt64BE(bytes, entry.producerId, at);
    bytes.writeInt16BE(entry.producerEpoch, at + 8);
    bytes.writeInt32BE(entry.lastSequence, at + 10);
    writeInt64BE(bytes, entry.lastOffset, at + 14);
    bytes.writeInt32BE(entry.offsetDelta, at + 22);
    writeInt64BE(bytes, entry.timestamp, at + 26);
    bytes.writeInt32BE(entry.coordinatorEpoch, at + 34);
    writeInt64BE(bytes, entry.currentTxnFirstOffset, at + 38);
    at += PRODUCER_SNAPSHOT_ENTRY_BYTES;
  }
  assert(at === bytes.length, 'encodeSnapshot: entries did not fill the buffer');
  bytes.writeUInt32BE(crc32c(bytes.subarray(CRC_START)), CRC_OFFSET);
  return bytes;
}

function readEntry(bytes: Buffer, at: number, path: string | null): ProducerSnapshotEntry {
  const entry: ProducerSnapshotEntry = {
    producerId: readInt64BE(bytes, at),
    producerEpoch: bytes.readInt16BE(at + 8),
    lastSequence: bytes.readInt32BE(at + 10),
    lastOffset: readInt64BE(bytes, at + 14),
    offsetDelta: bytes.readInt32BE(at + 22),
    timestamp: readInt64BE(bytes, at + 26),
    coordinatorEpoch: bytes.readInt32BE(at + 34),
    currentTxnFirstOffset: readInt64BE(bytes, at + 38),
  };
  const problem = entryProblem(entry);
  if (problem !== null) throw corruptSnapshot(path, `entry at byte ${at}: ${problem}`);
  return entry;
}

function entryProblem(entry: ProducerSnapshotEntry): string | null {
  if (!Number.isSafeInteger(entry.producerId) || entry.producerId < 0) return 'producerId is not a safe integer >= 0';
  if (entry.lastSequence < -1) return 'lastSequence is below -1';
  if (!Number.isSafeInteger(entry.lastOffset) || entry.lastOffset < -1) return 'lastOffset is not a safe integer >= -1';
  if (entry.offsetDelta < 0) return 'offsetDelta is negative';
  if (entry.lastOffset >= 0 && entry.lastOffset - entry.offsetDelta < 0) return 'offsetDelta exceeds lastOffset';
  if (!Number.isSafeInteger(entry.timestamp)) return 'timestamp is not a safe integer';
  if (!Number.isSafeInteger(entry.currentTxnFirstOffset) || entry.currentTxnFirstOffset < -1) {
    return 'currentTxnFirstOffset is not a safe integer >= -1';
  }
  return null;
}

/** Decodes a snapshot. Throws SEGLOG_ERR_SNAPSHOT_CORRUPT (see the file comment). */
export function decodeSnapshot(bytes: Buffer, path: string | null = null): ProducerSnapshotEntry[] {
  if (bytes.length < PRODUCER_SNAPSHOT_HEADER_BYTES) {
    throw corruptSnapshot(path, `${bytes.length} bytes, shorter than the ${PRODUCER_SNAPSHOT_HEADER_BYTES}-byte header`);
  }
  const version = bytes.readInt16BE(0);
  if (version !== PRODUCER_SNAPSHOT_VERSION) throw corruptSnapshot(path, `version ${version}, expected ${PRODUCER_SNAPSHOT_VERSION}`);
  const count = bytes.readInt32BE(6);
  if (count < 0) throw corruptSnapshot(path, `negative entry count ${count}`);
  const expected = PRODUCER_SNAPSHOT_HEADER_BYTES + PRODUCER_SNAPSHOT_ENTRY_BYTES * count;
  if (bytes.length !== expected) throw corruptSnapshot(path, `${bytes.length} bytes, expected ${expected} for ${count} entries`);
  const stored = bytes.readUInt32BE(CRC_OFFSET);
  const computed = crc32c(bytes.subarray(CRC_START));
  if (stored !== computed) throw corruptSnapshot(path, `crc ${stored} does not match the computed ${computed}`);
  const entries: ProducerSnapshotEntry[] = [];
  const seen = new Set<number>();
  for (let i = 0; i < count; i++) {
    const entry = readEntry(bytes, PRODUCER_SNAPSHOT_HEADER_BYTES + i * PRODUCER_SNAPSHOT_ENTRY_BYTES, path);
    if (seen.has(entry.producerId)) throw corruptSnapshot(path, `producer ${entry.producerId} listed twice`);
    seen.add(entry.producerId);
    entries.push(entry);
  }
  return entries;
}

/** `<dir>/<20-digit offset>.snapshot`. */
export function snapshotPath(dir: string, offset: number): string {
  return `${dir}/${FileNames.segmentFileName(offset, 'snapshot')}`;
}

/** The offsets of the snapshot files among `names` (a directory listing), ascending. Other names are ignored. */
export function snapshotOffsets(names: readonly string[]): number[] {
  const offsets: number[] = [];
  for (const name of names) {
    if (!name.endsWith('.snapshot')) continue;
    let parsed;
    try {
      parsed = FileNames.parseSegmentFileName(name);
    } catch {
      continue; // not a name Kafka would have written; Kafka's listing skips it too
    }
    if (parsed !== null && parsed.kind === 'snapshot' && parsed.transient === null) offsets.push(parsed.offset);
  }
  return offsets.sort((a, b) => a - b);
}

/** Names of leftover temporary snapshot files (a crash during a write) among `names`. */
export function snapshotTempNames(names: readonly string[]): string[] {
  return names.filter((name) => name.endsWith('.snapshot.tmp'));
}

/** Reads and decodes one snapshot file. Throws SEGLOG_ERR_SNAPSHOT_CORRUPT or an IoError. */
export async function readSnapshotFile(io: Io, path: string): Promise<ProducerSnapshotEntry[]> {
  const stat = await io.stat(path);
  if (stat.size > PRODUCER_SNAPSHOT_MAX_BYTES) {
    throw corruptSnapshot(path, `${stat.size} bytes, more than the ${PRODUCER_SNAPSHOT_MAX_BYTES} allowed`);
  }
  return decodeSnapshot(await io.readFile(path), path);
}

export interface LatestValidSnapshot {
  /** The snapshot to load (its offset and entries), or null if none of the candidates is valid. */
  readonly found: { readonly offset: number; readonly entries: ProducerSnapshotEntry[] } | null;
  /** Candidates newer than `found` that were corrupt; the caller deletes them (Kafka does). */
  readonly corruptOffsets: number[];
}

/**
 * Tries the snapshots at `offsets` (any order) newest first and returns the
 * first that decodes, with the corrupt ones it passed over. A file that
 * vanished is skipped; any other I/O error propagates (a device error is not
 * corruption and must not cost us a snapshot).
 */
export async function latestValidSnapshot(io: Io, dir: string, offsets: readonly number[]): Promise<LatestValidSnapshot> {
  const newestFirst = [...offsets].sort((a, b) => b - a);
  const corruptOffsets: number[] = [];
  for (const offset of newestFirst) {
    try {
      const entries = await readSnapshotFile(io, snapshotPath(dir, offset));
      return { found: { offset, entries }, corruptOffsets };
    } catch (error) {
      if (!(error instanceof SeglogError)) throw error;
      if (error.code === 'SEGLOG_ERR_SNAPSHOT_CORRUPT') corruptOffsets.push(offset);
      else if (error.code !== 'SEGLOG_ERR_IO_NOT_FOUND') throw error;
    }
  }
  return { found: null, corruptOffsets };
}

/** Writes `bytes` as the snapshot at `offset`: tmp file, fdatasync, rename, directory fsync. */
export async function writeSnapshotFile(io: Io, dir: string, offset: number, bytes: Buffer): Promise<void> {
  const path = snapshotPath(dir, offset);
  const tmpPath = `${path}.tmp`;
  const file = await io.open(tmpPath, { create: true });
  let written = false;
  try {
    await file.truncate(0);
    await file.pwrite(bytes, 0);
    await file.fdatasync();
    written = true;
  } finally {
    await (written ? file.close() : file.close().catch(() => undefined));
  }
  await io.rename(tmpPath, path);
  await io.fsyncDir(dirname(path));
}
