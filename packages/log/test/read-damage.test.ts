// Read-time damage in a sealed segment (issue 23 item 0c): a batch header
// damaged on disk after a clean stop (no recovery scans it). Reads before it
// return the batches up to it; a read of its offsets is
// SEGLOG_ERR_LOG_CORRUPT_BATCH (Kafka CORRUPT_MESSAGE) naming the file, the
// position and the next readable offset; reads from that offset on return
// every later record, with intact framing. Before the fix a read there was
// SEGLOG_ERR_LOG_CORRUPTION (KAFKA_STORAGE_ERROR, retried forever by
// clients), or the damaged batch went out with broken framing, and every
// read that had to walk through it failed.
import { splitBatches } from '@seglog/records';
import { describe, expect, it } from 'vitest';
import { rejected } from './helpers.js';
import { config, newIo, openLog, producerBatch, segmentPath, T0 } from './log-helpers.js';

const SIZE = producerBatch(2).length;
const DAMAGED = 7; // batch index inside segment 0 (offsets 14, 15)

/** Ways a batch header gets damaged; each is applied at the start of the batch's bytes. */
const DAMAGE: ReadonlyArray<readonly [string, (bytes: Buffer, at: number) => void]> = [
  ['magic byte', (b, at) => { b[at + 16] = 0x07; }],
  ['batch length grown by 40 (plausible: broken framing if sent)', (b, at) => b.writeInt32BE(b.readInt32BE(at + 8) + 40, at + 8)],
  ['batch length shrunk by 30', (b, at) => b.writeInt32BE(b.readInt32BE(at + 8) - 30, at + 8)],
  ['batch length zeroed', (b, at) => b.writeInt32BE(0, at + 8)],
  ['base offset going back', (b, at) => b.writeInt32BE(3, at + 4)],
];

async function readValid(log: Awaited<ReturnType<typeof openLog>>, offset: number, maxBytes: number): Promise<{ offsets: number[]; nextOffset: number }> {
  const plan = await log.read(offset, maxBytes);
  try {
    const bytes = await plan.toBuffer();
    const offsets: number[] = [];
    let framed = 0;
    for (const batch of splitBatches(bytes)) {
      expect(batch.isValid(), `CRC of the batch at ${batch.baseOffset}`).toBe(true);
      for (const record of batch.toRecords()) offsets.push(record.offset);
      framed += batch.sizeInBytes;
    }
    expect(framed, 'the plan holds whole batches only').toBe(bytes.length);
    return { offsets, nextOffset: plan.nextOffset };
  } finally {
    await plan.release();
  }
}

describe('read-time damage in a sealed segment (issue 23 0c)', () => {
  for (const [name, damage] of DAMAGE) {
    it(`${name}: reads stop before it, name it (CORRUPT_MESSAGE), and continue after it`, async () => {
      const io = await newIo();
      const cfg = config({ segmentBytes: SIZE * 16, indexIntervalBytes: SIZE * 4 });
      const log = await openLog(io, cfg);
      // Increasing timestamps: the clean open's tail check (loadState) starts at the last index entries, after the damage.
      for (let i = 0; i < 40; i++) await log.appendAsLeader(producerBatch(2, { tag: i, timestamp: T0 + 10 * i }), { leaderEpoch: 0 });
      expect(log.segmentBaseOffsets()).toEqual([0, 32, 64]);
      await log.close();
      const file = segmentPath(0, '.log');
      const bytes = await io.readFile(file);
      damage(bytes, SIZE * DAMAGED);
      const handle = await io.open(file);
      await handle.pwrite(bytes, 0);
      await handle.close();

      const reopened = await openLog(io, cfg, { recoveryPoint: 80 }); // clean: nothing scans segment 0
      // From the start: whole, valid batches up to the damaged one.
      const before = await readValid(reopened, 0, 1 << 20);
      expect(before.offsets).toEqual([...Array(14).keys()]);
      expect(before.nextOffset).toBe(14);
      // Its offsets: a typed error naming file, position and where the log continues (every time).
      for (const offset of [14, 15, 14]) {
        const error = await rejected(reopened.read(offset, 1 << 20));
        expect(error.code).toBe('SEGLOG_ERR_LOG_CORRUPT_BATCH');
        expect((error as { kafka?: string }).kafka).toBe('CORRUPT_MESSAGE');
        expect(error.context).toMatchObject({ path: file, position: SIZE * DAMAGED, firstOffset: 14, nextOffset: 16 });
        expect(error.message).toContain('the log continues at offset 16');
      }
      // After it: every later record, through the index, across segments, in small and large reads.
      const rest: number[] = [];
      for (let offset = 16; offset < 80;) {
        const got = await readValid(reopened, offset, SIZE * 3);
        rest.push(...got.offsets);
        offset = got.nextOffset;
      }
      expect(rest).toEqual(Array.from({ length: 64 }, (_, i) => 16 + i));
      for (const offset of [17, 20, 27, 31]) expect((await readValid(reopened, offset, 1)).offsets[0]).toBe(offset - (offset % 2));
      await reopened.close();
      expect(io.openHandles()).toEqual([]);
    });
  }
});
