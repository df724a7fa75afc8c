// Deterministic record payloads, so the consume phase can verify content
// without keeping a copy of what was sent. A value of `length` bytes
// (length >= PAYLOAD_HEADER_BYTES):
//
//   [0..4)   producer index (uint32 BE, 0-based in this run)
//   [4..8)   partition (uint32 BE)
//   [8..12)  sequence (uint32 BE): the record's 0-based number among this
//            producer's records of this partition (equal to the Kafka
//            producer sequence when idempotent)
//   [12..)   filler, by PayloadKind, from a xorshift32 stream seeded from
//            the three fields above:
//            'random' the stream's bytes (incompressible);
//            'text'   words of a fixed 64-word vocabulary (skewed to the first
//                     ones: the least of three draws) and, 1 draw in 32, a
//                     base-36 number (JSON-ish text; 2000 values of 512 bytes
//                     compress gzip 5.24×, zstd 4.57×, lz4 2.45×)
//
// Same (producer, partition, sequence, length, kind) → same bytes, always.

import { assert } from '@seglog/common';

export const PAYLOAD_HEADER_BYTES = 12;

export type PayloadKind = 'random' | 'text';
export const PAYLOAD_KINDS: readonly PayloadKind[] = ['random', 'text'];

/** 64 words of 3..10 latin1 bytes, each followed by a space, back to back; WORD_STARTS[i]..WORD_STARTS[i+1]. */
const WORDS: Buffer = buildVocabulary();
const WORD_STARTS: Int32Array = wordStarts(WORDS);

function buildVocabulary(): Buffer {
  let x = 0x2545f491;
  let text = '';
  for (let i = 0; i < 64; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
    const length = 3 + ((x >>> 0) % 8);
    let word = '';
    for (let k = 0; k < length; k++) {
      x ^= x << 13; x ^= x >>> 17; x ^= x << 5;
      word += String.fromCharCode(97 + ((x >>> 0) % 26));
    }
    text += i % 8 === 0 ? `"${word}": ` : `${word} `;
  }
  return Buffer.from(text, 'latin1');
}

function wordStarts(words: Buffer): Int32Array {
  const starts = new Int32Array(65);
  let n = 1;
  for (let i = 0; i < words.length && n < 65; i++) if (words[i] === 0x20) starts[n++] = i + 1;
  assert(n === 65, 'payload: vocabulary must hold 64 words');
  return starts;
}

export interface PayloadIdentity {
  producer: number;
  partition: number;
  sequence: number;
}

function seedOf(producer: number, partition: number, sequence: number): number {
  // Multiply-xor mixing (constants from murmur3's fmix32); never 0 (xorshift's fixed point).
  let h = Math.imul(producer + 1, 0x9e3779b1) ^ Math.imul(partition + 1, 0x85ebca6b) ^ Math.imul(sequence + 1, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h === 0 ? 0x6d2b79f5 : h;
}

/** Writes the payload of (producer, partition, sequence) into target[position, position + length). */
export function fillPayload(target: Buffer, position: number, length: number, identity: Readonly<PayloadIdentity>, kind: PayloadKind = 'random'): void {
  assert(length >= PAYLOAD_HEADER_BYTES, 'fillPayload: length below the payload header');
  assert(position + length <= target.length, 'fillPayload: target too small');
  target.writeUInt32BE(identity.producer, position);
  target.writeUInt32BE(identity.partition, position + 4);
  target.writeUInt32BE(identity.sequence, position + 8);
  const seed = seedOf(identity.producer, identity.partition, identity.sequence);
  if (kind === 'text') fillText(target, position + PAYLOAD_HEADER_BYTES, position + length, seed);
  else fillRandom(target, position + PAYLOAD_HEADER_BYTES, position + length, seed);
}

/**
 * Words (31 in 32 draws) and base-36 numbers (1 in 32), cut at `end`; one
 * stream draw per token. Byte loops, not Buffer.copy/write: a native call
 * per 6-byte word made this 9.4 µs per 512-byte value; the loops take 2.6 µs (random: 1.3 µs).
 */
function fillText(target: Buffer, start: number, end: number, seed: number): void {
  let x = seed;
  let at = start;
  while (at < end) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    const r = x >>> 0;
    if ((r & 31) === 0) {
      let digits = (r >>> 5) % 100_000;
      do {
        const d = digits % 36;
        target[at++] = d < 10 ? 48 + d : 87 + d;
        digits = Math.floor(digits / 36);
      } while (digits > 0 && at < end);
      if (at < end) target[at++] = 0x20;
    } else {
      const w = Math.min((r >>> 5) & 63, (r >>> 11) & 63, (r >>> 17) & 63);
      const to = WORD_STARTS[w + 1] as number;
      for (let i = WORD_STARTS[w] as number; i < to && at < end; i++) target[at++] = WORDS[i] as number;
    }
  }
}

function fillRandom(target: Buffer, start: number, end: number, seed: number): void {
  let x = seed;
  let at = start;
  for (; at + 4 <= end; at += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    target.writeInt32BE(x | 0, at);
  }
  for (; at < end; at++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    target[at] = x & 0xff;
  }
}

/** Reads the identity fields of a payload into `out`; false if the value is too short to carry them. */
export function readPayloadIdentity(value: Buffer, out: PayloadIdentity): boolean {
  if (value.length < PAYLOAD_HEADER_BYTES) return false;
  out.producer = value.readUInt32BE(0);
  out.partition = value.readUInt32BE(4);
  out.sequence = value.readUInt32BE(8);
  return true;
}
