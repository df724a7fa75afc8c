// LZ4 frame format (spec: github.com/lz4/lz4 doc/lz4_Frame_format.md), the
// payload of Kafka batches with codec 3.
//
//   magic        4 bytes  0x184D2204 little-endian
//   FLG          1 byte   bits 7-6 version (=01), 5 block independence,
//                         4 block checksum, 3 content size, 2 content checksum,
//                         1 reserved (0), 0 dictionary id
//   BD           1 byte   bits 6-4 block max size id (4: 64 KiB, 5: 256 KiB,
//                         6: 1 MiB, 7: 4 MiB), other bits reserved (0)
//   content size 8 bytes  little-endian, if FLG bit 3
//   HC           1 byte   (xxh32(FLG .. last descriptor byte, seed 0) >>> 8) & 0xff
//   blocks       4-byte little-endian size (high bit set: stored uncompressed;
//                size <= block max), data, then a 4-byte xxh32 of the data if
//                FLG bit 4
//   end mark     4 zero bytes
//   content checksum  4 bytes xxh32 of the decoded content, if FLG bit 2
// Frames may be concatenated; skippable frames (magic 0x184D2A50..5F, 4-byte
// size, payload) may sit between them.
//
// What we write is what Kafka's KafkaLZ4BlockOutputStream writes: FLG 0x60
// (version 1, independent blocks, no checksums, no content size), BD 0x40
// (64 KiB blocks), header checksum 0x82; a block whose compressed form is not
// smaller is stored uncompressed.
//
// What we read: any frame the spec allows except dependent blocks and
// dictionary ids, which Kafka's reader (KafkaLZ4BlockInputStream) rejects as
// well; a batch it cannot read must not enter the log. The header checksum is
// verified (v2 batches always carry the correct one). Block and content
// checksums are verified when present (older Kafka skipped them; a mismatch
// means a broken producer, and the batch CRC cannot catch a wrong checksum
// field). See CODECS.md for how Kafka versions differ here.
// The declared content size is checked against the cap before any output is
// allocated; every block's output is bounded by the block max size, the
// declared content size and the cap.

import { assert } from '@seglog/common';
import {
  corruptCompressionError,
  decompressionLimitError,
} from './codec-errors.js';
import {
  LZ4_MALFORMED,
  LZ4_OUTPUT_LIMIT,
  Lz4MatchTable,
  lz4BlockBound,
  lz4BlockOutputMax,
  lz4CompressBlock,
  lz4DecodeBlock,
} from './lz4-block.js';
import { GrowableOutput, ScratchBuffer, copyOut } from './output-buffer.js';
import { xxh32 } from './xxhash32.js';

export const LZ4_FRAME_MAGIC = 0x184d2204;
const SKIPPABLE_MAGIC_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;

const FLG_VERSION_MASK = 0xc0;
const FLG_VERSION_1 = 0x40;
const FLG_BLOCK_INDEPENDENT = 0x20;
const FLG_BLOCK_CHECKSUM = 0x10;
const FLG_CONTENT_SIZE = 0x08;
const FLG_CONTENT_CHECKSUM = 0x04;
const FLG_RESERVED = 0x02;
const FLG_DICT_ID = 0x01;
const BD_RESERVED = 0x8f;
const BLOCK_UNCOMPRESSED = 0x8000_0000;

/** Block max size we write: 64 KiB, Kafka's default (BD 0x40). */
export const LZ4_WRITE_BLOCK_BYTES = 64 * 1024;
const WRITE_FLG = FLG_VERSION_1 | FLG_BLOCK_INDEPENDENT;
const WRITE_BD = 0x40;
/** magic + FLG + BD + HC, for what we write. */
const WRITE_HEADER_BYTES = 7;

/** Worst-case size of the frame we write for `inputBytes`: stored blocks plus framing. */
export function lz4FrameBound(inputBytes: number): number {
  const blocks = Math.ceil(inputBytes / LZ4_WRITE_BLOCK_BYTES);
  return WRITE_HEADER_BYTES + blocks * 4 + inputBytes + 4;
}

function read32(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

function write32(bytes: Uint8Array, at: number, value: number): void {
  bytes[at] = value & 0xff;
  bytes[at + 1] = (value >>> 8) & 0xff;
  bytes[at + 2] = (value >>> 16) & 0xff;
  bytes[at + 3] = (value >>> 24) & 0xff;
}

/** Writes the 7-byte frame header we use at `at`; returns the position after it. */
export function writeLz4FrameHeader(output: Uint8Array, at: number): number {
  write32(output, at, LZ4_FRAME_MAGIC);
  output[at + 4] = WRITE_FLG;
  output[at + 5] = WRITE_BD;
  output[at + 6] = (xxh32(output, at + 4, at + 6, 0) >>> 8) & 0xff;
  return at + WRITE_HEADER_BYTES;
}

/**
 * Writes input[start, end) (at most one block's worth) as one block at `at`:
 * compressed if that is smaller, else stored. `output` needs
 * 4 + lz4BlockBound(end - start) bytes free at `at`. Returns the position
 * after the block. A later streaming compressor flushes by calling this on a
 * partial block.
 */
export function writeLz4Block(
  input: Uint8Array,
  start: number,
  end: number,
  output: Uint8Array,
  at: number,
  matchTable: Lz4MatchTable,
): number {
  const blockBytes = end - start;
  assert(blockBytes > 0 && blockBytes <= LZ4_WRITE_BLOCK_BYTES, 'writeLz4Block: bad block size');
  assert(output.length - at >= 4 + lz4BlockBound(blockBytes), 'writeLz4Block: output too small');
  const compressedEnd = lz4CompressBlock(input, start, end, output, at + 4, matchTable);
  const compressedBytes = compressedEnd - at - 4;
  if (compressedBytes < blockBytes) {
    write32(output, at, compressedBytes);
    return compressedEnd;
  }
  write32(output, at, (blockBytes | BLOCK_UNCOMPRESSED) >>> 0);
  output.set(input.subarray(start, end), at + 4);
  return at + 4 + blockBytes;
}

export function writeLz4EndMark(output: Uint8Array, at: number): number {
  write32(output, at, 0);
  return at + 4;
}

const matchTable = new Lz4MatchTable();
/** Compression scratch, retained up to 4 MiB (a batch is usually far smaller). */
const scratch = new ScratchBuffer(4 * 1024 * 1024);

export function compressLz4Frame(input: Uint8Array): Buffer {
  // The last block may transiently need its compressed worst case before we
  // fall back to storing it.
  const capacity = lz4FrameBound(input.length) + lz4BlockBound(LZ4_WRITE_BLOCK_BYTES) - LZ4_WRITE_BLOCK_BYTES;
  const output = scratch.get(capacity);
  let at = writeLz4FrameHeader(output, 0);
  for (let start = 0; start < input.length; start += LZ4_WRITE_BLOCK_BYTES) {
    at = writeLz4Block(input, start, Math.min(input.length, start + LZ4_WRITE_BLOCK_BYTES), output, at, matchTable);
  }
  at = writeLz4EndMark(output, at);
  assert(at <= lz4FrameBound(input.length), 'compressLz4Frame: frame above its bound');
  return copyOut(output, at);
}

/** One parsed frame descriptor. */
interface FrameHeader {
  flags: number;
  blockBytesMax: number;
  /** Declared content size, or -1. */
  contentBytes: number;
  /** Position of the first block. */
  blocksStart: number;
}

const header: FrameHeader = { flags: 0, blockBytesMax: 0, contentBytes: -1, blocksStart: 0 };

/** Parses the frame header at `at` into `header`; the magic is already checked. */
function readFrameHeader(input: Uint8Array, at: number, producedBytes: number, maxOutputBytes: number): void {
  if (input.length - at < 7) throw corruptCompressionError('lz4', 'truncated frame header', at);
  const flags = input[at + 4]!;
  const bd = input[at + 5]!;
  if ((flags & FLG_VERSION_MASK) !== FLG_VERSION_1) throw corruptCompressionError('lz4', 'unsupported frame version', at + 4);
  if ((flags & FLG_RESERVED) !== 0) throw corruptCompressionError('lz4', 'reserved FLG bit set', at + 4);
  if ((flags & FLG_DICT_ID) !== 0) throw corruptCompressionError('lz4', 'dictionary id not supported', at + 4);
  if ((flags & FLG_BLOCK_INDEPENDENT) === 0) {
    throw corruptCompressionError('lz4', 'dependent blocks not supported (Kafka rejects them too)', at + 4);
  }
  if ((bd & BD_RESERVED) !== 0) throw corruptCompressionError('lz4', 'reserved BD bits set', at + 5);
  const sizeId = (bd >>> 4) & 7;
  if (sizeId < 4) throw corruptCompressionError('lz4', 'invalid block max size id', at + 5);
  let descriptorEnd = at + 6;
  let contentBytes = -1;
  if ((flags & FLG_CONTENT_SIZE) !== 0) {
    if (input.length - descriptorEnd < 9) throw corruptCompressionError('lz4', 'truncated content size', descriptorEnd);
    const low = read32(input, descriptorEnd);
    const high = read32(input, descriptorEnd + 4);
    // Anything >= 2^32 is above any cap (caps are int32).
    const declared = high === 0 ? low : high * 0x1_0000_0000 + low;
    if (declared > maxOutputBytes - producedBytes) {
      throw decompressionLimitError('lz4', { maxOutputBytes, outputBytes: producedBytes + declared, declared: true });
    }
    contentBytes = low;
    descriptorEnd += 8;
  }
  const expected = (xxh32(input, at + 4, descriptorEnd, 0) >>> 8) & 0xff;
  if (input[descriptorEnd] !== expected) throw corruptCompressionError('lz4', 'header checksum mismatch', descriptorEnd);
  header.flags = flags;
  header.blockBytesMax = 1 << (2 * sizeId + 8);
  header.contentBytes = contentBytes;
  header.blocksStart = descriptorEnd + 1;
}

/** Decodes every frame (and skips skippable frames) in `input`, producing at most maxOutputBytes. */
export function decompressLz4Frames(input: Uint8Array, maxOutputBytes: number): Buffer {
  if (input.length === 0) throw corruptCompressionError('lz4', 'empty input', 0);
  let at = 0;
  let output: GrowableOutput | undefined;
  while (at < input.length) {
    if (input.length - at < 4) throw corruptCompressionError('lz4', 'truncated magic', at);
    const magic = read32(input, at);
    if (((magic & SKIPPABLE_MAGIC_MASK) >>> 0) === SKIPPABLE_MAGIC) {
      if (input.length - at < 8) throw corruptCompressionError('lz4', 'truncated skippable frame', at);
      const skipBytes = read32(input, at + 4);
      if (skipBytes > input.length - at - 8) throw corruptCompressionError('lz4', 'truncated skippable frame', at);
      at += 8 + skipBytes;
      continue;
    }
    if (magic !== LZ4_FRAME_MAGIC) throw corruptCompressionError('lz4', 'bad frame magic', at);
    const producedBytes = output === undefined ? 0 : output.length;
    readFrameHeader(input, at, producedBytes, maxOutputBytes);
    if (output === undefined) {
      // Exact when the first frame declares its size; else a guess that grows.
      const initial = header.contentBytes >= 0 ? header.contentBytes : guessFrameBytes(input);
      output = new GrowableOutput(initial, maxOutputBytes);
    }
    at = decodeFrameBlocks(input, output, maxOutputBytes);
  }
  return output === undefined ? copyOut(input, 0) : output.finish(); // only skippable frames: empty
}

/** Most output a frame is presized for, as a multiple of its input (typical codec ratios are far below). */
const PRESIZE_RATIO_MAX = 8;

/**
 * Output size to start with for the frame in `header` without a content
 * size: its block count (a hop over the block headers, nothing decoded) times
 * the block max size, but at most PRESIZE_RATIO_MAX times the input, so a
 * small hostile frame of many tiny blocks cannot make us allocate much more
 * than it could produce; past the guess the output grows by doubling as
 * before. A frame of k full blocks then decodes into one buffer instead of
 * log2(k) doublings plus a trimming copy (the broker's validation of a 1 MiB
 * lz4 batch of 2.4x text: _copyActual 98 + 59 ms of 5.2 s in a profile).
 */
function guessFrameBytes(input: Uint8Array): number {
  const blockChecksumBytes = (header.flags & FLG_BLOCK_CHECKSUM) !== 0 ? 4 : 0;
  let blocks = 0;
  let at = header.blocksStart;
  while (input.length - at >= 4) {
    const sizeField = read32(input, at);
    if (sizeField === 0) break;
    blocks++;
    at += 4 + (sizeField >= BLOCK_UNCOMPRESSED ? sizeField - BLOCK_UNCOMPRESSED : sizeField) + blockChecksumBytes;
  }
  const guess = Math.min(blocks * header.blockBytesMax, input.length * PRESIZE_RATIO_MAX);
  return Math.max(guess, Math.min(header.blockBytesMax, input.length * 4));
}

/** Decodes the blocks of the frame described by `header`; returns the position after the frame. */
function decodeFrameBlocks(input: Uint8Array, output: GrowableOutput, maxOutputBytes: number): number {
  const { flags, blockBytesMax, contentBytes } = header;
  const frameOutputStart = output.length;
  const contentEnd = contentBytes >= 0 ? frameOutputStart + contentBytes : Number.MAX_SAFE_INTEGER;
  const blockChecksumBytes = (flags & FLG_BLOCK_CHECKSUM) !== 0 ? 4 : 0;
  let at = header.blocksStart;
  for (;;) {
    if (input.length - at < 4) throw corruptCompressionError('lz4', 'truncated block size', at);
    const sizeField = read32(input, at);
    if (sizeField === 0) {
      at += 4;
      break;
    }
    const stored = sizeField >= BLOCK_UNCOMPRESSED;
    const blockBytes = stored ? sizeField - BLOCK_UNCOMPRESSED : sizeField;
    if (blockBytes > blockBytesMax) throw corruptCompressionError('lz4', 'block larger than the block max size', at);
    const blockStart = at + 4;
    if (blockBytes + blockChecksumBytes > input.length - blockStart) throw corruptCompressionError('lz4', 'truncated block', at);
    const blockEnd = blockStart + blockBytes;
    if (blockChecksumBytes !== 0 && read32(input, blockEnd) !== xxh32(input, blockStart, blockEnd, 0)) {
      throw corruptCompressionError('lz4', 'block checksum mismatch', blockEnd);
    }
    if (stored) {
      copyStoredBlock(input, blockStart, blockEnd, output, contentEnd, maxOutputBytes);
    } else {
      decodeCompressedBlock(input, blockStart, blockEnd, output, Math.min(contentEnd, output.length + blockBytesMax), maxOutputBytes);
    }
    at = blockEnd + blockChecksumBytes;
  }
  if (contentBytes >= 0 && output.length !== contentEnd) throw corruptCompressionError('lz4', 'content size mismatch', at);
  if ((flags & FLG_CONTENT_CHECKSUM) !== 0) {
    if (input.length - at < 4) throw corruptCompressionError('lz4', 'truncated content checksum', at);
    if (read32(input, at) !== xxh32(output.bytes, frameOutputStart, output.length, 0)) {
      throw corruptCompressionError('lz4', 'content checksum mismatch', at);
    }
    at += 4;
  }
  return at;
}

function copyStoredBlock(
  input: Uint8Array,
  blockStart: number,
  blockEnd: number,
  output: GrowableOutput,
  contentEnd: number,
  maxOutputBytes: number,
): void {
  const blockBytes = blockEnd - blockStart;
  if (blockBytes > contentEnd - output.length) throw corruptCompressionError('lz4', 'output beyond the content size', blockStart);
  if (!output.reserve(blockBytes)) {
    throw decompressionLimitError('lz4', { maxOutputBytes, outputBytes: output.length + blockBytes, declared: false });
  }
  output.bytes.set(input.subarray(blockStart, blockEnd), output.length);
  output.length += blockBytes;
}

/**
 * Decodes one compressed block. Its output may not pass `frameLimit` (block
 * max size, declared content size: passing it is corruption) nor the cap
 * (passing it is the limit error).
 */
function decodeCompressedBlock(
  input: Uint8Array,
  blockStart: number,
  blockEnd: number,
  output: GrowableOutput,
  frameLimit: number,
  maxOutputBytes: number,
): void {
  const start = output.length;
  const room = Math.min(frameLimit - start, lz4BlockOutputMax(blockEnd - blockStart));
  const capRoom = maxOutputBytes - start;
  const limitedByCap = capRoom < room;
  const reserved = output.reserve(limitedByCap ? capRoom : room);
  assert(reserved, 'decodeCompressedBlock: room within the cap must be reservable');
  const limit = start + Math.min(room, capRoom);
  const end = lz4DecodeBlock(input, blockStart, blockEnd, output.bytes, start, limit, start);
  if (end === LZ4_OUTPUT_LIMIT) {
    if (limitedByCap) throw decompressionLimitError('lz4', { maxOutputBytes, outputBytes: maxOutputBytes + 1, declared: false });
    throw corruptCompressionError('lz4', 'block output beyond the block max size or content size', blockStart);
  }
  if (end === LZ4_MALFORMED) throw corruptCompressionError('lz4', 'malformed block', blockStart);
  assert(end >= start && end <= limit, 'decodeCompressedBlock: decoder end out of range');
  output.length = end;
}
