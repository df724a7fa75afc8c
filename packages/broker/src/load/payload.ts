// Deterministic record payloads, so the consume phase can verify content
// without keeping a copy of what was sent. A value of `length` bytes
// (length >= PAYLOAD_HEADER_BYTES):
//
//   [0..4)   producer index (uint32 BE, 0-based in this run)
//   [4..8)   partition (uint32 BE)
//   [8..12)  sequence (uint32 BE): the record's 0-based number among this
//            producer's records of this partition (equal to the Kafka
//            producer sequence when idempotent)
//   [12..)   filler: xorshift32 stream seeded from the three fields above
//
// Same (producer, partition, sequence, length) → same bytes, always.

import { assert } from '@seglog/common';

export const PAYLOAD_HEADER_BYTES = 12;

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
export function fillPayload(target: Buffer, position: number, length: number, identity: Readonly<PayloadIdentity>): void {
  assert(length >= PAYLOAD_HEADER_BYTES, 'fillPayload: length below the payload header');
  assert(position + length <= target.length, 'fillPayload: target too small');
  target.writeUInt32BE(identity.producer, position);
  target.writeUInt32BE(identity.partition, position + 4);
  target.writeUInt32BE(identity.sequence, position + 8);
  let x = seedOf(identity.producer, identity.partition, identity.sequence);
  const end = position + length;
  let at = position + PAYLOAD_HEADER_BYTES;
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
