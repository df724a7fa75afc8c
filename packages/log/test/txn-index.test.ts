import fc from 'fast-check';
import { SimIo } from '@seglog/io';
import { beforeEach, describe, expect, it } from 'vitest';
import { TxnIndex } from '../src/segment/txn-index.js';
import type { AbortedTxn } from '../src/segment/txn-index.js';
import { thrown, vector } from './helpers.js';

const DIR = '/data/t-0';
const PATH = `${DIR}/00000000000000000000.txnindex`;

async function newIo(): Promise<SimIo> {
  const io = new SimIo();
  await io.mkdir(DIR, { recursive: true });
  return io;
}

const txn = (producerId: number, firstOffset: number, lastOffset: number, lastStableOffset: number): AbortedTxn => ({
  producerId,
  firstOffset,
  lastOffset,
  lastStableOffset,
});

describe('TxnIndex', () => {
  let io: SimIo;
  beforeEach(async () => {
    io = await newIo();
  });

  it('creates the file lazily and reproduces the fixture entry byte for byte', async () => {
    const index = await TxnIndex.open(io, PATH, { baseOffset: 0 });
    expect(index.isEmpty()).toBe(true);
    await index.flush();
    expect(await io.exists(PATH)).toBe(false);
    index.append(txn(1000, 0, 29, 8));
    await index.flush();
    expect((await io.readFile(PATH)).toString('hex')).toBe(vector('.txnindex').hex);
    await index.close();
    const reopened = await TxnIndex.open(io, PATH, { baseOffset: 0 });
    expect(reopened.allAbortedTxns()).toEqual([txn(1000, 0, 29, 8)]);
    expect(reopened.lastOffset()).toBe(29);
    await reopened.close();
  });

  it('requires strictly increasing last offsets', async () => {
    const index = await TxnIndex.open(io, PATH, { baseOffset: 0 });
    index.append(txn(1, 0, 29, 8));
    expect(thrown(() => index.append(txn(2, 8, 29, 36))).code).toBe('SEGLOG_ERR_INDEX_INVALID_OFFSET');
    expect(thrown(() => index.append(txn(2, 8, 20, 36))).code).toBe('SEGLOG_ERR_INDEX_INVALID_OFFSET');
    index.append(txn(2, 8, 74, 36));
    expect(index.entries).toBe(2);
    await index.close();
  });

  it('ignores a partial tail entry and overwrites it on the next write', async () => {
    const index = await TxnIndex.open(io, PATH, { baseOffset: 0 });
    index.append(txn(1, 0, 29, 8));
    await index.close();
    const file = await io.open(PATH);
    await file.pwrite(Buffer.alloc(10, 0xab), 34);
    await file.close();
    const reopened = await TxnIndex.open(io, PATH, { baseOffset: 0 });
    expect(reopened.entries).toBe(1);
    reopened.sanityCheck();
    reopened.append(txn(2, 8, 74, 36));
    await reopened.close();
    const bytes = await io.readFile(PATH);
    expect(bytes.length).toBe(68);
    const again = await TxnIndex.open(io, PATH, { baseOffset: 0 });
    expect(again.allAbortedTxns()).toEqual([txn(1, 0, 29, 8), txn(2, 8, 74, 36)]);
    await again.close();
  });

  it('truncates at the first entry with lastOffset ≥ offset, and resets to empty', async () => {
    const index = await TxnIndex.open(io, PATH, { baseOffset: 0 });
    index.append(txn(1, 0, 10, 5));
    index.append(txn(2, 3, 20, 12));
    index.append(txn(3, 15, 30, 22));
    await index.flush();
    index.truncateTo(20);
    expect(index.allAbortedTxns()).toEqual([txn(1, 0, 10, 5)]);
    expect(index.lastOffset()).toBe(10);
    await index.flush();
    expect((await io.stat(PATH)).size).toBe(34);
    index.append(txn(4, 11, 25, 11));
    index.truncateTo(26);
    expect(index.entries).toBe(2);
    index.reset();
    expect(index.lastOffset()).toBeUndefined();
    await index.close();
    expect((await io.stat(PATH)).size).toBe(0);
  });

  it('sanity-checks last offsets against the base, versions and int64 ranges', async () => {
    const below = await TxnIndex.open(io, PATH, { baseOffset: 100 });
    below.append(txn(1, 0, 99, 50));
    expect(thrown(() => below.sanityCheck()).code).toBe('SEGLOG_ERR_INDEX_CORRUPT');
    await below.close();

    const bytes = Buffer.from(vector('.txnindex').hex, 'hex');
    bytes.writeInt16BE(1, 0);
    const file = await io.open(PATH);
    await file.pwrite(bytes, 0);
    await file.close();
    const badVersion = await TxnIndex.open(io, PATH, { baseOffset: 0 });
    expect(thrown(() => badVersion.sanityCheck()).code).toBe('SEGLOG_ERR_INDEX_CORRUPT');
    expect(thrown(() => badVersion.collectAbortedTxns(0, 100)).code).toBe('SEGLOG_ERR_INDEX_CORRUPT');
    badVersion.reset();
    badVersion.sanityCheck();
    expect(badVersion.allAbortedTxns()).toEqual([]);
    await badVersion.close();
    expect((await io.stat(PATH)).size).toBe(0);

    const unsafe = Buffer.from(vector('.txnindex').hex, 'hex');
    unsafe.fill(0x7f, 2, 10);
    const f2 = await io.open(PATH);
    await f2.pwrite(unsafe, 0);
    await f2.close();
    const unsafeIndex = await TxnIndex.open(io, PATH, { baseOffset: 0 });
    expect(thrown(() => unsafeIndex.sanityCheck()).code).toBe('SEGLOG_ERR_INDEX_CORRUPT');
    await unsafeIndex.close();
  });

  it('collects aborted transactions per Kafka (testTransactionIndexUpdated entries)', async () => {
    const index = await TxnIndex.open(io, PATH, { baseOffset: 0 });
    index.append(txn(1, 0, 29, 8));
    index.append(txn(2, 8, 74, 36));
    expect(index.collectAbortedTxns(0, 100)).toEqual({ txns: [txn(1, 0, 29, 8), txn(2, 8, 74, 36)], isComplete: false });
    // Upper bound 8: pid 2 starts at 8 (not < 8); pid 1's LSO 8 ≥ 8 completes the search.
    expect(index.collectAbortedTxns(0, 8)).toEqual({ txns: [txn(1, 0, 29, 8)], isComplete: true });
    expect(index.collectAbortedTxns(30, 100)).toEqual({ txns: [txn(2, 8, 74, 36)], isComplete: false });
    expect(index.collectAbortedTxns(75, 100)).toEqual({ txns: [], isComplete: false });
    expect(index.collectAbortedTxns(30, 36)).toEqual({ txns: [txn(2, 8, 74, 36)], isComplete: true });
    await index.close();
  });

  it('matches a reference filter for random entries (model)', async () => {
    const entriesArb = fc
      .array(fc.record({ pid: fc.nat(1000), span: fc.nat(100), gap: fc.integer({ min: 1, max: 50 }), lsoBack: fc.nat(100) }), { maxLength: 30 })
      .map((raw) => {
        let last = 0;
        return raw.map((r) => {
          last += r.gap;
          return txn(r.pid, Math.max(0, last - r.span), last, Math.max(0, last - r.lsoBack));
        });
      });
    await fc.assert(
      fc.asyncProperty(entriesArb, fc.nat(1500), fc.nat(1500), async (entries, fetchOffset, upperBound) => {
        const sim = await newIo();
        const index = await TxnIndex.open(sim, PATH, { baseOffset: 0 });
        for (const e of entries) index.append(e);
        await index.close();
        const reopened = await TxnIndex.open(sim, PATH, { baseOffset: 0 });
        const expected: AbortedTxn[] = [];
        let isComplete = false;
        for (const e of entries) {
          if (e.lastOffset >= fetchOffset && e.firstOffset < upperBound) expected.push(e);
          if (e.lastStableOffset >= upperBound) {
            isComplete = true;
            break;
          }
        }
        expect(reopened.collectAbortedTxns(fetchOffset, upperBound)).toEqual({ txns: expected, isComplete });
        await reopened.close();
      }),
      { numRuns: 200 },
    );
  });
});
