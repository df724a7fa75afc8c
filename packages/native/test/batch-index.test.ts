// indexBatches / indexBatchesAsync on hand-made v2 batches: the batch and
// record entries, the CRC flag, the stops (a partial batch, a size below the
// header, a magic other than 2, a full table), the batches left without
// record entries (compressed, headers, a record longer than it says), and
// TypeErrors for bad arguments. The differential test against the
// JavaScript decoder is packages/records/test/batch-window-index.test.ts.
import { describe, expect, it } from 'vitest';
import { BATCH_INDEX, indexBatches, indexBatchesAsync } from '../src/index.js';
import { batch, record, varint } from './helpers.js';

const native = process.env['SEGLOG_NATIVE'] === '0' ? describe.skip : describe;

const { BATCH_STRIDE, RECORD_STRIDE, FLAG_CRC_OK, FLAG_INDEXED } = BATCH_INDEX;

native('indexBatches (native addon)', () => {
  const tables = (batches = 16, records = 64) => ({ batches: new Int32Array(batches * BATCH_STRIDE), records: new Int32Array(records * RECORD_STRIDE) });

  it('writes one entry per whole batch and one per record of a plain batch', () => {
    const a = batch([record(0, [1, 2, 3]), record(1, null)]);
    const b = batch([record(0, Array.from({ length: 200 }, (_, i) => i & 0xff))]);
    const buf = Buffer.concat([Buffer.alloc(5), a, b, a.subarray(0, 30)]);
    const t = tables();
    expect(indexBatches!(buf, 5, buf.length, t.batches, t.records)).toBe(2);
    expect([...t.batches.subarray(0, 8)]).toEqual([5, a.length, FLAG_CRC_OK | FLAG_INDEXED, 0, 5 + a.length, b.length, FLAG_CRC_OK | FLAG_INDEXED, 2]);
    // Record 0 of a: starts at 5 + 61, attributes 0, timestampDelta 0, offsetDelta 0, key null, value of 3 bytes.
    const r0 = 5 + 61;
    expect([...t.records.subarray(0, 8)]).toEqual([r0, 0, 0, 0, r0 + 5, -1, r0 + 6, 3]);
    const r1 = r0 + record(0, [1, 2, 3]).length;
    expect([...t.records.subarray(8, 16)]).toEqual([r1, 0, 1, 1, r1 + 5, -1, r1 + 6, -1]);
    expect(t.records[16 + 7]).toBe(200); // b's value: a 2-byte length varint
  });

  it('flags a wrong CRC and leaves other record forms to the JavaScript decoder', () => {
    const bad = batch([record(0, [9])]);
    bad[bad.length - 2] = bad[bad.length - 2]! ^ 1;
    const withHeader = batch([record(0, [1], [...varint(1), ...varint(1), 0x61, ...varint(-1)])]);
    const compressed = batch([record(0, [1])], 1);
    const lying = batch([record(0, [1])]);
    lying[61] = lying[61]! + 1; // the record says one byte more than it has
    const short = batch([record(0, [1]), record(1, [2])]);
    short.writeInt32BE(3, 57); // recordsCount 3, two records
    const buf = Buffer.concat([bad, withHeader, compressed, lying, short]);
    const t = tables();
    expect(indexBatches!(buf, 0, buf.length, t.batches, t.records)).toBe(5);
    const flags = [0, 1, 2, 3, 4].map((i) => t.batches[i * BATCH_STRIDE + 2]);
    expect(flags).toEqual([FLAG_INDEXED, FLAG_CRC_OK, FLAG_CRC_OK, 0, 0]);
  });

  it('stops before a partial batch, a size below the header, another magic, or a full table', () => {
    const a = batch([record(0, [1])]);
    const t = tables(2, 64);
    const three = Buffer.concat([a, a, a]);
    expect(indexBatches!(three, 0, three.length, t.batches, t.records)).toBe(2); // the table holds two
    const tooSmall = Buffer.from(a);
    tooSmall.writeInt32BE(48, 8);
    const magic1 = Buffer.from(a);
    magic1.writeInt8(1, 16);
    for (const stop of [a.subarray(0, a.length - 1), tooSmall, magic1, Buffer.alloc(11)]) {
      const buf = Buffer.concat([a, stop]);
      expect(indexBatches!(buf, 0, buf.length, tables().batches, tables().records)).toBe(1);
    }
    // Records that do not fit the records table: the batch is entered without them.
    const small = tables(4, 1);
    const two = batch([record(0, [1]), record(1, [2])]);
    expect(indexBatches!(two, 0, two.length, small.batches, small.records)).toBe(1);
    expect(small.batches[2]).toBe(FLAG_CRC_OK);
  });

  it('the async job writes the same tables', async () => {
    const buf = Buffer.concat(Array.from({ length: 30 }, (_, i) => batch([record(0, [i]), record(1, null), record(2, [i, i])])));
    const sync = tables(64, 128);
    const async = tables(64, 128);
    expect(indexBatches!(buf, 0, buf.length, sync.batches, sync.records)).toBe(30);
    expect(await indexBatchesAsync!(buf, 0, buf.length, async.batches, async.records)).toBe(30);
    expect(async.batches).toEqual(sync.batches);
    expect(async.records).toEqual(sync.records);
  });

  it('refuses bad arguments with a TypeError', () => {
    const t = tables();
    const buf = Buffer.alloc(100);
    const calls: Array<() => unknown> = [
      () => indexBatches!(new Uint16Array(4) as unknown as Uint8Array, 0, 4, t.batches, t.records),
      () => indexBatches!(buf, 10, 5, t.batches, t.records),
      () => indexBatches!(buf, 0, 101, t.batches, t.records),
      () => indexBatches!(buf, -1, 5, t.batches, t.records),
      () => indexBatches!(buf, 0, 5, new Uint32Array(4) as unknown as Int32Array, t.records),
      () => indexBatchesAsync!(buf, 0, 101, t.batches, t.records),
    ];
    for (const call of calls) expect(call).toThrow(TypeError);
  });
});
