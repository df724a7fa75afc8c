// Test helpers: an independent raw batch encoder (header fields written one by
// one, CRC via crc32c) so tests can craft bytes the builder refuses to make,
// and the fixture loader.
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { crc32c, RecordsError, type RecordBatch, type RecordCursor } from '../src/index.js';

export const T0 = 1_700_000_000_000;

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export interface FixtureBatch {
  readonly name: string;
  readonly description: string;
  readonly size: number;
  readonly crc: string;
  readonly hex: string;
}

export function loadVectors(): { batches: FixtureBatch[] } {
  const file = path.resolve(repoRoot, 'test/fixtures/kafka-v2-vectors.json');
  return JSON.parse(readFileSync(file, 'utf8')) as { batches: FixtureBatch[] };
}

export function vector(name: string): Buffer {
  const v = loadVectors().batches.find((b) => b.name === name);
  if (v === undefined) throw new Error(`no vector ${name}`);
  return Buffer.from(v.hex, 'hex');
}

export interface RawHeader {
  baseOffset?: bigint;
  batchLength?: number;
  partitionLeaderEpoch?: number;
  magic?: number;
  crc?: number;
  attributes?: number;
  lastOffsetDelta?: number;
  baseTimestamp?: bigint;
  maxTimestamp?: bigint;
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
  recordsCount?: number;
}

/** A batch from raw parts; the CRC is computed unless given. */
export function rawBatch(payload: Uint8Array, h: RawHeader = {}): Buffer {
  const buf = Buffer.alloc(61 + payload.length);
  buf.writeBigInt64BE(h.baseOffset ?? 0n, 0);
  buf.writeInt32BE(h.batchLength ?? buf.length - 12, 8);
  buf.writeInt32BE(h.partitionLeaderEpoch ?? -1, 12);
  buf.writeInt8(h.magic ?? 2, 16);
  buf.writeUInt16BE(h.attributes ?? 0, 21);
  buf.writeInt32BE(h.lastOffsetDelta ?? (h.recordsCount ?? 1) - 1, 23);
  buf.writeBigInt64BE(h.baseTimestamp ?? BigInt(T0), 27);
  buf.writeBigInt64BE(h.maxTimestamp ?? BigInt(T0), 35);
  buf.writeBigInt64BE(h.producerId ?? -1n, 43);
  buf.writeInt16BE(h.producerEpoch ?? -1, 51);
  buf.writeInt32BE(h.baseSequence ?? -1, 53);
  buf.writeInt32BE(h.recordsCount ?? 1, 57);
  buf.set(payload, 61);
  buf.writeUInt32BE(h.crc ?? crc32c(buf.subarray(21)), 17);
  return buf;
}

/** Recomputes the CRC of a (possibly edited) batch in place. */
export function fixCrc(buf: Buffer): Buffer {
  buf.writeUInt32BE(crc32c(buf.subarray(21, buf.readInt32BE(8) + 12)), 17);
  return buf;
}

/** Asserts `fn` throws a RecordsError with this code, Kafka name and (optionally) rule. */
export function expectRecordsError(fn: () => unknown, code: string, kafka: string, rule?: string): RecordsError {
  let thrown: unknown;
  try {
    fn();
  } catch (e) {
    thrown = e;
  }
  expect(thrown, 'expected a RecordsError').toBeInstanceOf(RecordsError);
  const err = thrown as RecordsError;
  expect({ code: err.code, kafka: err.kafka, rule: rule === undefined ? undefined : err.rule })
    .toEqual({ code, kafka, rule });
  return err;
}

/** Zig-zag varint bytes, written independently of src/ for crafting payloads. */
export function zz(n: number): number[] {
  let u = ((n << 1) ^ (n >> 31)) >>> 0;
  const out: number[] = [];
  while (u >= 0x80) {
    out.push((u & 0x7f) | 0x80);
    u >>>= 7;
  }
  out.push(u);
  return out;
}

/** One record body (no headers) with a length prefix, from parts. */
export function rawRecord(parts: { tsDelta?: number[]; offsetDelta?: number; key?: number[] | null; value?: number[] | null; tail?: number[] }): number[] {
  const field = (b: number[] | null | undefined): number[] => (b === null || b === undefined ? zz(-1) : [...zz(b.length), ...b]);
  const body = [0, ...(parts.tsDelta ?? [0]), ...zz(parts.offsetDelta ?? 0), ...field(parts.key), ...field(parts.value), ...(parts.tail ?? [0])];
  return [...zz(body.length), ...body];
}

// ---- the differential tests of the record walks (fast-scan, record-cursor-fast) ----

/** Where a batch's records start (the 61-byte header ends). */
export const RECORDS_OFFSET = 61;
/** Key and value bytes up to 300; `nullablePayload` is null one time in four. */
export const payloadBytes = fc.uint8Array({ maxLength: 300 }).map((u) => Buffer.from(u));
export const nullablePayload = fc.option(payloadBytes, { nil: null, freq: 4 });

/** Overwrites bytes of the batch's record region in place ([position, value] pairs, positions taken modulo its size). */
export function overwriteRecords(buf: Buffer, mutations: ReadonlyArray<readonly [number, number]>): void {
  const payload = buf.length - RECORDS_OFFSET;
  for (const [at, value] of mutations) if (payload > 0) buf[RECORDS_OFFSET + (at % payload)] = value;
}

export type Seen = Array<Record<string, unknown>>;

/** Everything a cursor shows for the batch: per record every getter; the error last, if any. */
export function walkCursor(batch: RecordBatch, cursor: RecordCursor): Seen {
  const out: Seen = [];
  try {
    cursor.open(batch);
    while (cursor.next()) {
      out.push({
        index: cursor.index, offset: cursor.offset, timestamp: cursor.timestamp, offsetDelta: cursor.offsetDelta,
        timestampDelta: cursor.timestampDelta, attributes: cursor.attributes, sequence: cursor.sequence,
        sizeInBytes: cursor.sizeInBytes, recordPosition: cursor.recordPosition, keyPosition: cursor.keyPosition,
        keyLength: cursor.keyLength, valuePosition: cursor.valuePosition, valueLength: cursor.valueLength,
        headersCount: cursor.headersCount, key: cursor.key?.toString('hex') ?? null, value: cursor.value?.toString('hex') ?? null,
        headers: cursor.headers().map((h) => [h.key, h.value?.toString('hex') ?? null]), recordsLeft: cursor.recordsLeft,
      });
    }
    out.push({ end: true, recordsLeft: cursor.recordsLeft });
  } catch (error) {
    expect(error).toBeInstanceOf(RecordsError);
    const e = error as RecordsError;
    out.push({ code: e.code, rule: e.rule, message: e.message, context: e.context, recordsLeft: cursor.recordsLeft });
  }
  return out;
}
