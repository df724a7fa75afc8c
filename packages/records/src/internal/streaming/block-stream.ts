// Block-framed codecs written in segments: lz4 (our frame writer, 64 KiB
// independent blocks), snappy (xerial framing, 32 KiB raw blocks) and none.
// A flush is simply a short block, so after every flush the size is exact.
// Worst case of k pending bytes: stored blocks. lz4: k + 4 per 64 KiB block,
// plus the 4-byte end mark. snappy: 4 + MaxCompressedLength (32 + n + n/6) per
// 32 KiB block. none: k.
// The frame/stream header is written at construction, so it is part of
// outputBytes from the start.
import { assert } from '@seglog/common';
import { Codec, type CodecId } from '../../compression.js';
import { Lz4MatchTable, lz4BlockBound } from '../codecs/lz4-block.js';
import { LZ4_WRITE_BLOCK_BYTES, writeLz4Block, writeLz4EndMark, writeLz4FrameHeader } from '../codecs/lz4-frame.js';
import { SNAPPY_BLOCK_BYTES, compressSnappyFramed, writeSnappyHeader } from '../codecs/snappy.js';
import type { StreamCompressor } from './stream-compressor.js';

const LZ4_HEADER_BYTES = 7;
const LZ4_END_MARK_BYTES = 4;
const SNAPPY_HEADER_BYTES = 16;

// One matcher for every lz4 stream: blocks are independent and calls are
// synchronous, so sharing is safe (startBlock ignores older entries).
const matchTable = new Lz4MatchTable();
let lz4Scratch: Buffer | null = null;

export class BlockStream implements StreamCompressor {
  readonly codec: CodecId;
  outputBytes: number;
  private readonly chunks: Uint8Array[];

  constructor(codec: CodecId) {
    assert(codec === Codec.none || codec === Codec.snappy || codec === Codec.lz4, 'BlockStream: codec must be none, snappy or lz4');
    this.codec = codec;
    this.chunks = [];
    this.outputBytes = 0;
    if (codec === Codec.lz4) this.push(writeHeader(LZ4_HEADER_BYTES, writeLz4FrameHeader));
    if (codec === Codec.snappy) this.push(writeHeader(SNAPPY_HEADER_BYTES, writeSnappyHeader));
  }

  bound(pendingBytes: number): number {
    switch (this.codec) {
      case Codec.lz4:
        return this.outputBytes + pendingBytes + 4 * Math.ceil(pendingBytes / LZ4_WRITE_BLOCK_BYTES) + LZ4_END_MARK_BYTES;
      case Codec.snappy: {
        const blocks = Math.ceil(pendingBytes / SNAPPY_BLOCK_BYTES);
        return this.outputBytes + blocks * (4 + 32) + pendingBytes + Math.floor(pendingBytes / 6);
      }
      default:
        return this.outputBytes + pendingBytes;
    }
  }

  flush(input: Uint8Array): void {
    if (input.length === 0) return;
    if (this.codec === Codec.lz4) this.flushLz4(input);
    else if (this.codec === Codec.snappy) this.flushSnappy(input);
    else this.push(Buffer.from(input));
  }

  finish(input: Uint8Array): readonly Uint8Array[] {
    this.flush(input);
    if (this.codec === Codec.lz4) this.push(writeHeader(LZ4_END_MARK_BYTES, writeLz4EndMark));
    return this.chunks;
  }

  dispose(): void {
    this.chunks.length = 0;
  }

  private push(chunk: Uint8Array): void {
    this.chunks.push(chunk);
    this.outputBytes += chunk.length;
  }

  private flushLz4(input: Uint8Array): void {
    const need = Math.ceil(input.length / LZ4_WRITE_BLOCK_BYTES) * (4 + lz4BlockBound(LZ4_WRITE_BLOCK_BYTES));
    if (lz4Scratch === null || lz4Scratch.length < need) lz4Scratch = Buffer.allocUnsafe(Math.max(need, 256 * 1024));
    let at = 0;
    for (let start = 0; start < input.length; start += LZ4_WRITE_BLOCK_BYTES) {
      const end = Math.min(input.length, start + LZ4_WRITE_BLOCK_BYTES);
      at = writeLz4Block(input, start, end, lz4Scratch, at, matchTable);
    }
    this.push(Buffer.from(lz4Scratch.subarray(0, at)));
  }

  private flushSnappy(input: Uint8Array): void {
    // compressSnappyFramed writes header + length-prefixed blocks; the blocks
    // of several calls concatenate behind one header (short blocks are valid).
    this.push(compressSnappyFramed(input).subarray(SNAPPY_HEADER_BYTES));
  }
}

function writeHeader(bytes: number, write: (output: Uint8Array, at: number) => number): Buffer {
  const out = Buffer.alloc(bytes);
  const end = write(out, 0);
  assert(end === bytes, 'BlockStream: header size');
  return out;
}
