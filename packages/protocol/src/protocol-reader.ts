// ProtocolReader (moved from the broker, which now imports it from here): a
// cursor over one request frame (a Buffer slice) that
// decodes Kafka's primitive types. Format facts (Kafka protocol guide and the
// message JSON schemas in apache/kafka clients/src/main/resources/common/message):
//
//   int8/16/32/64   big-endian two's complement; int64 is returned as a JS number
//                   and must be a safe integer (ARCHITECTURE.md "Numbers"), except
//                   int64Saturated (offsets and timestamps a client may send
//                   beyond any the log can hold: clamped to ±(2^53 − 1))
//   uint16          big-endian unsigned
//   float64         big-endian IEEE 754 double
//   uvarint         unsigned LEB128, at most 5 bytes, value < 2^32
//   varint          zigzag-encoded signed 32-bit in a uvarint
//   string          int16 length (−1 = null) + UTF-8 bytes        (non-flexible versions)
//   compact string  uvarint (length + 1) (0 = null) + UTF-8 bytes  (flexible versions)
//   bytes           int32 length (−1 = null) / compact: uvarint (length + 1)
//   array           int32 count (−1 = null) / compact: uvarint (count + 1)
//   uuid            16 raw bytes (returned as 32 lowercase hex digits)
//   tagged fields   uvarint count, then per field uvarint tag, uvarint size, bytes;
//                   tags strictly increasing (flexible versions only)
//
// Invariants: every read checks bounds against `end` first and throws a typed
// SEGLOG_ERR_PROTOCOL_MALFORMED (never RangeError); every length and array
// count is bounded by the bytes remaining BEFORE anything is allocated, so a
// hostile frame can never make the broker allocate more than the frame itself;
// bytes fields (record batches) are returned as zero-copy slices of the frame.

import { ProtocolErrorCode, malformed, protocolError } from './protocol-error.js';

const TWO_POW_32 = 4294967296;

/** Called for each tagged field; must consume exactly `size` bytes (reads past them throw). */
export type TagHandler = (reader: ProtocolReader, tag: number, size: number) => void;

export class ProtocolReader {
  readonly buffer: Buffer;
  position: number;
  /** Exclusive bound of readable bytes; lowered temporarily while a tagged field is parsed. */
  end: number;

  constructor(buffer: Buffer, position = 0, end = buffer.length) {
    if (position < 0 || end > buffer.length || position > end) {
      throw malformed('reader bounds outside the buffer', position, { end, length: buffer.length });
    }
    this.buffer = buffer;
    this.position = position;
    this.end = end;
  }

  remaining(): number {
    return this.end - this.position;
  }

  private need(bytes: number, what: string): void {
    if (this.end - this.position < bytes) {
      throw malformed(`truncated ${what}: need ${bytes} bytes, ${this.end - this.position} left`, this.position, { what });
    }
  }

  int8(): number {
    this.need(1, 'int8');
    return this.buffer.readInt8(this.position++);
  }

  bool(): boolean {
    // Kafka reads any non-zero byte as true.
    this.need(1, 'bool');
    return this.buffer[this.position++] !== 0;
  }

  int16(): number {
    this.need(2, 'int16');
    const value = this.buffer.readInt16BE(this.position);
    this.position += 2;
    return value;
  }

  int32(): number {
    this.need(4, 'int32');
    const value = this.buffer.readInt32BE(this.position);
    this.position += 4;
    return value;
  }

  uint16(): number {
    this.need(2, 'uint16');
    const value = this.buffer.readUInt16BE(this.position);
    this.position += 2;
    return value;
  }

  float64(): number {
    this.need(8, 'float64');
    const value = this.buffer.readDoubleBE(this.position);
    this.position += 8;
    return value;
  }

  /** int64 as a JS number; two 32-bit halves, no BigInt. Throws UNSAFE_INTEGER beyond ±(2^53 − 1). */
  int64(): number {
    this.need(8, 'int64');
    const high = this.buffer.readInt32BE(this.position);
    const low = this.buffer.readUInt32BE(this.position + 4);
    const value = high * TWO_POW_32 + low;
    if (!Number.isSafeInteger(value)) {
      throw protocolError(ProtocolErrorCode.UNSAFE_INTEGER, 'int64 field is not a safe integer', {
        position: this.position, high, low,
      });
    }
    this.position += 8;
    return value;
  }

  /**
   * int64 clamped to ±(2^53 − 1), for request offsets and timestamps: Kafka
   * accepts any int64 there and answers (Fetch at 2^62: OFFSET_OUT_OF_RANGE;
   * ListOffsets at 2^60: no offset). No log offset or record timestamp is
   * beyond 2^53 − 1, so the clamped value gets the same answer as the sent one.
   */
  int64Saturated(): number {
    this.need(8, 'int64');
    const high = this.buffer.readInt32BE(this.position);
    const low = this.buffer.readUInt32BE(this.position + 4);
    this.position += 8;
    const value = high * TWO_POW_32 + low;
    if (value > Number.MAX_SAFE_INTEGER) return Number.MAX_SAFE_INTEGER;
    if (value < Number.MIN_SAFE_INTEGER) return Number.MIN_SAFE_INTEGER;
    return value;
  }

  /**
   * Unsigned LEB128 of at most 5 bytes whose value fits in 32 bits. Like Kafka's
   * ByteUtils.readUnsignedVarint, a non-minimal encoding of a valid value is accepted.
   */
  uvarint(): number {
    const start = this.position;
    let value = 0;
    for (let i = 0; i < 5; i++) {
      if (this.position >= this.end) throw malformed('truncated varint', start);
      const byte = this.buffer[this.position++] as number;
      if (i === 4 && byte > 0x0f) throw malformed('varint overflows 32 bits', start);
      value += (byte & 0x7f) * 2 ** (7 * i);
      if ((byte & 0x80) === 0) return value;
    }
    throw malformed('varint longer than 5 bytes', start);
  }

  /** Zigzag-decoded signed 32-bit varint. */
  varint(): number {
    const raw = this.uvarint();
    return (raw >>> 1) ^ -(raw & 1);
  }

  uuid(): string {
    this.need(16, 'uuid');
    const hex = this.buffer.toString('hex', this.position, this.position + 16);
    this.position += 16;
    return hex;
  }

  /** Length prefix of a string: int16 (−1 null) or compact uvarint (0 null). Returns −1 for null. */
  private stringLength(flexible: boolean): number {
    const start = this.position;
    const length = flexible ? this.uvarint() - 1 : this.int16();
    if (length < -1) throw malformed('negative string length', start, { length });
    if (length > this.end - this.position) {
      throw malformed('string length exceeds the frame', start, { length, remaining: this.end - this.position });
    }
    return length;
  }

  nullableString(flexible: boolean): string | null {
    const length = this.stringLength(flexible);
    if (length === -1) return null;
    const value = this.buffer.toString('utf8', this.position, this.position + length);
    this.position += length;
    return value;
  }

  string(flexible: boolean): string {
    const start = this.position;
    const value = this.nullableString(flexible);
    if (value === null) throw malformed('null in a non-nullable string', start);
    return value;
  }

  /** Nullable bytes as a zero-copy slice of the frame (record batches stay unparsed here). */
  nullableBytes(flexible: boolean): Buffer | null {
    const start = this.position;
    const length = flexible ? this.uvarint() - 1 : this.int32();
    if (length < -1) throw malformed('negative bytes length', start, { length });
    if (length === -1) return null;
    if (length > this.end - this.position) {
      throw malformed('bytes length exceeds the frame', start, { length, remaining: this.end - this.position });
    }
    const value = this.buffer.subarray(this.position, this.position + length);
    this.position += length;
    return value;
  }

  bytes(flexible: boolean): Buffer {
    const start = this.position;
    const value = this.nullableBytes(flexible);
    if (value === null) throw malformed('null in non-nullable bytes', start);
    return value;
  }

  /**
   * Element count of a nullable array (−1 for null). `minItemBytes` is the
   * smallest encoding of one element: count × minItemBytes must fit in the
   * remaining bytes, checked before the caller allocates anything.
   */
  nullableArrayLength(flexible: boolean, minItemBytes: number): number {
    const start = this.position;
    const count = flexible ? this.uvarint() - 1 : this.int32();
    if (count < -1) throw malformed('negative array count', start, { count });
    if (count > 0 && count * Math.max(1, minItemBytes) > this.end - this.position) {
      throw malformed('array count exceeds the frame', start, { count, remaining: this.end - this.position });
    }
    return count;
  }

  arrayLength(flexible: boolean, minItemBytes: number): number {
    const start = this.position;
    const count = this.nullableArrayLength(flexible, minItemBytes);
    if (count === -1) throw malformed('null in a non-nullable array', start);
    return count;
  }

  /**
   * The tagged-field section of a flexible struct (no-op when not flexible).
   * Known tags go to `onTag`, which must consume exactly their size; unknown
   * tags are skipped. Tags must be strictly increasing, as Kafka requires.
   */
  taggedFields(flexible: boolean, onTag?: TagHandler): void {
    if (!flexible) return;
    const start = this.position;
    const count = this.uvarint();
    if (count * 2 > this.end - this.position) throw malformed('tagged field count exceeds the frame', start, { count });
    let previousTag = -1;
    for (let i = 0; i < count; i++) {
      const tagPosition = this.position;
      const tag = this.uvarint();
      if (tag <= previousTag) throw malformed('tagged fields out of order or repeated', tagPosition, { tag, previousTag });
      previousTag = tag;
      const size = this.uvarint();
      if (size > this.end - this.position) throw malformed('tagged field size exceeds the frame', tagPosition, { tag, size });
      const fieldEnd = this.position + size;
      if (onTag === undefined) {
        this.position = fieldEnd;
        continue;
      }
      const outerEnd = this.end;
      this.end = fieldEnd;
      try {
        onTag(this, tag, size);
      } finally {
        this.end = outerEnd;
      }
      if (this.position !== fieldEnd) throw malformed('tagged field not consumed exactly', tagPosition, { tag, size });
    }
  }

  /** Skips a field of `size` bytes (an unknown tag inside a TagHandler). */
  skip(size: number): void {
    this.need(size, 'skipped field');
    this.position += size;
  }

  /** Throws unless every byte of the frame was consumed. */
  expectEnd(what: string): void {
    if (this.position !== this.end) {
      throw malformed(`trailing bytes after ${what}`, this.position, { trailing: this.end - this.position });
    }
  }
}
