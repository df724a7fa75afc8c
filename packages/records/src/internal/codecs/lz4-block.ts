// LZ4 block format (spec: github.com/lz4/lz4 doc/lz4_Block_format.md).
//
// A block is a sequence of sequences. Each sequence is
//   token (1 byte: high nibble literal length, low nibble match length - 4)
//   [literal length extension: bytes added while they equal 255]
//   literals
//   offset (2 bytes little-endian, 1..65535, back from the current output end)
//   [match length extension: bytes added while they equal 255]
// The last sequence stops after its literals (no offset, no match). The
// encoder's extra rules (the last 5 bytes are literals, the last match starts
// at least 12 bytes before the end) are followed by lz4CompressBlock and not
// required by lz4DecodeBlock, like the reference decoder's "safe" mode except
// that we do not need its over-copy margins.
//
// Decoder invariants: every literal run is checked against the input end and
// the output limit before it is copied; every match offset against the
// output start of the block (independent blocks) and every match length
// against the output limit before it is copied. Errors are returned as
// negative numbers (no throw, no allocation on the hot path); the frame layer
// turns them into SeglogErrors.

import { assert } from '@seglog/common';

/** The block ended in the middle of a sequence, or a field is invalid. */
export const LZ4_MALFORMED = -1;
/** The block would produce output past `outputLimit`. */
export const LZ4_OUTPUT_LIMIT = -2;

const MIN_MATCH = 4;
const LAST_LITERALS = 5;
const MF_LIMIT = 12;
const OFFSET_MAX = 65_535;
/** Copies shorter than this run as byte loops; longer ones use memmove. */
const SHORT_COPY_BYTES = 32;

/** LZ4_compressBound: worst-case size of one compressed block of `inputBytes`. */
export function lz4BlockBound(inputBytes: number): number {
  return inputBytes + Math.floor(inputBytes / 255) + 16;
}

/**
 * An upper bound on the output of a compressed block of `blockBytes` bytes:
 * each input byte yields at most 255 output bytes (a 255 length extension);
 * a token yields at most 15 + 19.
 */
export function lz4BlockOutputMax(blockBytes: number): number {
  return blockBytes * 255;
}

/**
 * Decodes the block input[inputStart, inputEnd) into output starting at
 * outputStart, never writing at or past outputLimit, and never reading a
 * match before outputFloor. Returns the new output end, or LZ4_MALFORMED /
 * LZ4_OUTPUT_LIMIT.
 */
export function lz4DecodeBlock(
  input: Uint8Array,
  inputStart: number,
  inputEnd: number,
  output: Uint8Array,
  outputStart: number,
  outputLimit: number,
  outputFloor: number,
): number {
  assert(inputStart >= 0 && inputStart <= inputEnd && inputEnd <= input.length, 'lz4DecodeBlock: bad input range');
  assert(outputFloor <= outputStart && outputStart <= outputLimit, 'lz4DecodeBlock: bad output range');
  assert(outputLimit <= output.length, 'lz4DecodeBlock: output limit beyond buffer');
  let ip = inputStart;
  let op = outputStart;
  for (;;) {
    // Every sequence starts with a token; a block may not end after a match.
    if (ip >= inputEnd) return LZ4_MALFORMED;
    const token = input[ip++]!;
    let literalBytes = token >>> 4;
    if (literalBytes === 15) {
      let extension = 255;
      while (extension === 255) {
        if (ip >= inputEnd) return LZ4_MALFORMED;
        extension = input[ip++]!;
        literalBytes += extension;
      }
    }
    if (literalBytes > inputEnd - ip) return LZ4_MALFORMED;
    if (literalBytes > outputLimit - op) return LZ4_OUTPUT_LIMIT;
    if (literalBytes < SHORT_COPY_BYTES) {
      for (let i = 0; i < literalBytes; i++) output[op + i] = input[ip + i]!;
    } else {
      output.set(input.subarray(ip, ip + literalBytes), op);
    }
    ip += literalBytes;
    op += literalBytes;
    if (ip === inputEnd) return op; // the last sequence: literals only
    if (inputEnd - ip < 2) return LZ4_MALFORMED;
    const offset = input[ip]! | (input[ip + 1]! << 8);
    ip += 2;
    if (offset === 0 || offset > op - outputFloor) return LZ4_MALFORMED;
    let matchBytes = (token & 15) + MIN_MATCH;
    if ((token & 15) === 15) {
      let extension = 255;
      while (extension === 255) {
        if (ip >= inputEnd) return LZ4_MALFORMED;
        extension = input[ip++]!;
        matchBytes += extension;
      }
    }
    if (matchBytes > outputLimit - op) return LZ4_OUTPUT_LIMIT;
    const from = op - offset;
    if (offset >= matchBytes && matchBytes >= SHORT_COPY_BYTES) {
      output.copyWithin(op, from, from + matchBytes); // no overlap
    } else if (offset < 8 && matchBytes >= SHORT_COPY_BYTES) {
      // Overlapping run (offset 1 is RLE): copy one period, then double it.
      for (let i = 0; i < offset; i++) output[op + i] = output[from + i]!;
      let done = offset;
      while (done < matchBytes) {
        const chunk = Math.min(done, matchBytes - done);
        output.copyWithin(op + done, op, op + chunk);
        done += chunk;
      }
    } else {
      for (let i = 0; i < matchBytes; i++) output[op + i] = output[from + i]!;
    }
    op += matchBytes;
  }
}

function read32(bytes: Uint8Array, at: number): number {
  return bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24);
}

/** log2 of the matcher's hash table size: 2^14 int32 entries (64 KiB), like LZ4_MEMORY_USAGE 16. */
export const LZ4_HASH_LOG = 14;
const SKIP_TRIGGER = 6;
/** Positions are stored as `base + position-in-block`; base grows per block so stale entries never match. */
const TABLE_BASE_MAX = 0x3fff_ffff;

function hash4(sequence: number): number {
  return Math.imul(sequence, 0x9e3779b1 | 0) >>> (32 - LZ4_HASH_LOG);
}

/**
 * Greedy matcher state, reused across blocks and calls: a hash table of the
 * last position seen for each 4-byte hash. Entries below `base` belong to
 * earlier blocks and are ignored, so starting a block costs nothing.
 */
export class Lz4MatchTable {
  readonly table: Int32Array;
  base: number;

  constructor() {
    this.table = new Int32Array(1 << LZ4_HASH_LOG);
    this.base = 1;
  }

  /** Starts an independent block of `blockBytes`; returns the base for its positions. */
  startBlock(blockBytes: number): number {
    if (this.base + blockBytes + 1 >= TABLE_BASE_MAX) {
      this.table.fill(0);
      this.base = 1;
    }
    const base = this.base;
    this.base += blockBytes + 1;
    return base;
  }
}

function writeLength(output: Uint8Array, at: number, extraBytes: number): number {
  let op = at;
  let rest = extraBytes;
  while (rest >= 255) {
    output[op++] = 255;
    rest -= 255;
  }
  output[op++] = rest;
  return op;
}

function writeLiterals(input: Uint8Array, from: number, to: number, output: Uint8Array, at: number): number {
  const count = to - from;
  if (count < SHORT_COPY_BYTES) {
    for (let i = 0; i < count; i++) output[at + i] = input[from + i]!;
  } else {
    output.set(input.subarray(from, to), at);
  }
  return at + count;
}

/**
 * Compresses input[inputStart, inputEnd) as one independent LZ4 block into
 * output at outputStart; output must have lz4BlockBound(length) bytes free.
 * Returns the output end. Greedy single-probe matcher with LZ4's skip
 * acceleration (the step grows on runs of misses, so incompressible input
 * costs little).
 */
export function lz4CompressBlock(
  input: Uint8Array,
  inputStart: number,
  inputEnd: number,
  output: Uint8Array,
  outputStart: number,
  matchTable: Lz4MatchTable,
): number {
  assert(inputStart >= 0 && inputStart <= inputEnd && inputEnd <= input.length, 'lz4CompressBlock: bad input range');
  assert(output.length - outputStart >= lz4BlockBound(inputEnd - inputStart), 'lz4CompressBlock: output too small');
  const table = matchTable.table;
  const base = matchTable.startBlock(inputEnd - inputStart);
  const mfLimit = inputEnd - MF_LIMIT;
  const matchLimit = inputEnd - LAST_LITERALS;
  let op = outputStart;
  let anchor = inputStart;
  if (inputEnd - inputStart > MF_LIMIT) {
    table[hash4(read32(input, inputStart))] = base;
    let ip = inputStart + 1;
    search: for (;;) {
      // Find a 4-byte match at ip (greedy, one probe per position).
      let candidate = 0;
      let step = 1;
      let attempts = 1 << SKIP_TRIGGER;
      for (;;) {
        if (ip > mfLimit) break search;
        const sequence = read32(input, ip);
        const slot = hash4(sequence);
        const stored = table[slot]!;
        table[slot] = base + (ip - inputStart);
        candidate = stored - base + inputStart;
        if (stored >= base && ip - candidate <= OFFSET_MAX && read32(input, candidate) === sequence) break;
        ip += step;
        step = attempts++ >>> SKIP_TRIGGER;
      }
      // Extend backwards over pending literals, then forwards.
      while (ip > anchor && candidate > inputStart && input[ip - 1] === input[candidate - 1]) {
        ip--;
        candidate--;
      }
      let matchEnd = ip + MIN_MATCH;
      let from = candidate + MIN_MATCH;
      while (matchEnd < matchLimit && input[matchEnd] === input[from]) {
        matchEnd++;
        from++;
      }
      op = writeSequence(input, anchor, ip, ip - candidate, matchEnd - ip, output, op);
      ip = matchEnd;
      anchor = ip;
      if (ip > mfLimit) break;
      // Seed the table with a position inside the match, as LZ4 does.
      table[hash4(read32(input, ip - 2))] = base + (ip - 2 - inputStart);
    }
  }
  // Last sequence: the remaining literals, no match.
  const literalBytes = inputEnd - anchor;
  const token = op++;
  if (literalBytes >= 15) {
    output[token] = 0xf0;
    op = writeLength(output, op, literalBytes - 15);
  } else {
    output[token] = literalBytes << 4;
  }
  return writeLiterals(input, anchor, inputEnd, output, op);
}

function writeSequence(
  input: Uint8Array,
  literalStart: number,
  literalEnd: number,
  offset: number,
  matchBytes: number,
  output: Uint8Array,
  at: number,
): number {
  let op = at + 1;
  const literalBytes = literalEnd - literalStart;
  let token: number;
  if (literalBytes >= 15) {
    token = 0xf0;
    op = writeLength(output, op, literalBytes - 15);
  } else {
    token = literalBytes << 4;
  }
  op = writeLiterals(input, literalStart, literalEnd, output, op);
  output[op++] = offset & 0xff;
  output[op++] = offset >>> 8;
  const matchCode = matchBytes - MIN_MATCH;
  if (matchCode >= 15) {
    token |= 15;
    op = writeLength(output, op, matchCode - 15);
  } else {
    token |= matchCode;
  }
  output[at] = token;
  return op;
}
