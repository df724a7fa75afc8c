// mergeUnsent: a backlog of never-sent batches re-packed by compressed size.
import { afterEach, describe, expect, it } from 'vitest';
import {
  BoundedBatchBuilder, Codec, assignBaseSequence, mergeUnsent, toPendingBatches,
  type CodecId, type PendingBatch, type RecordInput,
} from '../src/index.js';
import { streamFaults } from '../src/internal/streaming/fault-hook.js';
import { expectBatchesHold, prng, textValue } from './bounded-helpers.js';

const T0 = 1_700_000_000_000;
const MAX_BYTES = 64 * 1024;

afterEach(() => {
  streamFaults.hook = null;
});

/** Handle = a settle counter per record, like a promise resolver that must fire once. */
interface Handle { readonly id: number; settled: number }

/** A backlog as an uncompressed-size-bounded producer would make it (codec none limit, then compressed). */
function backlog(codec: CodecId, batchCount: number, seed: number): { batches: PendingBatch<Handle>[]; records: RecordInput[]; handles: Handle[] } {
  const random = prng(seed);
  const batches: PendingBatch<Handle>[] = [];
  const records: RecordInput[] = [];
  const handles: Handle[] = [];
  for (let b = 0; b < batchCount; b++) {
    const plain = new BoundedBatchBuilder({ codec: Codec.none, maxBytes: MAX_BYTES });
    for (;;) {
      const record = { timestamp: T0 + records.length, key: `k${records.length}`, value: textValue(random, 512) };
      if (!plain.tryAppend(record)) break;
      records.push(record);
      handles.push({ id: handles.length, settled: 0 });
    }
    // Re-build the same records compressed, one batch (they fit uncompressed, so compressed too).
    const compressed = new BoundedBatchBuilder({ codec, maxBytes: MAX_BYTES });
    for (const record of plain.records) expect(compressed.tryAppend(record)).toBe(true);
    const start = handles.length - plain.recordsCount;
    batches.push(...toPendingBatches(compressed.seal(), plain.records, handles.slice(start)));
  }
  return { batches, records, handles };
}

/** The caller: send every batch (assign sequences on first send), settle its handles once. */
function sendAll(batches: readonly PendingBatch<Handle>[]): void {
  let sequence = 0;
  for (const batch of batches) {
    if (!batch.sent) assignBaseSequence(batch.batch, sequence);
    sequence += batch.records.length;
    for (const handle of batch.handles) handle.settled++;
  }
}

describe('mergeUnsent', () => {
  for (const codec of [Codec.gzip, Codec.zstd, Codec.lz4] as const) {
    it(`codec ${codec}: packs never-sent batches into fewer, keeps sent ones byte-identical`, () => {
      const { batches, records, handles } = backlog(codec, 12, codec);
      const sent = batches.slice(0, 2).map((b) => ({ ...b, sent: true }));
      assignBaseSequence(sent[0]!.batch, 0);
      assignBaseSequence(sent[1]!.batch, sent[0]!.records.length);
      const sentBytes = sent.map((b) => Buffer.from(b.batch));
      const input = [...sent, ...batches.slice(2)];
      const merged = mergeUnsent(input, { codec, maxBytes: MAX_BYTES });
      expect(merged[0]).toBe(sent[0]);
      expect(merged[1]).toBe(sent[1]);
      expect(merged[0]!.batch.equals(sentBytes[0]!)).toBe(true);
      expect(merged[1]!.batch.equals(sentBytes[1]!)).toBe(true);
      // 10 uncompressed-bounded batches: ~4.5x codecs need 3, lz4 (~2.4x) 5.
      expect(merged.length - 2).toBeLessThanOrEqual(codec === Codec.lz4 ? 5 : 3);
      expect(merged.flatMap((b) => b.handles)).toEqual(handles);
      expectBatchesHold(merged.map((b) => b.batch), MAX_BYTES, records);
      // Retry of a merged batch after its first send: the same bytes again.
      sendAll(merged);
      const firstSend = merged.map((b) => Buffer.from(b.batch));
      const again = mergeUnsent(merged.map((b) => ({ ...b, sent: true })), { codec, maxBytes: MAX_BYTES });
      again.forEach((b, i) => expect(b.batch.equals(firstSend[i]!)).toBe(true));
      for (const handle of handles) expect(handle.settled).toBe(1);
    });
  }

  it('a sent batch splits the backlog into runs; the order is kept', () => {
    const { batches, records, handles } = backlog(Codec.zstd, 8, 21);
    const input = batches.map((b, i) => (i === 3 ? { ...b, sent: true } : b));
    const merged = mergeUnsent(input, { codec: Codec.zstd, maxBytes: MAX_BYTES });
    expect(merged).toContain(input[3]);
    expect(merged.flatMap((b) => b.handles)).toEqual(handles);
    expectBatchesHold(merged.map((b) => b.batch), MAX_BYTES, records);
  });

  it('a codec failure mid-merge: demoted batches, no record lost, every handle settled once', () => {
    const { batches, records, handles } = backlog(Codec.gzip, 10, 31);
    let flushes = 0;
    streamFaults.hook = (_codec, point) => {
      if (point === 'flush' && ++flushes === 12) throw new Error('injected gzip failure');
      return undefined;
    };
    const merged = mergeUnsent(batches, { codec: Codec.gzip, maxBytes: MAX_BYTES });
    expect(flushes).toBeGreaterThanOrEqual(12);
    expect(merged.flatMap((b) => b.handles)).toEqual(handles);
    expectBatchesHold(merged.map((b) => b.batch), MAX_BYTES, records);
    sendAll(merged);
    for (const handle of handles) expect(handle.settled).toBe(1);
  });

  it('a failure that escapes a run mid-merge keeps that run exactly as it was', () => {
    const { batches, handles } = backlog(Codec.zstd, 6, 41);
    // A record that fits only compressed (larger than maxBytes raw), in a batch of its own, late in the run.
    const huge = { timestamp: T0, value: textValue(prng(42), 2 * MAX_BYTES) };
    const hugeHandle = { id: -1, settled: 0 };
    const alone = new BoundedBatchBuilder({ codec: Codec.zstd, maxBytes: MAX_BYTES });
    expect(alone.tryAppend(huge)).toBe(true);
    const input = [...batches.slice(0, 4), ...toPendingBatches(alone.seal(), [huge], [hugeHandle]), ...batches.slice(4)];
    const originals = input.map((b) => Buffer.from(b.batch));
    // The codec now fails everywhere: streaming (demotes) and one-shot (the huge record has no plain form).
    streamFaults.hook = () => {
      throw new Error('injected zstd failure');
    };
    const errors: unknown[] = [];
    const merged = mergeUnsent(input, { codec: Codec.zstd, maxBytes: MAX_BYTES, onError: (e) => errors.push(e) });
    expect(errors).toHaveLength(1);
    expect(merged).toEqual(input);
    merged.forEach((b, i) => {
      expect(b).toBe(input[i]);
      expect(b.batch.equals(originals[i]!)).toBe(true);
    });
    sendAll(merged);
    for (const handle of [...handles, hugeHandle]) expect(handle.settled).toBe(1);
  });

  it('the merge is kept only if it saves batches', () => {
    const { batches } = backlog(Codec.none, 3, 51);
    const merged = mergeUnsent(batches, { codec: Codec.none, maxBytes: MAX_BYTES });
    merged.forEach((b, i) => expect(b).toBe(batches[i]));
  });
});
