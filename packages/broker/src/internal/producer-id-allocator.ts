// ProducerIdAllocator: producer ids for InitProducerId, never reused across
// restarts.
//
// On disk: `<dataDir>/broker-producer-id`, one line of ASCII decimal digits
// and '\n': the first id NOT yet reserved. Every id below it may have been
// handed out. Ids are reserved in blocks (Kafka's ProducerIdManager reserves
// 1000 at a time): before the first id of a new block is returned, the file
// is rewritten with the block's end, durably (write `<file>.tmp`, fdatasync,
// rename over the file, fsync the directory). A crash therefore skips at most
// the rest of a block and never reuses an id. A malformed file is
// SEGLOG_ERR_BROKER_PRODUCER_ID_CORRUPT (the broker refuses to start rather
// than guess and risk reusing ids).
//
// Invariants: next < reservedEnd whenever an id is returned; reservedEnd only
// grows; one reservation write at a time (concurrent callers share it).

import { assert, SeglogError } from '@seglog/common';
import { open, readFile, rename } from 'node:fs/promises';
import path from 'node:path';

export const PRODUCER_ID_FILE = 'broker-producer-id';
const BLOCK = 1000;
const MAX_ID = Number.MAX_SAFE_INTEGER - BLOCK;

export class ProducerIdAllocator {
  readonly path: string;
  private next: number;
  private reservedEnd: number;
  private reserving: Promise<void> | null;

  private constructor(file: string, start: number) {
    this.path = file;
    this.next = start;
    this.reservedEnd = start;
    this.reserving = null;
  }

  /** Reads the file (absent = 0). The directory must exist. */
  static async open(dataDir: string): Promise<ProducerIdAllocator> {
    const file = path.join(dataDir, PRODUCER_ID_FILE);
    let start = 0;
    let text: string | null = null;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (text !== null) {
      if (!/^\d{1,16}\n$/.test(text) || !Number.isSafeInteger(Number(text.trim())) || Number(text.trim()) > MAX_ID) {
        throw new SeglogError('SEGLOG_ERR_BROKER_PRODUCER_ID_CORRUPT', `${file} does not hold one decimal producer id`, {
          context: { path: file, content: text.slice(0, 64) },
        });
      }
      start = Number(text.trim());
    }
    return new ProducerIdAllocator(file, start);
  }

  /** The next producer id, reserved durably before it is returned. */
  async allocate(): Promise<number> {
    while (this.next >= this.reservedEnd) {
      this.reserving ??= this.reserve(this.reservedEnd + BLOCK).finally(() => {
        this.reserving = null;
      });
      await this.reserving;
    }
    const id = this.next++;
    assert(id < this.reservedEnd, 'ProducerIdAllocator: id outside the reserved block');
    return id;
  }

  private async reserve(end: number): Promise<void> {
    assert(end <= MAX_ID, 'ProducerIdAllocator: producer ids exhausted');
    const tmp = `${this.path}.tmp`;
    const handle = await open(tmp, 'w');
    try {
      await handle.writeFile(`${end}\n`);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(tmp, this.path);
    const dir = await open(path.dirname(this.path), 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
    this.reservedEnd = end;
  }
}
