// Encodes one record (Kafka record v2: varint length, attributes 0, varlong
// timestampDelta, varint offsetDelta, key, value, headers) for the streaming
// builder, which writes records one at a time into its pending buffer. The
// same encoding as internal/write-batch.ts (which encodes a whole batch at
// once); test/bounded-batch-builder.test.ts checks both give identical bytes.
import type { RecordHeaderInput, RecordInput } from '../../build-batch.js';
import { varintSize, varlongSize, writeVarint, writeVarlong } from '../varint.js';

const NO_HEADERS: readonly RecordHeaderInput[] = [];

function fieldSize(bytes: Uint8Array | string | null | undefined): number {
  if (bytes === null || bytes === undefined) return 1;
  const n = typeof bytes === 'string' ? Buffer.byteLength(bytes, 'utf8') : bytes.length;
  return varintSize(n) + n;
}

function bodySize(record: RecordInput, timestampDelta: number, offsetDelta: number): number {
  const headers = record.headers ?? NO_HEADERS;
  let size = 1 + varlongSize(timestampDelta) + varintSize(offsetDelta);
  size += fieldSize(record.key) + fieldSize(record.value) + varintSize(headers.length);
  for (const header of headers) size += fieldSize(header.key) + fieldSize(header.value);
  return size;
}

/** Bytes the record takes in a batch at this offsetDelta and timestampDelta. */
export function encodedRecordSize(record: RecordInput, timestampDelta: number, offsetDelta: number): number {
  const body = bodySize(record, timestampDelta, offsetDelta);
  return varintSize(body) + body;
}

function writeField(out: Uint8Array, position: number, bytes: Uint8Array | string | null | undefined): number {
  if (bytes === null || bytes === undefined) return writeVarint(out, position, -1);
  if (typeof bytes === 'string') {
    const n = Buffer.byteLength(bytes, 'utf8');
    const p = writeVarint(out, position, n);
    Buffer.from(out.buffer, out.byteOffset, out.byteLength).write(bytes, p, n, 'utf8');
    return p + n;
  }
  const p = writeVarint(out, position, bytes.length);
  out.set(bytes, p);
  return p + bytes.length;
}

/** Writes the record at `position`; returns the position after it. */
export function writeRecord(out: Uint8Array, position: number, record: RecordInput, timestampDelta: number, offsetDelta: number): number {
  const headers = record.headers ?? NO_HEADERS;
  let p = writeVarint(out, position, bodySize(record, timestampDelta, offsetDelta));
  out[p++] = 0; // attributes: none defined
  p = writeVarlong(out, p, timestampDelta);
  p = writeVarint(out, p, offsetDelta);
  p = writeField(out, p, record.key);
  p = writeField(out, p, record.value);
  p = writeVarint(out, p, headers.length);
  for (const header of headers) {
    p = writeField(out, p, header.key);
    p = writeField(out, p, header.value);
  }
  return p;
}
