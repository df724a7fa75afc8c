// RecordCursor: lazy, allocation-free iteration over the records of one batch.
//
// Record format (reference/kafka-storage.md §3), repeated recordsCount times:
//   length varint (bytes after this field) | attributes int8 |
//   timestampDelta varlong | offsetDelta varint | keyLength varint (-1 null) |
//   key | valueLength varint (-1 null) | value | headersCount varint |
//   headersCount × (keyLength varint >= 0 | key utf8 | valueLength varint | value)
//
// Decoding is strict and bounded (reference/reliability.md §4.3): varints of
// at most 5 bytes whose 5th byte carries no bits beyond 32, varlongs of at most
// 10 bytes whose value is a safe integer, every length bounded by the bytes
// left in its record, header count bounded by the bytes left, the declared
// record length equal to the bytes consumed, exactly recordsCount records
// that use up the payload exactly. Every violation is a RecordsError with
// kafka INVALID_RECORD; nothing here throws RangeError or TypeError.
//
// One cursor is reused across records and across batches (open()): the
// current record is exposed through getters; key and value are subarray views
// created only when asked for. Compressed batches are decompressed once per
// open(), capped at maxDecompressedBytes (the codec enforces the cap before
// allocating).
//
// Fast path: next() first decodes the record in local variables (varints of
// at most 3 bytes, no headers) and commits the fields only when the record is
// well formed by every rule above; anything else (a longer varint, headers, a
// malformed record) leaves the cursor untouched and the strict field-by-field
// readers decide, so the answers and the errors are the strict path's
// (test/record-cursor-fast.test.ts holds the two to the same results).
import { assert } from '@seglog/common';
import { decompress, type CodecId } from './compression.js';
import * as L from './internal/layout.js';
import type { BatchSource } from './batch-source.js';
import { RecordsError } from './records-error.js';

export interface RecordReadOptions {
  /** Cap on the decompressed payload of one batch. Default 64 MiB. */
  readonly maxDecompressedBytes?: number;
}

export const DEFAULT_MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024;

export interface RecordCursorOptions {
  /** false: decode every record with the strict readers only (the fast path's reference in tests). Default true. */
  readonly fastPath?: boolean;
}

export interface RecordHeader {
  readonly key: string;
  readonly value: Buffer | null;
}

/** A materialised record (tests, tools). key/value are views into the batch or decompressed payload. */
export interface LogRecord {
  readonly offset: number;
  readonly timestamp: number;
  /** baseSequence + offsetDelta (wrapping), or -1 when the batch has no sequence. */
  readonly sequence: number;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: readonly RecordHeader[];
}

const EMPTY = Buffer.alloc(0);
const TWO_POW_6 = 64;
/** int32s per record entry of a BatchSource.recordIndex. */
const RECORD_STRIDE = 8;
/** Largest base offset or timestamp for which base ± (a delta of a 3-byte varint, |delta| <= 2^20) is safe. */
const FAST_BASE_MAX = Number.MAX_SAFE_INTEGER - 2 ** 20;

/**
 * The varint at buf[p] when it has at most 3 bytes, all before `limit`:
 * (its unsigned, still zig-zag-encoded value << 2) | its byte count; else -1.
 */
function shortVarint(buf: Buffer, p: number, limit: number): number {
  if (p >= limit) return -1;
  const b0 = buf[p]!;
  if (b0 < 0x80) return (b0 << 2) | 1;
  if (p + 1 >= limit) return -1;
  const b1 = buf[p + 1]!;
  if (b1 < 0x80) return (((b1 << 7) | (b0 & 0x7f)) << 2) | 2;
  if (p + 2 >= limit) return -1;
  const b2 = buf[p + 2]!;
  if (b2 < 0x80) return (((b2 << 14) | ((b1 & 0x7f) << 7) | (b0 & 0x7f)) << 2) | 3;
  return -1;
}

/** The zig-zag-decoded value of a shortVarint() answer (>= 0). */
function shortValue(r: number): number {
  const u = r >>> 2;
  return (u >>> 1) ^ -(u & 1);
}

export class RecordCursor {
  private readonly fastPath: boolean;
  /** The fast path may run for the open batch (see open()). */
  private fast = false;
  // Payload being read and the read position.
  private buf: Buffer = EMPTY;
  private pos = 0;
  private end = 0;
  /** End of the current record (reads are bounded by it). */
  private limit = 0;
  private left = 0;
  private compressed = false;
  private payloadSize = 0;
  // Batch constants.
  private baseOffset = 0;
  private baseTimestamp = 0;
  private logAppendTime = false;
  private batchMaxTimestamp = 0;
  private baseSequence = L.NO_SEQUENCE;
  // Current record.
  private idx = -1;
  private recordStart = 0;
  private attrs = 0;
  private tsDelta = 0;
  private offDelta = 0;
  private keyPos = 0;
  private keyLen = -1;
  private valuePos = 0;
  private valueLen = -1;
  private hdrPos = 0;
  private hdrCount = 0;
  /** The open batch's record entries (BatchSource.recordIndex) and the next one's int32 index, or null. */
  private table: Int32Array | null = null;
  private ti = 0;

  constructor(options: RecordCursorOptions = {}) {
    this.fastPath = options.fastPath ?? true;
  }

  /**
   * Positions the cursor before the first record of `batch`. Decompresses a
   * compressed payload (codec errors propagate: DECOMPRESSION_LIMIT,
   * CORRUPT_COMPRESSION). Throws UNSUPPORTED_CODEC for codec ids 5..7 and
   * INVALID_RECORD when recordsCount is negative or exceeds what the payload
   * could hold (7 bytes per record at least).
   */
  open(batch: BatchSource, options?: RecordReadOptions): this {
    const maxDecompressedBytes = options?.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES;
    assert(Number.isSafeInteger(maxDecompressedBytes) && maxDecompressedBytes >= 0, 'maxDecompressedBytes must be a non-negative integer');
    const count = batch.recordsCount;
    const codec = batch.compression;
    this.baseOffset = batch.baseOffset;
    this.baseTimestamp = batch.baseTimestamp;
    this.logAppendTime = batch.timestampType === 'LogAppendTime';
    this.batchMaxTimestamp = batch.maxTimestamp;
    this.baseSequence = batch.baseSequence;
    this.idx = -1;
    this.left = 0;
    this.table = null;
    const start = batch.start + L.RECORDS_OFFSET;
    const end = batch.start + batch.sizeInBytes;
    if (count < 0) throw this.invalid('records-count', `negative recordsCount ${count}`, { actual: count });
    if (codec === 0 || count === 0) {
      // An empty batch must have no payload, whatever its codec (Kafka's cleaner writes them uncompressed).
      this.setPayload(batch.buffer, start, end, false);
    } else {
      this.setPayload(decompress(codec as CodecId, batch.buffer.subarray(start, end), maxDecompressedBytes), 0, -1, true);
    }
    if (count > (this.end - this.pos) / L.MIN_RECORD_BYTES) {
      throw this.invalid('records-count', `recordsCount ${count} cannot fit in ${this.end - this.pos} payload bytes`,
        { actual: count, payloadBytes: this.end - this.pos });
    }
    this.left = count;
    // The fast path's deltas are below 2^20 in magnitude (3-byte varints): base ± delta stays a safe integer here.
    this.fast = this.fastPath && Math.abs(this.baseOffset) <= FAST_BASE_MAX && (this.logAppendTime || Math.abs(this.baseTimestamp) <= FAST_BASE_MAX);
    // Entries of the fast path's form, decoded natively (BatchWindowIndex); used under the fast path's conditions only.
    const index = batch.recordIndex;
    if (index != null && this.fast && codec === 0 && count > 0) {
      this.table = index;
      this.ti = (batch.recordIndexFirst ?? 0) * RECORD_STRIDE;
    }
    return this;
  }

  private setPayload(buf: Buffer, start: number, end: number, compressed: boolean): void {
    this.buf = buf;
    this.pos = start;
    this.end = end < 0 ? buf.length : end;
    this.limit = this.end;
    this.compressed = compressed;
    this.payloadSize = this.end - start;
  }

  /** Bytes of concatenated records in the opened batch (after decompression). */
  get payloadBytes(): number { return this.payloadSize; }

  /** Drops the reference to the payload (so a reused cursor does not keep a batch alive). */
  close(): void {
    this.setPayload(EMPTY, 0, 0, false);
    this.left = 0;
    this.fast = false;
    this.table = null;
  }

  /** Records not yet read. */
  get recordsLeft(): number { return this.left; }

  /**
   * Advances to the next record; false after the last one. Throws
   * INVALID_RECORD ('records-remaining') when payload bytes are left after
   * recordsCount records, or on any malformed record.
   */
  next(): boolean {
    // Kept small so that it inlines into the caller's loop.
    if (this.left !== 0) {
      if (this.table !== null) return this.nextIndexed();
      if (this.fast && this.nextFast()) return true;
    }
    return this.nextSlow();
  }

  /**
   * The next record from the open batch's entries (BatchWindowIndex decoded
   * them with nextFast's rules: no headers, the record ends one byte after
   * its value). Measured (bench/hotpath-read-profile.ts, 1 M records of 100 B,
   * warm): nextFast + shortVarint were ~26 ms a read.
   */
  private nextIndexed(): boolean {
    const t = this.table!;
    const i = this.ti;
    this.ti = i + RECORD_STRIDE;
    this.idx++;
    this.recordStart = t[i]!;
    this.attrs = t[i + 1]!;
    this.tsDelta = t[i + 2]!;
    this.offDelta = t[i + 3]!;
    this.keyPos = t[i + 4]!;
    this.keyLen = t[i + 5]!;
    const valuePos = t[i + 6]!;
    const valueLen = t[i + 7]!;
    this.valuePos = valuePos;
    this.valueLen = valueLen;
    const end = valuePos + (valueLen > 0 ? valueLen : 0) + 1;
    this.pos = end;
    this.hdrPos = end;
    this.hdrCount = 0;
    if (--this.left === 0) this.table = null;
    return true;
  }

  private nextSlow(): boolean {
    if (this.left === 0) {
      if (this.pos !== this.end) {
        throw this.invalid('records-remaining', `${this.end - this.pos} bytes remain after the last record`,
          { expected: this.end, actual: this.pos });
      }
      return false;
    }
    return this.nextStrict();
  }

  /**
   * The common record (varints of at most 3 bytes, no headers) decoded in
   * locals: true with every field set as nextStrict() sets it; false, with
   * nothing changed, for anything else (nextStrict() then decides).
   * Measured (1 M records of 100 B in batches of 100, from memory, min of 15
   * passes, shared 2-vCPU VM): 37-40 ms with the strict readers alone, 27-28
   * ms with this path; in bench hotpath's warm read, readBody + readVarint +
   * readVarlong were ~25 % of the event loop's samples.
   */
  private nextFast(): boolean {
    const buf = this.buf;
    const end = this.end;
    const start = this.pos;
    const r0 = shortVarint(buf, start, end);
    if (r0 < 0) return false;
    let p = start + (r0 & 3);
    const length = shortValue(r0);
    if (length < 0 || length > end - p) return false;
    const limit = p + length;
    if (p >= limit) return false;
    const attrs = buf[p++]!;
    // The checks of the fields below are made once, at the end (measured: ~15 % less time per record than a
    // check after each field): a failed shortVarint (-1) moves p by 3 and every later read stays bounded by
    // `limit` (shortVarint checks); a key or value length past `limit` leaves p past it, so the next
    // shortVarint fails or p + 1 !== limit.
    const r1 = shortVarint(buf, p, limit);
    p += r1 & 3;
    const r2 = shortVarint(buf, p, limit);
    p += r2 & 3;
    const r3 = shortVarint(buf, p, limit);
    p += r3 & 3;
    const keyLen = shortValue(r3);
    const keyPos = p;
    if (keyLen > 0) p += keyLen;
    const r4 = shortVarint(buf, p, limit);
    p += r4 & 3;
    const valueLen = shortValue(r4);
    const valuePos = p;
    if (valueLen > 0) p += valueLen;
    // headersCount: 0 in its one-byte form, the record's last byte.
    if ((r1 | r2 | r3 | r4) < 0 || keyLen < -1 || valueLen < -1 || p + 1 !== limit || buf[p] !== 0) return false;
    p++;
    const tsDelta = shortValue(r1);
    const offDelta = shortValue(r2);
    // open() allowed the fast path only where base + any 3-byte delta stays a safe integer.
    this.idx++;
    this.recordStart = start;
    this.pos = p;
    this.attrs = attrs;
    this.tsDelta = tsDelta;
    this.offDelta = offDelta;
    this.keyLen = keyLen;
    this.keyPos = keyPos;
    this.valueLen = valueLen;
    this.valuePos = valuePos;
    this.hdrCount = 0;
    this.hdrPos = p;
    this.left--;
    return true;
  }

  /** next() for any record, field by field (after the checks of next()). */
  private nextStrict(): boolean {
    this.idx++;
    this.limit = this.end;
    if (this.pos >= this.end) throw this.invalid('premature-eof', 'payload ended before recordsCount records were read', {});
    this.recordStart = this.pos;
    const length = this.readVarint('length');
    if (length < 0 || length > this.end - this.pos) {
      throw this.invalid('record-length', `record length ${length} exceeds the ${this.end - this.pos} bytes left`, { actual: length });
    }
    this.limit = this.pos + length;
    this.readBody();
    if (this.pos !== this.limit) {
      throw this.invalid('record-length', `record declares ${length} bytes but its fields use ${this.pos - this.recordStart}`,
        { expected: this.limit, actual: this.pos });
    }
    this.left--;
    return true;
  }

  private readBody(): void {
    this.attrs = this.readByte('attributes');
    this.tsDelta = this.readVarlong('timestampDelta');
    this.offDelta = this.readVarint('offsetDelta');
    this.keyLen = this.readLength('key-length', -1);
    this.keyPos = this.pos;
    if (this.keyLen > 0) this.pos += this.keyLen;
    this.valueLen = this.readLength('value-length', -1);
    this.valuePos = this.pos;
    if (this.valueLen > 0) this.pos += this.valueLen;
    const count = this.readVarint('headersCount');
    if (count < 0 || count > this.limit - this.pos) {
      throw this.invalid('headers-count', `header count ${count} with ${this.limit - this.pos} bytes left`, { actual: count });
    }
    this.hdrCount = count;
    this.hdrPos = this.pos;
    for (let i = 0; i < count; i++) {
      const keyLength = this.readLength('header-key-length', 0);
      this.pos += keyLength;
      const valueLength = this.readLength('header-value-length', -1);
      if (valueLength > 0) this.pos += valueLength;
    }
    const offset = this.baseOffset + this.offDelta;
    const timestamp = this.logAppendTime ? this.batchMaxTimestamp : this.baseTimestamp + this.tsDelta;
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(timestamp)) {
      throw this.invalid('unsafe-integer', 'record offset or timestamp is outside the safe integer range', {});
    }
  }

  /** 0-based index of the current record in its batch. */
  get index(): number { return this.idx; }
  get offset(): number { return this.baseOffset + this.offDelta; }
  /** baseTimestamp + timestampDelta, or the batch maxTimestamp in a LogAppendTime batch. */
  get timestamp(): number { return this.logAppendTime ? this.batchMaxTimestamp : this.baseTimestamp + this.tsDelta; }
  get offsetDelta(): number { return this.offDelta; }
  get timestampDelta(): number { return this.tsDelta; }
  get attributes(): number { return this.attrs; }
  get sequence(): number {
    if (this.baseSequence < 0) return L.NO_SEQUENCE;
    const next = this.baseSequence + this.offDelta;
    return next > L.INT32_MAX ? next - L.INT32_MAX - 1 : next;
  }
  /** Encoded size of the current record, including its length varint. */
  get sizeInBytes(): number { return this.pos - this.recordStart; }
  /** Where the current record (its length varint first) starts in `buffer`: with sizeInBytes, its raw bytes. */
  get recordPosition(): number { return this.recordStart; }
  /** The buffer the positions below refer to (the batch's, or the decompressed payload). */
  get buffer(): Buffer { return this.buf; }
  get keyPosition(): number { return this.keyPos; }
  /** -1 for a null key. */
  get keyLength(): number { return this.keyLen; }
  get valuePosition(): number { return this.valuePos; }
  /** -1 for a null value (tombstone). */
  get valueLength(): number { return this.valueLen; }
  get headersCount(): number { return this.hdrCount; }
  get key(): Buffer | null { return this.keyLen < 0 ? null : this.buf.subarray(this.keyPos, this.keyPos + this.keyLen); }
  get value(): Buffer | null { return this.valueLen < 0 ? null : this.buf.subarray(this.valuePos, this.valuePos + this.valueLen); }

  /** The current record's headers (allocates; the bytes were validated by next()). */
  headers(): RecordHeader[] {
    const headers: RecordHeader[] = [];
    if (this.hdrCount === 0) return headers;
    const savedPos = this.pos;
    const savedLimit = this.limit;
    this.pos = this.hdrPos;
    this.limit = savedPos;
    for (let i = 0; i < this.hdrCount; i++) {
      const keyLength = this.readLength('header-key-length', 0);
      const key = this.buf.toString('utf8', this.pos, this.pos + keyLength);
      this.pos += keyLength;
      const valueLength = this.readLength('header-value-length', -1);
      const value = valueLength < 0 ? null : this.buf.subarray(this.pos, this.pos + valueLength);
      if (valueLength > 0) this.pos += valueLength;
      headers.push({ key, value });
    }
    this.pos = savedPos;
    this.limit = savedLimit;
    return headers;
  }

  /** The current record, materialised. */
  toRecord(): LogRecord {
    return { offset: this.offset, timestamp: this.timestamp, sequence: this.sequence, key: this.key, value: this.value, headers: this.headers() };
  }

  /** Reads every remaining record into an array (tests, tools). */
  toArray(): LogRecord[] {
    const records: LogRecord[] = [];
    while (this.next()) records.push(this.toRecord());
    return records;
  }

  // --- strict primitive decoding, bounded by this.limit ---

  private readByte(field: string): number {
    if (this.pos >= this.limit) throw this.underflow(field);
    return this.buf[this.pos++]!;
  }

  /** A varint length: >= min (-1 allows null), and no longer than the bytes left in the record. */
  private readLength(rule: string, min: number): number {
    const n = this.readVarint(rule);
    if (n < min || n > this.limit - this.pos) {
      throw this.invalid(rule, `length ${n} with ${this.limit - this.pos} bytes left`, { actual: n });
    }
    return n;
  }

  private readVarint(field: string): number {
    let u = 0;
    for (let i = 0; i < 5; i++) {
      if (this.pos >= this.limit) throw this.underflow(field);
      const b = this.buf[this.pos++]!;
      if (i === 4) {
        // Bits 28..31: anything above them would overflow 32 bits.
        if (b > 0x0f) throw this.invalid('varint', `${field}: varint overflows 32 bits`, {});
        u = (u | (b << 28)) >>> 0;
        return (u >>> 1) ^ -(u & 1);
      }
      u |= (b & 0x7f) << (7 * i);
      if ((b & 0x80) === 0) return (u >>> 1) ^ -(u & 1);
    }
    throw new Error('unreachable');
  }

  // u = 2v + s (zig-zag); accumulate s and v separately so v < 2^53 stays exact.
  private readVarlong(field: string): number {
    if (this.pos >= this.limit) throw this.underflow(field);
    let b = this.buf[this.pos++]!;
    const sign = b & 1;
    let v = (b & 0x7f) >>> 1;
    let scale = TWO_POW_6;
    for (let i = 1; (b & 0x80) !== 0; i++) {
      if (i === 10) throw this.invalid('varlong', `${field}: varlong longer than 10 bytes`, {});
      if (this.pos >= this.limit) throw this.underflow(field);
      b = this.buf[this.pos++]!;
      const bits = b & 0x7f;
      // Byte i holds bits [7i - 1, 7i + 6) of v; v must stay below 2^53.
      if (bits !== 0 && (i > 7 || (i === 7 && bits >= 32))) {
        throw this.invalid('unsafe-integer', `${field}: varlong is outside the safe integer range`, {});
      }
      v += bits * scale;
      scale *= 128;
    }
    const n = sign === 0 ? v : -v - 1;
    if (!Number.isSafeInteger(n)) throw this.invalid('unsafe-integer', `${field}: varlong is outside the safe integer range`, {});
    return n;
  }

  private underflow(field: string): RecordsError {
    return this.invalid('underflow', `record ends inside ${field}`, {});
  }

  private invalid(rule: string, message: string, context: Readonly<Record<string, unknown>>): RecordsError {
    const error = new RecordsError('SEGLOG_ERR_RECORDS_INVALID_RECORD', rule, message,
      { recordIndex: this.idx, position: this.pos, compressed: this.compressed, ...context });
    // A cursor that failed reads nothing more until it is reopened.
    this.left = 0;
    this.pos = this.end;
    return error;
  }
}
