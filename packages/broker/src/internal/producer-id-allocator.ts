// ProducerIdAllocator: producer ids for InitProducerId, never reused across
// restarts.
//
// On disk: `<dataDir>/broker-producer-id`, one line of ASCII, readable and
// checked:
//
//   seglog-producer-id v1 next=<decimal> crc32c=<8 lowercase hex digits>\n
//
// `next` is the first id NOT yet reserved: every id below it may have been
// handed out. `crc32c` is the CRC-32C of the bytes before " crc32c=" (the
// `seglog-producer-id v1 next=<decimal>` part), so a flipped digit — which
// could lower `next` and make the broker hand out an id twice — is caught,
// not trusted. The legacy format (a70d00f and before: `<decimal>\n`, no
// check possible) is still read, and rewritten as v1 at the next
// reservation.
//
// Ids are reserved in blocks (Kafka's ProducerIdManager reserves 1000 at a
// time): before the first id of a new block is returned, the file is
// rewritten with the block's end, durably (write `<file>.tmp`, fdatasync,
// rename over the file, fsync the directory). A crash therefore skips at most
// the rest of a block and never reuses an id. A file that fails the check is
// SEGLOG_ERR_BROKER_PRODUCER_ID_CORRUPT: the broker refuses to start rather
// than guess and risk reusing ids; `seglog verify` reports it and `seglog
// recover` rewrites it at `safeProducerIdStart` (above every producer id the
// logs hold, plus a margin for ids handed out that no log holds).
//
// At start the broker also checks the file against the producer ids the
// logs' producer state holds (`ensureAbove`): a valid file whose next id is
// not above them is refused the same way (it would hand out an id already
// used); with no file at all (a first start on a directory the engine wrote,
// or a lost file) the ids start at safeProducerIdStart above them.
//
// Invariants: next < reservedEnd whenever an id is returned; reservedEnd only
// grows; one reservation write at a time (concurrent callers share it).

import { assert, SeglogError } from '@seglog/common';
import { crc32c } from '@seglog/records';
import { open, readFile, rename } from 'node:fs/promises';
import path from 'node:path';

export const PRODUCER_ID_FILE = 'broker-producer-id';
/** Ids reserved per write of the file. */
export const PRODUCER_ID_BLOCK = 1000;
/**
 * Ids skipped by a repair above the highest id found in the logs: ids handed
 * out but not (or no longer) in any log — a producer that never produced, or
 * whose records retention removed — may still be held by a client. Ids are
 * plentiful (2^53), so skipping a million costs nothing.
 */
export const PRODUCER_ID_REPAIR_MARGIN = 1_000_000;
const MAX_ID = Number.MAX_SAFE_INTEGER - PRODUCER_ID_BLOCK;
const V1_PREFIX = 'seglog-producer-id v1 next=';
const V1 = /^seglog-producer-id v1 next=(\d{1,16}) crc32c=([0-9a-f]{8})\n$/;
const LEGACY = /^(\d{1,16})\n$/;

/** What the file holds, as read: a next id (checked, or legacy), or why it cannot be trusted. */
export type ProducerIdFileContent =
  | { readonly kind: 'ok'; readonly next: number; readonly legacy: boolean }
  /** `salvagedNext`: a next id still legible in the damaged text (a lower bound for a repair, never trusted alone). */
  | { readonly kind: 'damaged'; readonly reason: string; readonly salvagedNext: number | null };

/** The file's bytes for `next`. */
export function formatProducerIdFile(next: number): Buffer {
  assert(Number.isSafeInteger(next) && next >= 0, 'formatProducerIdFile: next is not a safe integer >= 0');
  assert(next <= MAX_ID, 'formatProducerIdFile: next beyond the largest producer id');
  const body = `${V1_PREFIX}${next}`;
  const crc = (crc32c(Buffer.from(body, 'latin1')) >>> 0).toString(16).padStart(8, '0');
  return Buffer.from(`${body} crc32c=${crc}\n`, 'latin1');
}

/** Checks the file's bytes; never throws for bad content. */
export function parseProducerIdFile(bytes: Buffer): ProducerIdFileContent {
  const text = bytes.toString('latin1');
  const legacy = LEGACY.exec(text);
  if (legacy !== null) return checkedNext(Number(legacy[1]), true);
  const v1 = V1.exec(text);
  const legible = /next=(\d{1,16})/.exec(text);
  const salvagedNext = legible !== null && Number(legible[1]) <= MAX_ID ? Number(legible[1]) : null;
  if (v1 === null) {
    const what = bytes.length === 0 ? 'empty' : `not "${V1_PREFIX}<id> crc32c=<hex>" (starts ${JSON.stringify(text.slice(0, 40))})`;
    return { kind: 'damaged', reason: `${what}`, salvagedNext };
  }
  const stored = v1[2] as string;
  const computed = (crc32c(Buffer.from(text.slice(0, text.indexOf(' crc32c=')), 'latin1')) >>> 0).toString(16).padStart(8, '0');
  if (stored !== computed) return { kind: 'damaged', reason: `checksum mismatch (stored crc32c ${stored}, computed ${computed})`, salvagedNext };
  return checkedNext(Number(v1[1]), false);
}

function checkedNext(next: number, legacy: boolean): ProducerIdFileContent {
  if (next > MAX_ID) return { kind: 'damaged', reason: `next id ${next} is beyond the largest producer id ${MAX_ID}`, salvagedNext: null };
  return { kind: 'ok', next, legacy };
}

/**
 * Where a repair restarts the ids: above `highestInLogs` (the largest
 * producer id in any batch or producer snapshot, -1 for none) and above a
 * legible `salvagedNext`, rounded up to a block, plus the margin. Null when
 * that is past the largest producer id (the repair must refuse).
 */
export function safeProducerIdStart(highestInLogs: number, salvagedNext: number | null): number | null {
  assert(Number.isSafeInteger(highestInLogs) && highestInLogs >= -1, 'safeProducerIdStart: highestInLogs');
  const floor = Math.max(highestInLogs + 1, salvagedNext ?? 0);
  const start = Math.ceil(floor / PRODUCER_ID_BLOCK) * PRODUCER_ID_BLOCK + PRODUCER_ID_REPAIR_MARGIN;
  return start <= MAX_ID ? start : null;
}

export class ProducerIdAllocator {
  readonly path: string;
  private next: number;
  private reservedEnd: number;
  private reserving: Promise<void> | null;
  /** Whether `next` came from the file (false: there was none). */
  private readonly fromFile: boolean;

  private constructor(file: string, start: number, fromFile: boolean) {
    this.path = file;
    this.next = start;
    this.reservedEnd = start;
    this.reserving = null;
    this.fromFile = fromFile;
  }

  /** Reads the file (absent = 0). The directory must exist. */
  static async open(dataDir: string): Promise<ProducerIdAllocator> {
    const file = path.join(dataDir, PRODUCER_ID_FILE);
    let bytes: Buffer | null = null;
    try {
      bytes = await readFile(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (bytes === null) return new ProducerIdAllocator(file, 0, false);
    const content = parseProducerIdFile(bytes);
    if (content.kind === 'damaged') {
      throw new SeglogError('SEGLOG_ERR_BROKER_PRODUCER_ID_CORRUPT', `${file} is damaged: ${content.reason}`, {
        context: { path: file, reason: content.reason, content: bytes.toString('latin1').slice(0, 64) },
      });
    }
    return new ProducerIdAllocator(file, content.next, true);
  }

  /**
   * Makes every id handed out from now on greater than `highestInLogs` (the
   * largest producer id in the logs' producer state, -1 for none). With no
   * file the ids move to safeProducerIdStart above it (nothing is written
   * until the first reservation); a file whose next id is not above it is
   * SEGLOG_ERR_BROKER_PRODUCER_ID_CORRUPT. Call before the first allocate().
   */
  ensureAbove(highestInLogs: number, where: string): void {
    assert(this.reserving === null && this.next === this.reservedEnd, 'ProducerIdAllocator.ensureAbove: after an allocation');
    if (this.next > highestInLogs) return;
    if (!this.fromFile) {
      const start = safeProducerIdStart(highestInLogs, null);
      assert(start !== null, 'ProducerIdAllocator.ensureAbove: producer ids exhausted');
      this.next = start;
      this.reservedEnd = start;
      return;
    }
    const reason = `next producer id ${this.next} is not above producer id ${highestInLogs} in ${where}`;
    throw new SeglogError('SEGLOG_ERR_BROKER_PRODUCER_ID_CORRUPT', `${this.path}: ${reason}`, { context: { path: this.path, reason } });
  }

  /** The next producer id, reserved durably before it is returned. */
  async allocate(): Promise<number> {
    while (this.next >= this.reservedEnd) {
      this.reserving ??= this.reserve(this.reservedEnd + PRODUCER_ID_BLOCK).finally(() => {
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
      await handle.writeFile(formatProducerIdFile(end));
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
