// BoundedBatchBuilder: batches bounded by their compressed size.
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BoundedBatchBuilder, Codec, RecordBatch, assignBaseSequence, buildBatch, compress, validateBatch,
  type CodecId, type RecordInput,
} from '../src/index.js';
import { streamFaults } from '../src/internal/streaming/fault-hook.js';
import { expectBatchesHold, produce, prng, randomValue, textValue } from './bounded-helpers.js';

const T0 = 1_700_000_000_000;
const STREAMING: readonly CodecId[] = [Codec.gzip, Codec.zstd, Codec.lz4];
const ALL: readonly CodecId[] = [Codec.none, Codec.gzip, Codec.snappy, Codec.lz4, Codec.zstd];

afterEach(() => {
  streamFaults.hook = null;
});

describe('BoundedBatchBuilder', () => {
  it('codec none writes exactly what buildBatch writes', () => {
    const random = prng(1);
    const records: RecordInput[] = [];
    for (let i = 0; i < 50; i++) {
      records.push({
        timestamp: T0 + (i % 7) * 1000 - 3000,
        key: i % 3 === 0 ? null : `key-${i}`,
        value: i % 5 === 0 ? null : textValue(random, 1 + i * 13),
        headers: i % 4 === 0 ? [{ key: 'h', value: 'v' }, { key: 'n' }] : [],
      });
    }
    const builder = new BoundedBatchBuilder({ codec: Codec.none, maxBytes: 1 << 20, producerId: 7, producerEpoch: 2 });
    for (const record of records) expect(builder.tryAppend(record)).toBe(true);
    const estimated = builder.estimatedBytes;
    const [batch] = builder.seal();
    expect(batch).toEqual(buildBatch({ records, producerId: 7, producerEpoch: 2 }));
    expect(estimated).toBe(batch!.length);
  });

  it('property: within maxBytes, every record once and in order, valid, for every codec', () => {
    const recordArb = fc.record({
      kind: fc.constantFrom('text', 'random', 'huge-text', 'tiny'),
      fraction: fc.double({ min: 0, max: 1, noNaN: true }),
      seed: fc.integer(),
      keyed: fc.boolean(),
      dt: fc.integer({ min: -5000, max: 5000 }),
    });
    fc.assert(
      fc.property(
        fc.constantFrom(...ALL),
        fc.integer({ min: 160, max: 64 * 1024 }),
        fc.array(recordArb, { minLength: 1, maxLength: 40 }),
        (codec, maxBytes, specs) => {
          const records: RecordInput[] = specs.map((spec, i) => {
            const random = prng(spec.seed);
            const limit = maxBytes - 61 - 16;
            const bytes =
              spec.kind === 'tiny' ? Math.floor(spec.fraction * 20)
              : spec.kind === 'huge-text' ? Math.floor(spec.fraction * 3 * maxBytes)
              : Math.floor(spec.fraction * limit);
            const value = spec.kind === 'random' ? randomValue(random, bytes) : textValue(random, bytes);
            return { timestamp: T0 + spec.dt, key: spec.keyed ? `k${i}` : null, value };
          });
          const { batches, contents, rejected } = produce({ codec, maxBytes }, records);
          const placed = contents.flat();
          expect(placed.length + rejected.length).toBe(records.length);
          expectBatchesHold(batches, maxBytes, placed);
          // Order across batches and rejections is the input order.
          const order = records.filter((r) => placed.includes(r));
          expect(placed).toEqual(order);
          for (const record of rejected) {
            // Rejected only if it fits neither uncompressed nor compressed one-shot.
            expect(buildBatch({ records: [record] }).length).toBeGreaterThan(maxBytes);
            expect(buildBatch({ records: [record], compression: codec }).length).toBeGreaterThan(maxBytes);
          }
        },
      ),
      { numRuns: 100, seed: 20260101 },
    );
  });

  it('a sealed batch is complete: CRC, counts, timestamps, producer fields; sequences set at send', () => {
    const random = prng(3);
    for (const codec of STREAMING) {
      const builder = new BoundedBatchBuilder({ codec, maxBytes: 16 * 1024, producerId: 42, producerEpoch: 3, transactional: true });
      let n = 0;
      while (builder.tryAppend({ timestamp: T0 + (n % 5) * 10, value: textValue(random, 300) })) n++;
      expect(n).toBeGreaterThan(16 * 1024 / 300); // more than fits uncompressed
      const [batch] = builder.seal();
      const view = new RecordBatch(batch!);
      expect(view.isValid()).toBe(true);
      expect(view.recordsCount).toBe(n);
      expect(view.compression).toBe(codec);
      expect(view.isTransactional).toBe(true);
      expect(view.producerId).toBe(42);
      expect(view.baseSequence).toBe(-1);
      expect(view.maxTimestamp).toBe(T0 + 40);
      assignBaseSequence(batch!, 17);
      const summary = validateBatch(batch!, { maxMessageBytes: 16 * 1024 });
      expect(summary.baseSequence).toBe(17);
      expect(summary.lastSequence).toBe(17 + n - 1);
    }
  });

  it('packs more than twice the records of an uncompressed-bounded batch (gzip, zstd) at 1 MiB, 512-byte values', () => {
    const maxBytes = 1024 * 1024;
    const random = prng(5);
    const values = Array.from({ length: 12_000 }, () => textValue(random, 512));
    const oneBatch = (codec: CodecId): { count: number; bytes: number; flushes: number; ms: number } => {
      const started = performance.now();
      const builder = new BoundedBatchBuilder({ codec, maxBytes });
      let count = 0;
      while (count < values.length && builder.tryAppend({ timestamp: T0, value: values[count]! })) count++;
      expect(count).toBeLessThan(values.length);
      const flushes = builder.flushCount;
      const [batch] = builder.seal();
      const ms = performance.now() - started;
      expect(batch!.length).toBeLessThanOrEqual(maxBytes);
      expect(validateBatch(batch!, { maxMessageBytes: maxBytes }).recordsCount).toBe(count);
      return { count, bytes: batch!.length, flushes, ms };
    };
    const plain = oneBatch(Codec.none);
    const ratio = Buffer.concat(values).length / compress(Codec.gzip, Buffer.concat(values)).length;
    const lines = [`values 512 B, gzip one-shot ratio ${ratio.toFixed(2)}; uncompressed-bounded: ${plain.count} records/batch`];
    const counts = new Map<CodecId, number>();
    for (const codec of STREAMING) {
      const result = oneBatch(codec);
      counts.set(codec, result.count);
      lines.push(`codec ${codec}: ${result.count} records/batch (${(result.count / plain.count).toFixed(2)}x), ${result.bytes} B, ${result.flushes} flushes, ${result.ms.toFixed(0)} ms`);
    }
    console.log(lines.join('\n'));
    expect(counts.get(Codec.gzip)! / plain.count).toBeGreaterThan(2);
    expect(counts.get(Codec.zstd)! / plain.count).toBeGreaterThan(2);
    expect(counts.get(Codec.lz4)!).toBeGreaterThan(plain.count);
  });

  it('an empty builder measures a large compressible record instead of assuming the worst', () => {
    const maxBytes = 8 * 1024;
    const value = textValue(prng(9), 1.5 * maxBytes); // lz4 ~2.5x, gzip/zstd ~4.5x
    for (const codec of STREAMING) {
      const builder = new BoundedBatchBuilder({ codec, maxBytes });
      expect(builder.tryAppend({ timestamp: T0, value })).toBe(true);
      const [batch] = builder.seal();
      expect(batch!.length).toBeLessThanOrEqual(maxBytes);
      expect(new RecordBatch(batch!).toRecords()[0]!.value).toEqual(value);
    }
    const incompressible = randomValue(prng(10), maxBytes);
    const builder = new BoundedBatchBuilder({ codec: Codec.zstd, maxBytes });
    expect(builder.tryAppend({ timestamp: T0, value: incompressible })).toBe(false);
    expect(builder.recordsCount).toBe(0);
    // Still usable after the refused trial.
    expect(builder.tryAppend({ timestamp: T0, value: 'small' })).toBe(true);
    expect(new RecordBatch(builder.seal()[0]!).toRecords().map((r) => r.value?.toString())).toEqual(['small']);
  });

  it('retry: the sealed bytes are kept and resent byte-identical', () => {
    for (const codec of STREAMING) {
      const builder = new BoundedBatchBuilder({ codec, maxBytes: 32 * 1024, producerId: 1, producerEpoch: 0 });
      const random = prng(11);
      while (builder.tryAppend({ timestamp: T0, value: textValue(random, 200) }));
      const [batch] = builder.seal({ baseSequence: 100 });
      const firstSend = Buffer.from(batch!);
      validateBatch(batch!, { maxMessageBytes: 32 * 1024 }); // the broker reads; it must not change the bytes
      expect(batch!.equals(firstSend)).toBe(true);
      // (That the log accepts a resend exactly once is the load client's integration test.)
    }
  });

  for (const point of ['flush', 'finish'] as const) {
    it(`a codec error at ${point} demotes to uncompressed batches within maxBytes, no record lost`, () => {
      for (const codec of STREAMING) {
        const maxBytes = 8 * 1024;
        streamFaults.hook = (_codec, at) => {
          if (at === point) throw new Error(`injected ${at} failure`);
          return undefined;
        };
        const builder = new BoundedBatchBuilder({ codec, maxBytes });
        const random = prng(12);
        const records: RecordInput[] = [];
        for (let i = 0; i < 400; i++) {
          const record = { timestamp: T0 + i, value: textValue(random, 100) };
          if (!builder.tryAppend(record)) break;
          records.push(record);
        }
        const batches = builder.seal();
        expect(builder.demoted).toBe(true);
        // At finish, the records were accepted by compressed size: more than one plain batch holds them.
        if (point === 'finish') expect(batches.length).toBeGreaterThan(1);
        for (const batch of batches) expect(new RecordBatch(batch).compression).toBe(Codec.none);
        expectBatchesHold(batches, maxBytes, records);
      }
    });
  }

  it('a codec that breaks its bound (sealed size above maxBytes) is demoted', () => {
    streamFaults.hook = (_codec, at) => (at === 'finish' ? 64 * 1024 : undefined);
    const builder = new BoundedBatchBuilder({ codec: Codec.gzip, maxBytes: 4096 });
    const records = Array.from({ length: 5 }, (_, i) => ({ timestamp: T0, value: `v${i}` }));
    for (const record of records) expect(builder.tryAppend(record)).toBe(true);
    const batches = builder.seal({ baseSequence: 5 });
    expect((builder.demotionCause as { code?: string }).code).toBe('SEGLOG_ERR_RECORDS_CODEC_BOUND_EXCEEDED');
    expectBatchesHold(batches, 4096, records);
    expect(new RecordBatch(batches[0]!).baseSequence).toBe(5);
  });

  it('the test hook can make the property fail: without demotion the limit would be broken', () => {
    // Canary for the size check itself: garbage past the bound must never reach a sealed batch.
    streamFaults.hook = (_codec, at) => (at === 'finish' ? 1 : undefined);
    const builder = new BoundedBatchBuilder({ codec: Codec.zstd, maxBytes: 1024 });
    const random = prng(13);
    while (builder.tryAppend({ timestamp: T0, value: randomValue(random, 50) }));
    const batches = builder.seal();
    for (const batch of batches) expect(batch.length).toBeLessThanOrEqual(1024);
  });
});
