// The broker-producer-id file: its checked v1 format, the legacy format it
// still reads, what counts as damage (never trusted: a lower next id would
// hand out an id twice), the allocator on top of it, and where a repair
// restarts the ids.

import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  PRODUCER_ID_BLOCK, PRODUCER_ID_FILE, PRODUCER_ID_REPAIR_MARGIN, formatProducerIdFile, parseProducerIdFile, safeProducerIdStart,
} from '../src/index.js';
import { ProducerIdAllocator } from '../src/internal/producer-id-allocator.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-producer-id-'));
  dirs.push(dir);
  return dir;
}

describe('broker-producer-id format', () => {
  it('is one readable line with a CRC-32C, and reads back', () => {
    const bytes = formatProducerIdFile(12000);
    expect(bytes.toString('latin1')).toMatch(/^seglog-producer-id v1 next=12000 crc32c=[0-9a-f]{8}\n$/);
    expect(parseProducerIdFile(bytes)).toEqual({ kind: 'ok', next: 12000, legacy: false });
    for (const next of [0, 1, 999, 1000, 123456789, Number.MAX_SAFE_INTEGER - PRODUCER_ID_BLOCK]) {
      expect(parseProducerIdFile(formatProducerIdFile(next))).toEqual({ kind: 'ok', next, legacy: false });
    }
  });

  it('reads the legacy format (digits and a newline) as unchecked', () => {
    expect(parseProducerIdFile(Buffer.from('3000\n'))).toEqual({ kind: 'ok', next: 3000, legacy: true });
  });

  it('a flipped digit, garbage, an empty or truncated file are damage, never a next id', () => {
    const good = formatProducerIdFile(12000).toString('latin1');
    const flipped = parseProducerIdFile(Buffer.from(good.replace('next=12000', 'next=02000')));
    expect(flipped).toMatchObject({ kind: 'damaged', reason: expect.stringMatching(/^checksum mismatch \(stored crc32c [0-9a-f]{8}, computed [0-9a-f]{8}\)$/), salvagedNext: 2000 });
    expect(parseProducerIdFile(Buffer.from('\x00\x17garbage\xff'))).toMatchObject({ kind: 'damaged', salvagedNext: null });
    expect(parseProducerIdFile(Buffer.alloc(0))).toEqual({ kind: 'damaged', reason: 'empty', salvagedNext: null });
    expect(parseProducerIdFile(Buffer.from(good.slice(0, 30)))).toMatchObject({ kind: 'damaged' });
    expect(parseProducerIdFile(Buffer.from('12000'))).toMatchObject({ kind: 'damaged' }); // legacy without its newline
    expect(parseProducerIdFile(Buffer.from('99999999999999999\n'))).toMatchObject({ kind: 'damaged' });
  });

  it('a repair starts above the logs and the legible old value, at a block boundary, plus the margin', () => {
    expect(safeProducerIdStart(-1, null)).toBe(PRODUCER_ID_REPAIR_MARGIN);
    expect(safeProducerIdStart(7, null)).toBe(PRODUCER_ID_BLOCK + PRODUCER_ID_REPAIR_MARGIN);
    expect(safeProducerIdStart(999, null)).toBe(PRODUCER_ID_BLOCK + PRODUCER_ID_REPAIR_MARGIN);
    expect(safeProducerIdStart(1000, null)).toBe(2 * PRODUCER_ID_BLOCK + PRODUCER_ID_REPAIR_MARGIN);
    expect(safeProducerIdStart(7, 5000)).toBe(5000 + PRODUCER_ID_REPAIR_MARGIN);
    expect(safeProducerIdStart(Number.MAX_SAFE_INTEGER - 10, null)).toBeNull();
  });
});

describe('ProducerIdAllocator', () => {
  it('refuses a damaged file with SEGLOG_ERR_BROKER_PRODUCER_ID_CORRUPT naming the file and the reason', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, PRODUCER_ID_FILE), 'not an id at all\n');
    await expect(ProducerIdAllocator.open(dir)).rejects.toMatchObject({
      code: 'SEGLOG_ERR_BROKER_PRODUCER_ID_CORRUPT', context: { path: path.join(dir, PRODUCER_ID_FILE) },
      message: expect.stringContaining(`${path.join(dir, PRODUCER_ID_FILE)} is damaged: not "seglog-producer-id v1`),
    });
  });

  it('continues a legacy file and rewrites it as v1; a reopen never reuses an id', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, PRODUCER_ID_FILE), '3000\n');
    const first = await ProducerIdAllocator.open(dir);
    const a = await first.allocate();
    const b = await first.allocate();
    expect([a, b]).toEqual([3000, 3001]);
    expect(parseProducerIdFile(readFileSync(path.join(dir, PRODUCER_ID_FILE)))).toEqual({ kind: 'ok', next: 3000 + PRODUCER_ID_BLOCK, legacy: false });
    const second = await ProducerIdAllocator.open(dir);
    expect(await second.allocate()).toBe(3000 + PRODUCER_ID_BLOCK);
  });

  it('ensureAbove: with no file the ids start above the logs; a file below them is refused', async () => {
    const fresh = await ProducerIdAllocator.open(tempDir());
    fresh.ensureAbove(4321, 'the logs');
    expect(await fresh.allocate()).toBe(5000 + PRODUCER_ID_REPAIR_MARGIN);
    const dir = tempDir();
    writeFileSync(path.join(dir, PRODUCER_ID_FILE), formatProducerIdFile(1000));
    const low = await ProducerIdAllocator.open(dir);
    expect(() => low.ensureAbove(4321, 'the producer state of t-0')).toThrow(expect.objectContaining({
      code: 'SEGLOG_ERR_BROKER_PRODUCER_ID_CORRUPT', context: expect.objectContaining({ reason: 'next producer id 1000 is not above producer id 4321 in the producer state of t-0' }),
    }));
    const above = await ProducerIdAllocator.open(dir);
    above.ensureAbove(999, 'the logs');
    expect(await above.allocate()).toBe(1000);
  });
});
