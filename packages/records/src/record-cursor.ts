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

export class RecordCursor {
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
  private recordSize = 0;
  private attrs = 0;
  private tsDelta = 0;
  private offDelta = 0;
  private ts = 0;
  private off = 0;
  private keyPos = 0;
  private keyLen = -1;
  private valuePos = 0;
  private valueLen = -1;
  private hdrPos = 0;
  private hdrCount = 0;

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
  }

  /** Records not yet read. */
  get recordsLeft(): number { return this.left; }

  /**
   * Advances to the next record; false after the last one. Throws
   * INVALID_RECORD ('records-remaining') when payload bytes are left after
   * recordsCount records, or on any malformed record.
   */
  next(): boolean {
    if (this.left === 0) {
      if (this.pos !== this.end) {
        throw this.invalid('records-remaining', `${this.end - this.pos} bytes remain after the last record`,
          { expected: this.end, actual: this.pos });
      }
      return false;
    }
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
    this.recordSize = this.pos - this.recordStart;
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
    this.off = offset;
    this.ts = timestamp;
  }

  /** 0-based index of the current record in its batch. */
  get index(): number { return this.idx; }
  get offset(): number { return this.off; }
  /** baseTimestamp + timestampDelta, or the batch maxTimestamp in a LogAppendTime batch. */
  get timestamp(): number { return this.ts; }
  get offsetDelta(): number { return this.offDelta; }
  get timestampDelta(): number { return this.tsDelta; }
  get attributes(): number { return this.attrs; }
  get sequence(): number {
    if (this.baseSequence < 0) return L.NO_SEQUENCE;
    const next = this.baseSequence + this.offDelta;
    return next > L.INT32_MAX ? next - L.INT32_MAX - 1 : next;
  }
  /** Encoded size of the current record, including its length varint. */
  get sizeInBytes(): number { return this.recordSize; }
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
    this.limit = this.recordStart + this.recordSize;
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
    return { offset: this.off, timestamp: this.ts, sequence: this.sequence, key: this.key, value: this.value, headers: this.headers() };
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
