// A small seeded PRNG (sfc32, seeded through splitmix32). SimIo draws every
// random choice from one of these so that a run replays exactly from its seed;
// Math.random is never used. Not cryptographic.

import { assert } from '@seglog/common';

function splitmix32(state: number): number {
  let z = (state + 0x9e3779b9) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    assert(Number.isSafeInteger(seed), 'Prng: seed must be a safe integer');
    const lo = seed >>> 0;
    const hi = Math.floor(seed / 0x1_0000_0000) >>> 0;
    this.a = splitmix32(lo);
    this.b = splitmix32(this.a ^ hi);
    this.c = splitmix32(this.b + 1);
    this.d = 1;
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.nextUint32() / 0x1_0000_0000;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    assert(Number.isSafeInteger(n) && n > 0, 'Prng.int: n must be a positive safe integer');
    return Math.floor(this.float() * n);
  }

  chance(probability: number): boolean {
    return probability > 0 && this.float() < probability;
  }

  fill(bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length; i++) bytes[i] = this.nextUint32() & 0xff;
  }

  /** A derived seed, to start an independent stream (a recovered SimIo, a crash). */
  fork(): number {
    return this.nextUint32() * 0x20_0000 + (this.nextUint32() >>> 11);
  }
}
