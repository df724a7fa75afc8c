// Differential: validateBatch's three ways into the record pass give the same
// answer for every input: 'native' (the addon's scanBatch: CRC and walk in one
// call, before the header rules), 'js' (checkCrc, then internal/fast-scan.ts)
// and 'strict' (checkCrc, then the RecordCursor pass alone). The answer is the
// summary, or the error's code, rule and details. Inputs: built batches, some
// compressed or claiming LogAppendTime, with record bytes or recordsCount
// overwritten, the CRC refreshed after that or not, under random rules.
// With the addon, scanBatch is also held to fastScanRecords directly: the same
// verdict and findings, and the CRC verdict of the JavaScript CRC. Without it
// (CI's SEGLOG_NATIVE=0 pass) the 'js' and 'strict' ways are still compared.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SCAN_BATCH, scanBatch } from '@seglog/native';
import { buildBatch, RecordBatch } from '../src/index.js';
import { crc32cJs } from '../src/crc32c.js';
import { fastScanRecords, fastScanResult } from '../src/internal/fast-scan.js';
import { validateBatchWith, type ValidateBatchOptions, type ValidationWalk } from '../src/validate-batch.js';
import { fixCrc, nullablePayload, overwriteRecords, RECORDS_OFFSET, T0 } from './helpers.js';

const record = fc.record({
  key: nullablePayload,
  value: nullablePayload,
  headers: fc.array(fc.record({ key: fc.string({ maxLength: 8 }), value: nullablePayload }), { maxLength: 2 }),
  timestampDelta: fc.oneof({ arbitrary: fc.integer({ min: -3_000, max: 3_000 }), weight: 9 }, { arbitrary: fc.integer({ min: -(2 ** 50), max: 2 ** 50 }), weight: 1 }),
});
const input = fc.record({
  records: fc.array(record, { minLength: 1, maxLength: 8 }),
  baseTimestamp: fc.oneof(fc.constant(T0), fc.integer({ min: -1, max: 2 ** 45 })),
  compression: fc.constantFrom(0, 0, 0, 0, 1),
  logAppendTime: fc.constantFrom(false, false, false, false, true),
  mutations: fc.oneof(fc.constant([]), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 3 })),
  countDelta: fc.constantFrom(0, 0, 0, 0, 0, 0, 1, -1),
  refreshCrc: fc.constantFrom(true, true, true, true, false),
  compacted: fc.constantFrom(false, false, true),
  topicLogAppendTime: fc.constantFrom(false, false, false, true),
  bounds: fc.option(fc.tuple(fc.integer({ min: 0, max: 4_000 }), fc.integer({ min: 0, max: 4_000 })), { nil: undefined }),
});

type Answer = { summary: Record<string, unknown> } | { error: Record<string, unknown> };

function answer(buf: Buffer, options: ValidateBatchOptions, walk: ValidationWalk): Answer {
  try {
    const { batch, ...summary } = validateBatchWith(buf, options, walk);
    return { summary: { ...summary, start: batch.start } };
  } catch (error) {
    const e = error as { code?: string; rule?: string; details?: unknown; message?: string };
    if (e.code === undefined) throw error;
    return { error: { code: e.code, rule: e.rule, details: e.details, message: e.message } };
  }
}

describe("validateBatch's walks (native, js, strict)", () => {
  it('give the same summary or error for every input', () => {
    let summaries = 0;
    let errors = 0;
    let scannedNatively = 0;
    let nativeCompared = 0;
    fc.assert(fc.property(input, (inp) => {
      const buf = buildBatch({
        records: inp.records, baseTimestamp: inp.baseTimestamp, compression: inp.compression,
        ...(inp.logAppendTime ? { timestampType: 'LogAppendTime' as const, maxTimestamp: T0 } : {}),
      });
      overwriteRecords(buf, inp.mutations);
      if (inp.countDelta !== 0) {
        const count = inp.records.length + inp.countDelta;
        buf.writeInt32BE(count, 57);
        buf.writeInt32BE(count - 1, 23); // lastOffsetDelta agrees, so the record pass decides
      }
      if (inp.refreshCrc) fixCrc(buf);
      const options: ValidateBatchOptions = {
        maxMessageBytes: 1 << 20, now: T0, compacted: inp.compacted,
        messageTimestampType: inp.topicLogAppendTime ? 'LogAppendTime' : 'CreateTime',
        ...(inp.bounds === undefined ? {} : { timestampBeforeMaxMs: inp.bounds[0], timestampAfterMaxMs: inp.bounds[1] }),
      };
      const strict = answer(buf, options, 'strict');
      expect(answer(buf, options, 'js')).toEqual(strict);
      if ('summary' in strict) summaries++;
      else errors++;
      if (scanBatch === null) return;
      expect(answer(buf, options, 'native')).toEqual(strict);
      // The twin walks, directly.
      const io = new Float64Array(SCAN_BATCH.IO_LENGTH);
      io[SCAN_BATCH.NOW] = T0;
      io[SCAN_BATCH.BEFORE_MAX_MS] = options.timestampBeforeMaxMs ?? Infinity;
      io[SCAN_BATCH.AFTER_MAX_MS] = options.timestampAfterMaxMs ?? Infinity;
      io[SCAN_BATCH.RULES] = (inp.topicLogAppendTime ? 0 : SCAN_BATCH.RULE_BOUND_TIMESTAMPS) | (inp.compacted ? SCAN_BATCH.RULE_COMPACTED : 0);
      const result = scanBatch(buf, 0, buf.length, io);
      const crc = crc32cJs(buf.subarray(21));
      expect(io[SCAN_BATCH.CRC]).toBe(crc);
      expect((result & SCAN_BATCH.RESULT_CRC_OK) !== 0).toBe(crc === buf.readUInt32BE(17));
      const batch = new RecordBatch(buf);
      const walkable = inp.compression === 0 && !inp.logAppendTime;
      const js = walkable && fastScanRecords(buf, RECORDS_OFFSET, buf.length, batch.recordsCount, {
        baseTimestamp: batch.baseTimestamp, baseOffset: 0, boundTimestamps: !inp.topicLogAppendTime, now: T0,
        beforeMaxMs: io[SCAN_BATCH.BEFORE_MAX_MS]!, afterMaxMs: io[SCAN_BATCH.AFTER_MAX_MS]!, compacted: inp.compacted,
      });
      expect((result & SCAN_BATCH.RESULT_SCANNED) !== 0).toBe(js);
      nativeCompared++;
      if (!js) return;
      scannedNatively++;
      const f = fastScanResult;
      expect([...io.subarray(SCAN_BATCH.MAX_TIMESTAMP)]).toEqual([
        f.maxTimestamp, f.maxTimestampIndex, f.consecutive ? 1 : 0, f.keyErrorIndex, f.timestampErrorIndex, f.timestampError,
      ]);
    }), { numRuns: 2500, seed: 20261205 });
    expect(summaries).toBeGreaterThan(250); // 378 with this seed
    expect(errors).toBeGreaterThan(1000);
    if (scanBatch !== null) {
      expect(nativeCompared).toBe(2500);
      expect(scannedNatively).toBeGreaterThan(400); // 688 with this seed
    }
  });
});
