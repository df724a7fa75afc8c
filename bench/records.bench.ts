// Validate-and-iterate throughput of the record batch codec, for 100-byte
// records in 16 KiB and 1 MiB uncompressed batches, beside raw CRC-32C over
// the same bytes (the floor: validation must checksum every byte) measured
// in the same run. Baseline for the ratio: the fastest CRC-32C available.
import CRC32C from 'crc-32/crc32c.js';
import { crc32c as nativeCrc32c, capabilities } from '@seglog/native';
import { buildBatch, validateBatch, RecordBatch, RecordCursor, type RecordInput } from '@seglog/records';
import { fmtMBps, fmtRate, printTable, runCases, type BenchOptions, type Case } from './lib/harness.js';

const RECORD_VALUE_BYTES = 100;

function makeBatch(targetBytes: number, seed: number): Buffer {
  const records: RecordInput[] = [];
  let bytes = 61;
  let x = seed >>> 0;
  while (bytes < targetBytes - 130) {
    const value = Buffer.allocUnsafe(RECORD_VALUE_BYTES);
    for (let i = 0; i < value.length; i++) {
      x = (x * 1103515245 + 12345) >>> 0;
      value[i] = 32 + ((x >>> 16) % 95);
    }
    records.push({ key: null, value, timestampDelta: records.length });
    bytes += RECORD_VALUE_BYTES + 10;
  }
  return buildBatch({ records, baseTimestamp: 1_700_000_000_000 });
}

export async function run(options: BenchOptions): Promise<void> {
  const sizes = options.quick ? [16 * 1024, 256 * 1024] : [16 * 1024, 1024 * 1024];
  const totalBytes = options.quick ? 4 * 1024 * 1024 : 64 * 1024 * 1024;
  const rows: string[][] = [['case', 'median', 'min-max MB/s', 'records/s (median)', 'vs best CRC', 'checksum']];
  for (const size of sizes) {
    const batch = makeBatch(size, size);
    const view = new RecordBatch(batch);
    const count = view.recordsCount;
    const reps = Math.max(1, Math.floor(totalBytes / batch.length));
    const cursor = new RecordCursor();
    const cases: Case[] = [
      {
        name: `crc32c js (crc-32)`,
        run: () => {
          let c = 0;
          for (let i = 0; i < reps; i++) c = (c + (CRC32C.buf(batch.subarray(21)) >>> 0)) >>> 0;
          return { units: reps * batch.length, checksum: c };
        },
      },
      {
        name: 'validate + iterate',
        run: () => {
          let c = 0;
          for (let i = 0; i < reps; i++) {
            const summary = validateBatch(batch, { maxMessageBytes: 16 * 1024 * 1024 });
            cursor.open(summary.batch);
            while (cursor.next()) c = (c + cursor.valueLength + cursor.offsetDelta) >>> 0;
            cursor.close();
          }
          return { units: reps * batch.length, checksum: c };
        },
      },
      {
        name: 'validate only',
        run: () => {
          let c = 0;
          for (let i = 0; i < reps; i++) c = (c + validateBatch(batch, { maxMessageBytes: 16 * 1024 * 1024 }).recordsCount) >>> 0;
          return { units: reps * batch.length, checksum: c };
        },
      },
    ];
    if (nativeCrc32c !== null) {
      const native = nativeCrc32c;
      cases.unshift({
        name: `crc32c native (${capabilities.crc32cHardware ? 'sse4.2' : 'software'})`,
        run: () => {
          let c = 0;
          for (let i = 0; i < reps; i++) c = (c + native(batch.subarray(21), 0)) >>> 0;
          return { units: reps * batch.length, checksum: c };
        },
      });
    }
    // warm up every case once, untimed
    for (const c of cases) await c.run();
    const results = await runCases(cases, options);
    const bestCrc = Math.max(...results.filter((r) => r.name.startsWith('crc32c')).map((r) => r.median));
    console.log(`\n${(batch.length / 1024).toFixed(0)} KiB batches of ${count} records × ${RECORD_VALUE_BYTES} B values, ${reps} batches per round`);
    for (const r of results) {
      const recordsPerSec = r.name.startsWith('crc') ? '' : fmtRate((r.median / batch.length) * count, 'rec');
      rows.push([`${(batch.length / 1024).toFixed(0)} KiB ${r.name}`, fmtMBps(r.median), `${(r.min / 1e6).toFixed(0)}-${(r.max / 1e6).toFixed(0)}`, recordsPerSec, `${(r.median / bestCrc).toFixed(2)}x`, r.checksum.toString(16)]);
    }
  }
  console.log('');
  printTable(rows);
}
