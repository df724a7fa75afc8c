// scanBatch on hand-made v2 batches: the CRC verdict and value, the walk's
// findings (maxTimestamp and its index, consecutive offset deltas, the first
// null key of a compacted topic, the first timestamp out of bounds), the
// batches it leaves to the JavaScript passes (compressed, LogAppendTime, a
// base timestamp at 2^52, a malformed record, a varint longer than the walk
// reads), and TypeErrors for bad arguments. The differential test against the
// JavaScript walk is in packages/records/test/fast-scan.test.ts.
import { describe, expect, it } from 'vitest';
import { crc32c, SCAN_BATCH, scanBatch } from '../src/index.js';
import { batch, record, recordOf, varint } from './helpers.js';

const native = process.env['SEGLOG_NATIVE'] === '0' ? describe.skip : describe;

const { RESULT_CRC_OK, RESULT_SCANNED, RULE_BOUND_TIMESTAMPS, RULE_COMPACTED } = SCAN_BATCH;
const BASE = 1_700_000_000_000;

interface Rules { now?: number; beforeMaxMs?: number; afterMaxMs?: number; bound?: boolean; compacted?: boolean }

function scan(buf: Buffer, rules: Rules = {}, start = 0, end = buf.length): { result: number; io: Float64Array } {
  const io = new Float64Array(SCAN_BATCH.IO_LENGTH).fill(-7);
  io[SCAN_BATCH.NOW] = rules.now ?? 0;
  io[SCAN_BATCH.BEFORE_MAX_MS] = rules.beforeMaxMs ?? Infinity;
  io[SCAN_BATCH.AFTER_MAX_MS] = rules.afterMaxMs ?? Infinity;
  io[SCAN_BATCH.RULES] = (rules.bound === false ? 0 : RULE_BOUND_TIMESTAMPS) | (rules.compacted === true ? RULE_COMPACTED : 0);
  return { result: scanBatch!(buf, start, end, io), io };
}

function findings(io: Float64Array): number[] {
  return [...io.subarray(SCAN_BATCH.MAX_TIMESTAMP, SCAN_BATCH.TIMESTAMP_ERROR + 1)];
}

const rec = (timestampDelta: number, offsetDelta: number, key: number[] | null = [7]) => recordOf({ timestampDelta, offsetDelta, key, value: [1, 2] });

native('scanBatch (native addon)', () => {
  it('checks the CRC and walks a plain batch: maxTimestamp, its index, consecutive deltas', () => {
    const buf = batch([rec(5, 0), rec(40, 1), rec(-3, 2), rec(40, 3)], 0, BASE);
    const { result, io } = scan(buf);
    expect(result).toBe(RESULT_CRC_OK | RESULT_SCANNED);
    expect(io[SCAN_BATCH.CRC]).toBe(buf.readUInt32BE(17));
    // maxTimestamp, its first index, consecutive, keyErrorIndex, timestampErrorIndex, timestampError
    expect(findings(io)).toEqual([BASE + 40, 1, 1, -1, -1, 0]);
    const gap = batch([rec(0, 0), rec(0, 2)], 0, BASE);
    expect(findings(scan(gap).io)[2]).toBe(0);
  });

  it('gives the computed CRC when the stored one is wrong, and still walks', () => {
    const buf = batch([rec(0, 0)], 0, BASE);
    const good = buf.readUInt32BE(17);
    buf.writeUInt32BE((good ^ 1) >>> 0, 17);
    const { result, io } = scan(buf);
    expect(result).toBe(RESULT_SCANNED);
    expect(io[SCAN_BATCH.CRC]).toBe(good);
    expect(io[SCAN_BATCH.CRC]).toBe(crc32c!(buf.subarray(21), 0));
  });

  it('scans the batch at start..end of a larger buffer', () => {
    const a = batch([rec(1, 0)], 0, BASE);
    const b = batch([rec(9, 0), rec(2, 1)], 0, BASE + 100);
    const buf = Buffer.concat([Buffer.from([1, 2, 3]), a, b, Buffer.from([0xff])]);
    const { result, io } = scan(buf, {}, 3 + a.length, 3 + a.length + b.length);
    expect(result).toBe(RESULT_CRC_OK | RESULT_SCANNED);
    expect(findings(io).slice(0, 2)).toEqual([BASE + 109, 0]);
  });

  it('finds the first null key of a compacted topic, and skips that record\'s timestamp check', () => {
    const buf = batch([rec(0, 0), rec(-5000, 1, null), rec(-6000, 2), rec(0, 3, null)], 0, BASE);
    expect(findings(scan(buf, { compacted: true, now: BASE, beforeMaxMs: 5500 }).io)).toEqual([BASE, 0, 1, 1, 2, BASE - 6000]);
    expect(findings(scan(buf, { now: BASE, beforeMaxMs: 100 }).io)).toEqual([BASE, 0, 1, -1, 1, BASE - 5000]);
    // The bounds are inclusive: 5000 ms before now passes a bound of 5000.
    expect(findings(scan(buf, { now: BASE, beforeMaxMs: 5000 }).io)).toEqual([BASE, 0, 1, -1, 2, BASE - 6000]);
  });

  it('bounds timestamps after now, not on a LogAppendTime topic, and never a timestamp of -1', () => {
    const buf = batch([rec(0, 0), rec(3000, 1)], 0, BASE);
    expect(findings(scan(buf, { now: BASE, afterMaxMs: 2999 }).io).slice(3)).toEqual([-1, 1, BASE + 3000]);
    expect(findings(scan(buf, { now: BASE, afterMaxMs: 3000 }).io).slice(3)).toEqual([-1, -1, 0]);
    expect(findings(scan(buf, { now: BASE, afterMaxMs: 0, bound: false }).io).slice(3)).toEqual([-1, -1, 0]);
    const minusOne = batch([rec(0, 0)], 0, -1);
    expect(findings(scan(minusOne, { now: BASE, beforeMaxMs: 0 }).io)).toEqual([-1, -1, 1, -1, -1, 0]);
  });

  it('walks header keys and values', () => {
    const headers = [...varint(2), ...varint(1), 0x61, ...varint(-1), ...varint(0), ...varint(2), 9, 9];
    const buf = batch([recordOf({ timestampDelta: 0, offsetDelta: 0, key: [1], value: null, headers })], 0, BASE);
    expect(scan(buf).result).toBe(RESULT_CRC_OK | RESULT_SCANNED);
  });

  it('leaves compressed, LogAppendTime and huge-base batches to the JavaScript passes', () => {
    for (const attributes of [1, 4, 8]) expect(scan(batch([record(0, [1])], attributes, BASE)).result).toBe(RESULT_CRC_OK);
    expect(scan(batch([record(0, [1])], 0, 2 ** 52)).result).toBe(RESULT_CRC_OK);
    expect(scan(batch([record(0, [1])], 0, -(2 ** 52))).result).toBe(RESULT_CRC_OK);
    expect(scan(batch([record(0, [1])], 0, 2 ** 52 - 1)).result).toBe(RESULT_CRC_OK | RESULT_SCANNED);
    const offset = batch([record(0, [1])], 0, BASE);
    offset.writeBigInt64BE(2n ** 52n, 0); // the CRC does not cover the base offset
    expect(scan(offset).result).toBe(RESULT_CRC_OK);
  });

  it('gives up on malformed records and on forms longer than the JavaScript walk reads', () => {
    const lying = batch([record(0, [1])], 0, BASE);
    lying[61] = lying[61]! + 1; // the record says one byte more than it has
    const short = batch([record(0, [1]), record(1, [2])], 0, BASE);
    short.writeInt32BE(3, 57);
    const extra = batch([record(0, [1]), record(1, [2])], 0, BASE);
    extra.writeInt32BE(1, 57);
    const longVarlong = batch([recordOf({ timestampDelta: [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0], offsetDelta: 0, key: null, value: [1] })], 0, BASE);
    const fiveByteVarint = batch([[...varint(10), 0, 0, 0x80, 0x80, 0x80, 0x80, 0, ...varint(-1), ...varint(-1), 0]], 0, BASE);
    const fourByteVarint = batch([[...varint(9), 0, 0, 0x80, 0x80, 0x80, 0, ...varint(-1), ...varint(-1), 0]], 0, BASE);
    const sevenBytes = batch([recordOf({ timestampDelta: [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0], offsetDelta: 0, key: null, value: [1] })], 0, BASE);
    const keyTooLong = batch([recordOf({ timestampDelta: 0, offsetDelta: 0, key: [1], value: [1] })], 0, BASE);
    keyTooLong[65] = 2 * 3; // key length 3 (at 61 the length, then attributes, timestampDelta, offsetDelta): beyond the record
    const badHeaderKey = batch([recordOf({ timestampDelta: 0, offsetDelta: 0, key: [1], value: null, headers: [...varint(1), ...varint(-1), ...varint(-1)] })], 0, BASE);
    const cases = { lying, short, extra, longVarlong, fiveByteVarint, keyTooLong, badHeaderKey };
    const scanned = Object.entries(cases).filter(([, buf]) => (scan(buf).result & RESULT_SCANNED) !== 0).map(([name]) => name);
    expect(scanned).toEqual([]);
    // The longest forms the JavaScript walk reads: a 7-byte varlong, a 4-byte varint (offsetDelta 0, padded).
    expect(scan(sevenBytes).result).toBe(RESULT_CRC_OK | RESULT_SCANNED);
    expect(scan(fourByteVarint).result).toBe(RESULT_CRC_OK | RESULT_SCANNED);
    const empty = batch([], 0, BASE);
    expect(scan(empty).result).toBe(RESULT_CRC_OK | RESULT_SCANNED); // no records, nothing after the header
  });

  it('throws TypeErrors for bad arguments', () => {
    const buf = batch([record(0, [1])], 0, BASE);
    const io = new Float64Array(SCAN_BATCH.IO_LENGTH);
    const call = scanBatch as unknown as (...args: unknown[]) => number;
    expect(() => call([1, 2], 0, 2, io)).toThrow(TypeError);
    expect(() => call(buf, 0, 60, io)).toThrow(TypeError);
    expect(() => call(buf, -1, buf.length, io)).toThrow(TypeError);
    expect(() => call(buf, 0, buf.length + 1, io)).toThrow(TypeError);
    expect(() => call(buf, 0, buf.length, new Float64Array(SCAN_BATCH.IO_LENGTH - 1))).toThrow(TypeError);
    expect(() => call(buf, 0, buf.length, new Float32Array(SCAN_BATCH.IO_LENGTH))).toThrow(TypeError);
    expect(() => call(buf, 0, buf.length)).toThrow(TypeError);
    for (const rules of [Number.NaN, -1, 4, 1.5, Infinity]) {
      const bad = new Float64Array(SCAN_BATCH.IO_LENGTH);
      bad[SCAN_BATCH.RULES] = rules;
      expect(() => call(buf, 0, buf.length, bad)).toThrow(/io\[RULES\]/);
    }
    expect(call(buf, 0, buf.length, io)).toBe(RESULT_CRC_OK | RESULT_SCANNED);
  });
});
