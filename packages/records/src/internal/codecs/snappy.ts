// snappy payloads in Kafka: the xerial snappy-java stream framing around raw
// snappy blocks (spec: github.com/xerial/snappy-java SnappyOutputStream).
//
//   header  8 bytes  0x82 'S' 'N' 'A' 'P' 'P' 'Y' 0x00
//           int32 BE version (1), int32 BE compatible version (1)
//   blocks  int32 BE compressed length (> 0), then a raw snappy block
//           (github.com/google/snappy format_description.txt): a varint
//           uncompressed length (<= 2^32 - 1), then literal/copy elements.
// A block length equal to the first 4 magic bytes (0x82534E41) starts a
// concatenated stream: a full header follows and blocks resume after it.
//
// Write: Kafka's snappy-java defaults: 32 KiB of input per block, version 1,
// compatible version 1. Read, like snappy-java's SnappyInputStream: framed if
// the input starts with the magic, otherwise the whole input is one raw
// snappy block; an empty input is empty output.
//
// Caps: a first pass reads every block's length prefix and varint preamble
// (bounded by the remaining input) and rejects the payload if the declared
// total passes the cap, before anything is decompressed. The output is then
// allocated exactly, and each block is decoded by the `snappy` package (Rust
// `snap` via napi-rs, memory-safe, allocates exactly the preamble's length,
// fails if the block produces a different length); its result is checked
// against the preamble again and copied into place.

import * as snappy from 'snappy';
import { assert } from '@seglog/common';
import { corruptCompressionError, decompressionLimitError } from './codec-errors.js';
import { allocOutput, copyOut } from './output-buffer.js';

const MAGIC = Uint8Array.of(0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00);
/** The first four magic bytes as a big-endian int32: a block length equal to it starts a concatenated stream. */
const MAGIC_HEAD = 0x82534e41 | 0;
const HEADER_BYTES = 16;
const VERSION = 1;
const COMPATIBLE_VERSION = 1;
/** snappy-java's default block size, which Kafka uses. */
export const SNAPPY_BLOCK_BYTES = 32 * 1024;
const UNCOMPRESS_OPTIONS = { asBuffer: true } as const;

/** snappy MaxCompressedLength: worst-case raw block size for `inputBytes`. */
export function snappyRawBound(inputBytes: number): number {
  return 32 + inputBytes + Math.floor(inputBytes / 6);
}

/** Worst-case xerial-framed size for `inputBytes`: header, plus a length and a raw bound per 32 KiB block. */
export function snappyFramedBound(inputBytes: number): number {
  const blocks = Math.ceil(inputBytes / SNAPPY_BLOCK_BYTES);
  return HEADER_BYTES + blocks * (4 + 32) + inputBytes + Math.floor(inputBytes / 6);
}

/** Writes the 16-byte xerial header at `at`. */
export function writeSnappyHeader(output: Uint8Array, at: number): number {
  output.set(MAGIC, at);
  writeInt32BE(output, at + 8, VERSION);
  writeInt32BE(output, at + 12, COMPATIBLE_VERSION);
  return at + HEADER_BYTES;
}

function writeInt32BE(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = (value >>> 24) & 0xff;
  bytes[at + 1] = (value >>> 16) & 0xff;
  bytes[at + 2] = (value >>> 8) & 0xff;
  bytes[at + 3] = value & 0xff;
}

function readInt32BE(bytes: Uint8Array, at: number): number {
  return (bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!;
}

export function compressSnappyFramed(input: Uint8Array): Buffer {
  const blockCount = Math.ceil(input.length / SNAPPY_BLOCK_BYTES);
  const blocks: Buffer[] = new Array<Buffer>(blockCount);
  let total = HEADER_BYTES;
  for (let index = 0; index < blockCount; index++) {
    const start = index * SNAPPY_BLOCK_BYTES;
    const block = snappy.compressSync(input.subarray(start, Math.min(input.length, start + SNAPPY_BLOCK_BYTES)));
    assert(block.length <= snappyRawBound(SNAPPY_BLOCK_BYTES), 'compressSnappyFramed: block above its bound');
    blocks[index] = block;
    total += 4 + block.length;
  }
  const output = allocOutput(total);
  let at = writeSnappyHeader(output, 0);
  for (const block of blocks) {
    writeInt32BE(output, at, block.length);
    output.set(block, at + 4);
    at += 4 + block.length;
  }
  assert(at === total, 'compressSnappyFramed: size mismatch');
  return output;
}

/** The varint uncompressed length at the start of a raw block, or -1 if malformed. */
export function readSnappyPreamble(bytes: Uint8Array, start: number, end: number): number {
  let value = 0;
  let scale = 1;
  for (let at = start; at < end && at < start + 5; at++) {
    const byte = bytes[at]!;
    if (at === start + 4 && byte > 0x0f) return -1; // above 2^32 - 1
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return value;
    scale *= 128;
  }
  return -1;
}

function hasMagic(input: Uint8Array, at: number): boolean {
  if (input.length - at < MAGIC.length) return false;
  for (let index = 0; index < MAGIC.length; index++) {
    if (input[at + index] !== MAGIC[index]) return false;
  }
  return true;
}

/** Checks the 16-byte header at `at`; returns the position after it. */
function readHeader(input: Uint8Array, at: number): number {
  if (input.length - at < HEADER_BYTES) throw corruptCompressionError('snappy', 'truncated stream header', at);
  if (!hasMagic(input, at)) throw corruptCompressionError('snappy', 'bad stream header magic', at);
  // snappy-java rejects only a version below its minimum compatible version (1).
  if (readInt32BE(input, at + 8) < VERSION) throw corruptCompressionError('snappy', 'unsupported stream version', at + 8);
  return at + HEADER_BYTES;
}

export function decompressSnappy(input: Uint8Array, maxOutputBytes: number): Buffer {
  if (input.length === 0) return copyOut(input, 0);
  if (!hasMagic(input, 0)) return decompressRaw(input, maxOutputBytes);
  const totalBytes = scanFramedBlocks(input, maxOutputBytes);
  const output = allocOutput(totalBytes);
  let outputAt = 0;
  let at = readHeader(input, 0);
  while (at < input.length) {
    const blockBytes = readInt32BE(input, at);
    if (blockBytes === MAGIC_HEAD) {
      at = readHeader(input, at);
      continue;
    }
    const blockStart = at + 4;
    const expected = readSnappyPreamble(input, blockStart, blockStart + blockBytes);
    outputAt = decodeRawBlock(input, blockStart, blockStart + blockBytes, expected, output, outputAt);
    at = blockStart + blockBytes;
  }
  assert(outputAt === totalBytes, 'decompressSnappy: output size differs from the scan');
  return output;
}

/** First pass: validates the framing and returns the declared output total; throws past the cap. */
function scanFramedBlocks(input: Uint8Array, maxOutputBytes: number): number {
  let totalBytes = 0;
  let at = readHeader(input, 0);
  while (at < input.length) {
    if (input.length - at < 4) throw corruptCompressionError('snappy', 'truncated block length', at);
    const blockBytes = readInt32BE(input, at);
    if (blockBytes === MAGIC_HEAD) {
      at = readHeader(input, at);
      continue;
    }
    if (blockBytes <= 0) throw corruptCompressionError('snappy', 'block length not positive', at);
    const blockStart = at + 4;
    if (blockBytes > input.length - blockStart) throw corruptCompressionError('snappy', 'truncated block', at);
    const declared = readSnappyPreamble(input, blockStart, blockStart + blockBytes);
    if (declared < 0) throw corruptCompressionError('snappy', 'malformed block length preamble', blockStart);
    totalBytes += declared;
    if (totalBytes > maxOutputBytes) {
      throw decompressionLimitError('snappy', { maxOutputBytes, outputBytes: totalBytes, declared: true });
    }
    at = blockStart + blockBytes;
  }
  return totalBytes;
}

function decompressRaw(input: Uint8Array, maxOutputBytes: number): Buffer {
  const declared = readSnappyPreamble(input, 0, input.length);
  if (declared < 0) throw corruptCompressionError('snappy', 'malformed length preamble', 0);
  if (declared > maxOutputBytes) {
    throw decompressionLimitError('snappy', { maxOutputBytes, outputBytes: declared, declared: true });
  }
  const output = allocOutput(declared);
  decodeRawBlock(input, 0, input.length, declared, output, 0);
  return output;
}

/** Decodes one raw block whose preamble declares `expected` bytes into output at `at`; returns the end. */
function decodeRawBlock(input: Uint8Array, start: number, end: number, expected: number, output: Buffer, at: number): number {
  assert(expected >= 0 && expected <= output.length - at, 'decodeRawBlock: declared size not reserved');
  let decoded: Buffer;
  try {
    decoded = snappy.uncompressSync(input.subarray(start, end), UNCOMPRESS_OPTIONS) as Buffer;
  } catch (error) {
    throw corruptCompressionError('snappy', error instanceof Error ? error.message : String(error), start, error);
  }
  if (decoded.length !== expected) throw corruptCompressionError('snappy', 'block length differs from its preamble', start);
  decoded.copy(output, at);
  return at + expected;
}
