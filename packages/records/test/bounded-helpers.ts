// Shared by the bounded-* tests: a deterministic value generator (text that
// gzip compresses about 4.7x, and random bytes), and the producer model the
// builder's contract describes (tryAppend; on false seal and retry in a new
// builder; a record an empty builder refuses goes alone via buildAlone or is
// rejected as TOO_LARGE).
import { expect } from 'vitest';
import {
  BoundedBatchBuilder, RecordBatch, validateBatch,
  type BoundedBatchBuilderOptions, type RecordInput,
} from '../src/index.js';

export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s / 2 ** 32;
  };
}

const vocabRandom = prng(7);
const VOCAB = Array.from({ length: 64 }, (_, i) => `w${Math.floor(vocabRandom() * 1e6).toString(36)}${i}`);

/** JSON-ish words and numbers: gzip ~4.7x, zstd ~4.5x, lz4 ~2.5x on 512-byte values. */
export function textValue(random: () => number, bytes: number): Buffer {
  let out = '';
  while (out.length < bytes) {
    const r = random();
    if (r < 0.5) out += `${VOCAB[Math.floor(random() * VOCAB.length)]!} `;
    else if (r < 0.555) out += `${Math.floor(random() * 1e5).toString(36)} `;
    else out += '"k":';
  }
  return Buffer.from(out.slice(0, bytes), 'latin1');
}

export function randomValue(random: () => number, bytes: number): Buffer {
  const out = Buffer.allocUnsafe(bytes);
  for (let i = 0; i < bytes; i++) out[i] = Math.floor(random() * 256);
  return out;
}

export interface Produced {
  readonly batches: Buffer[];
  /** Per batch, the input records it holds. */
  readonly contents: RecordInput[][];
  readonly rejected: RecordInput[];
}

export function produce(options: BoundedBatchBuilderOptions, records: readonly RecordInput[]): Produced {
  const batches: Buffer[] = [];
  const contents: RecordInput[][] = [];
  const rejected: RecordInput[] = [];
  let builder = new BoundedBatchBuilder(options);
  const sealInto = (): void => {
    const held = [...builder.records];
    let at = 0;
    for (const batch of builder.seal()) {
      const count = batch.readInt32BE(57);
      batches.push(batch);
      contents.push(held.slice(at, at + count));
      at += count;
    }
    expect(at).toBe(held.length);
    builder = new BoundedBatchBuilder(options);
  };
  for (const record of records) {
    if (builder.tryAppend(record)) continue;
    if (builder.recordsCount > 0) {
      sealInto();
      if (builder.tryAppend(record)) continue;
    }
    expect(builder.recordsCount).toBe(0);
    try {
      batches.push(builder.buildAlone(record));
      contents.push([record]);
    } catch (error) {
      expect((error as { code?: string }).code).toBe('SEGLOG_ERR_RECORDS_TOO_LARGE');
      rejected.push(record);
    }
  }
  if (builder.recordsCount > 0) sealInto();
  return { batches, contents, rejected };
}

/** Every batch within maxBytes, valid per validateBatch, iterating to exactly `records` in order. */
export function expectBatchesHold(batches: readonly Buffer[], maxBytes: number, records: readonly RecordInput[]): void {
  let index = 0;
  for (const batch of batches) {
    expect(batch.length).toBeLessThanOrEqual(maxBytes);
    const summary = validateBatch(batch, { maxMessageBytes: maxBytes });
    expect(summary.sizeInBytes).toBe(batch.length);
    for (const got of new RecordBatch(batch).toRecords()) {
      const want = records[index++];
      expect(want).toBeDefined();
      expect(got.timestamp).toBe(want!.timestamp);
      // Buffer.equals, not toEqual: vitest compares buffers element by element (seconds for MiBs).
      expect(sameBytes(got.key, want!.key)).toBe(true);
      expect(sameBytes(got.value, want!.value)).toBe(true);
      expect(got.headers.length).toBe(want!.headers?.length ?? 0);
    }
  }
  expect(index).toBe(records.length);
}

function sameBytes(got: Buffer | null, want: Uint8Array | string | null | undefined): boolean {
  if (want === undefined || want === null) return got === null;
  return got !== null && got.equals(typeof want === 'string' ? Buffer.from(want) : want);
}
