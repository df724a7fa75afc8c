// tryAppendAsLeader → null → appendAsLeader of the same buffer reuses the
// first validation; a buffer whose CRC field changed in between, or another
// buffer, is validated again (and a corrupt one rejected, nothing changed).
import { describe, expect, it } from 'vitest';
import { RecordBatch } from '@seglog/records';
import { config, newIo, openLog, producerBatch, readAll } from './log-helpers.js';

describe('appendAsLeader after a declined tryAppendAsLeader', () => {
  it('appends the declined batch (validated once) and reads it back', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    const batch = producerBatch(3, { tag: 7 });
    expect(log.tryAppendAsLeader(batch, { leaderEpoch: 5 })).toBeNull(); // a new epoch: pool work
    const r = await log.appendAsLeader(batch, { leaderEpoch: 5 });
    expect([r.firstOffset, r.lastOffset]).toEqual([0, 2]);
    await log.flush();
    expect((await readAll(log)).map(([o]) => o)).toEqual([0, 1, 2]);
    await log.close();
  });

  it('validates again when the CRC field changed in between', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    const batch = producerBatch(3);
    expect(log.tryAppendAsLeader(batch, { leaderEpoch: 5 })).toBeNull();
    const crcAt = 17;
    batch.writeUInt32BE((new RecordBatch(batch).crc ^ 1) >>> 0, crcAt);
    await expect(log.appendAsLeader(batch, { leaderEpoch: 5 })).rejects.toMatchObject({ code: 'SEGLOG_ERR_RECORDS_CRC_MISMATCH' });
    expect(log.logEndOffset).toBe(0);
    await log.close();
  });

  it('validates another buffer (a corrupt copy is rejected)', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    const batch = producerBatch(3);
    expect(log.tryAppendAsLeader(batch, { leaderEpoch: 5 })).toBeNull();
    const copy = Buffer.from(batch);
    copy[copy.length - 1] = copy[copy.length - 1]! ^ 0xff; // a record byte: the CRC no longer matches
    await expect(log.appendAsLeader(copy, { leaderEpoch: 5 })).rejects.toMatchObject({ code: 'SEGLOG_ERR_RECORDS_CRC_MISMATCH' });
    // The remembered validation was forgotten: the original now validates afresh and appends.
    const r = await log.appendAsLeader(batch, { leaderEpoch: 5 });
    expect(r.lastOffset).toBe(2);
    await log.close();
  });
});
