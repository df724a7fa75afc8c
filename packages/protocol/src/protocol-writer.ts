// ProtocolWriter: encodes Kafka primitives (formats in protocol-reader.ts)
// into a growable buffer, and keeps record batches out of it: `records()`
// writes only the length prefix and appends the batch bytes (a Buffer slice,
// or an opaque RecordsRef such as a fetch plan with file-backed parts) as a
// separate part. The result is an ordered list of parts for a vectored write
// (or for @seglog/fetch's writeFetch), never a concatenation of them.
//
// Growth doubles the capacity and copies only the current inline chunk, so a
// response costs O(its inline bytes). A finished writer hands its parts to the
// caller (ownership moves with them); `reset()` starts a new message in a fresh
// buffer rather than overwriting bytes a pending socket write may still hold.

import { assert } from '@seglog/common';

const TWO_POW_32 = 4294967296;

/** Record bytes that are not a Buffer (e.g. a FetchPlan); only their size is known here. */
export interface RecordsRef {
  readonly totalBytes: number;
}

export type MessagePart = Buffer | RecordsRef;

export interface FinishedMessage {
  readonly parts: MessagePart[];
  readonly totalBytes: number;
}

export class ProtocolWriter {
  private buffer: Buffer;
  private position: number;
  private chunkStart: number;
  private parts: MessagePart[];
  private partsBytes: number;
  private readonly initialBytes: number;

  constructor(initialBytes = 512) {
    assert(Number.isInteger(initialBytes) && initialBytes > 0, 'ProtocolWriter: initialBytes must be a positive integer');
    this.initialBytes = initialBytes;
    this.buffer = Buffer.allocUnsafe(initialBytes);
    this.position = 0;
    this.chunkStart = 0;
    this.parts = [];
    this.partsBytes = 0;
  }

  /** Bytes written so far, external parts included. */
  get byteLength(): number {
    return this.partsBytes + (this.position - this.chunkStart);
  }

  private ensure(bytes: number): void {
    if (this.buffer.length - this.position >= bytes) return;
    const used = this.position - this.chunkStart;
    const capacity = Math.max(this.buffer.length * 2, used + bytes, this.initialBytes);
    const next = Buffer.allocUnsafe(capacity);
    this.buffer.copy(next, 0, this.chunkStart, this.position);
    this.buffer = next;
    this.chunkStart = 0;
    this.position = used;
  }

  int8(value: number): void {
    assert(Number.isInteger(value) && value >= -128 && value <= 127, 'ProtocolWriter.int8: out of range');
    this.ensure(1);
    this.buffer.writeInt8(value, this.position++);
  }

  bool(value: boolean): void {
    this.ensure(1);
    this.buffer[this.position++] = value ? 1 : 0;
  }

  int16(value: number): void {
    assert(Number.isInteger(value) && value >= -32768 && value <= 32767, 'ProtocolWriter.int16: out of range');
    this.ensure(2);
    this.buffer.writeInt16BE(value, this.position);
    this.position += 2;
  }

  int32(value: number): void {
    assert(Number.isInteger(value) && value >= -2147483648 && value <= 2147483647, 'ProtocolWriter.int32: out of range');
    this.ensure(4);
    this.buffer.writeInt32BE(value, this.position);
    this.position += 4;
  }

  uint16(value: number): void {
    assert(Number.isInteger(value) && value >= 0 && value <= 65535, 'ProtocolWriter.uint16: out of range');
    this.ensure(2);
    this.buffer.writeUInt16BE(value, this.position);
    this.position += 2;
  }

  float64(value: number): void {
    assert(typeof value === 'number', 'ProtocolWriter.float64: not a number');
    this.ensure(8);
    this.buffer.writeDoubleBE(value, this.position);
    this.position += 8;
  }

  int64(value: number): void {
    assert(Number.isSafeInteger(value), 'ProtocolWriter.int64: not a safe integer');
    this.ensure(8);
    const high = Math.floor(value / TWO_POW_32);
    const low = value - high * TWO_POW_32;
    this.buffer.writeInt32BE(high, this.position);
    this.buffer.writeUInt32BE(low, this.position + 4);
    this.position += 8;
  }

  uvarint(value: number): void {
    assert(Number.isInteger(value) && value >= 0 && value < TWO_POW_32, 'ProtocolWriter.uvarint: out of range');
    this.ensure(5);
    let rest = value;
    while (rest >= 0x80) {
      this.buffer[this.position++] = (rest & 0x7f) | 0x80;
      rest = Math.floor(rest / 128);
    }
    this.buffer[this.position++] = rest;
  }

  varint(value: number): void {
    assert(Number.isInteger(value) && value >= -2147483648 && value <= 2147483647, 'ProtocolWriter.varint: out of range');
    this.uvarint(((value << 1) ^ (value >> 31)) >>> 0);
  }

  /** 32 hex digits → 16 raw bytes. */
  uuid(hex: string): void {
    assert(/^[0-9a-f]{32}$/.test(hex), 'ProtocolWriter.uuid: expected 32 lowercase hex digits');
    this.ensure(16);
    this.buffer.write(hex, this.position, 16, 'hex');
    this.position += 16;
  }

  nullableString(value: string | null, flexible: boolean): void {
    if (value === null) {
      if (flexible) this.uvarint(0);
      else this.int16(-1);
      return;
    }
    const length = Buffer.byteLength(value, 'utf8');
    if (flexible) this.uvarint(length + 1);
    else {
      assert(length <= 32767, 'ProtocolWriter.string: longer than 32767 bytes');
      this.int16(length);
    }
    this.ensure(length);
    this.buffer.write(value, this.position, length, 'utf8');
    this.position += length;
  }

  string(value: string, flexible: boolean): void {
    this.nullableString(value, flexible);
  }

  /** Copies bytes inline (small fields); use `records` for batches. */
  nullableBytes(value: Buffer | null, flexible: boolean): void {
    if (value === null) {
      if (flexible) this.uvarint(0);
      else this.int32(-1);
      return;
    }
    if (flexible) this.uvarint(value.length + 1);
    else this.int32(value.length);
    this.raw(value);
  }

  /** Raw bytes copied inline, no prefix. */
  raw(value: Buffer): void {
    this.ensure(value.length);
    value.copy(this.buffer, this.position);
    this.position += value.length;
  }

  /** A records field: the length prefix inline, the batch bytes as their own part (zero-copy). */
  records(value: Buffer | RecordsRef | null, flexible: boolean): void {
    if (value === null) {
      this.nullableBytes(null, flexible);
      return;
    }
    const size = Buffer.isBuffer(value) ? value.length : value.totalBytes;
    if (flexible) this.uvarint(size + 1);
    else this.int32(size);
    if (size === 0) return;
    this.cut();
    this.parts.push(value);
    this.partsBytes += size;
  }

  arrayLength(count: number, flexible: boolean): void {
    assert(Number.isInteger(count) && count >= 0, 'ProtocolWriter.arrayLength: negative count');
    if (flexible) this.uvarint(count + 1);
    else this.int32(count);
  }

  nullableArrayLength(count: number | null, flexible: boolean): void {
    if (count === null) {
      if (flexible) this.uvarint(0);
      else this.int32(-1);
      return;
    }
    this.arrayLength(count, flexible);
  }

  /** An empty tagged-field section (flexible versions only); the broker writes no optional tags. */
  emptyTaggedFields(flexible: boolean): void {
    if (flexible) this.uvarint(0);
  }

  /** Moves the current inline chunk into the part list. */
  private cut(): void {
    if (this.position === this.chunkStart) return;
    const chunk = this.buffer.subarray(this.chunkStart, this.position);
    this.parts.push(chunk);
    this.partsBytes += chunk.length;
    this.chunkStart = this.position;
  }

  /** Ends the message: its parts in order and their total size. */
  finish(): FinishedMessage {
    this.cut();
    const finished = { parts: this.parts, totalBytes: this.partsBytes };
    this.reset();
    return finished;
  }

  /**
   * Ends a size-prefixed frame: the caller's first write was `int32(0)` as a
   * placeholder; it is patched to the size of everything after it.
   */
  finishFrame(): FinishedMessage {
    const finished = this.finish();
    const first = finished.parts[0];
    assert(first !== undefined && Buffer.isBuffer(first) && first.length >= 4, 'ProtocolWriter.finishFrame: no size placeholder');
    first.writeInt32BE(finished.totalBytes - 4, 0);
    return finished;
  }

  /** Starts a new message in a fresh buffer (the previous parts belong to whoever took them). */
  reset(): void {
    this.buffer = this.buffer.length - this.position >= this.initialBytes
      ? this.buffer.subarray(this.position)
      : Buffer.allocUnsafe(this.initialBytes);
    this.position = 0;
    this.chunkStart = 0;
    this.parts = [];
    this.partsBytes = 0;
  }
}
