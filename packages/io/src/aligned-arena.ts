// AlignedArena: a fixed set of page-aligned, equally sized chunks for O_DIRECT
// staging (node-platform.md §1.1, §5.4). Ordinary Buffers are 16-byte aligned
// and pass O_DIRECT only by chance; WebAssembly.Memory and a private mmap of
// /dev/zero are page-aligned every time.
//
// - Bounded: capacity = chunkBytes × chunkCount, allocated once in the
//   constructor, never grown (growing a WebAssembly.Memory would detach every
//   chunk handed out).
// - Pre-touched: every page is written at creation, because first-touch writes
//   run at ~0.3 GB/s against 7-9 GB/s for touched memory on the reference VM
//   (§5.1).
// - Reused: acquire() pops a free chunk (the same Buffer object each time, so
//   no allocation) and returns null when none is free — the caller sees
//   exhaustion synchronously and decides whether to wait or fail. release()
//   takes back exactly a chunk this arena handed out; releasing twice or a
//   foreign buffer is an assertion failure. With VERIFY, released chunks are
//   poisoned (0xA5) so use after release shows up as garbage.
// - The arena's memory is registered as aligned, so NodeIo and SimIo check the
//   address alignment of its chunks (and of views into them) exactly.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import { assert, VERIFY } from '@seglog/common';
import { registerAlignedMemory } from './internal/aligned-memory.js';
import { WASM_PAGE_BYTES, WASM_PAGES_MAX, wasmMemory } from './internal/wasm-memory.js';

export const ArenaSource = {
  /** WebAssembly.Memory: pure JS, no native dependency (default). At most 4 GiB. */
  wasm: 'wasm',
  /** A private mapping of /dev/zero through @riaskov/mmap-io. Freed only when garbage-collected. */
  mmap: 'mmap',
} as const;
export type ArenaSource = (typeof ArenaSource)[keyof typeof ArenaSource];

export interface AlignedArenaOptions {
  /** Bytes per chunk; a multiple of 4096. */
  readonly chunkBytes: number;
  readonly chunkCount: number;
  readonly source?: ArenaSource;
}

const PAGE_BYTES = 4096;
const POISON = 0xa5;

interface MmapIo {
  map(size: number, protection: number, flags: number, fd: number, offset?: number): Buffer;
  readonly PROT_READ: number;
  readonly PROT_WRITE: number;
  readonly MAP_PRIVATE: number;
  readonly PAGESIZE: number;
}

function mapZeroes(bytes: number): { memory: Uint8Array; alignment: number } {
  const mmap = createRequire(import.meta.url)('@riaskov/mmap-io') as MmapIo;
  const fd = fs.openSync('/dev/zero', 'r+');
  try {
    const memory = mmap.map(bytes, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE, fd, 0);
    assert(memory.byteOffset === 0, 'AlignedArena: an mmap Buffer must start at its ArrayBuffer');
    return { memory, alignment: mmap.PAGESIZE };
  } finally {
    fs.closeSync(fd);
  }
}

export class AlignedArena {
  readonly chunkBytes: number;
  readonly chunkCount: number;
  readonly source: ArenaSource;
  /** Address alignment of every chunk (the page size). */
  readonly alignment: number;
  private readonly chunks: Buffer[];
  private readonly free: Int32Array;
  private freeCount: number;
  private readonly inUse: Uint8Array;
  /** acquire() calls that found no free chunk. */
  exhausted: number;

  constructor(options: AlignedArenaOptions) {
    const { chunkBytes, chunkCount } = options;
    assert(Number.isSafeInteger(chunkBytes) && chunkBytes > 0 && chunkBytes % PAGE_BYTES === 0, 'AlignedArena: chunkBytes must be a positive multiple of 4096');
    assert(Number.isSafeInteger(chunkCount) && chunkCount > 0, 'AlignedArena: chunkCount must be positive');
    const totalBytes = chunkBytes * chunkCount;
    this.chunkBytes = chunkBytes;
    this.chunkCount = chunkCount;
    this.source = options.source ?? ArenaSource.wasm;

    let memory: Uint8Array;
    if (this.source === ArenaSource.wasm) {
      assert(totalBytes <= WASM_PAGE_BYTES * WASM_PAGES_MAX, 'AlignedArena: a wasm arena holds at most 4 GiB');
      memory = new Uint8Array(wasmMemory(totalBytes), 0, totalBytes);
      // V8 maps wasm memory page by page: 4096-aligned is what is certain.
      this.alignment = PAGE_BYTES;
    } else {
      const mapped = mapZeroes(totalBytes);
      memory = mapped.memory;
      this.alignment = mapped.alignment;
    }
    registerAlignedMemory(memory.buffer, this.alignment);
    // Pre-touch: write every page now, not on the hot path (§5.1).
    memory.fill(0);

    this.chunks = [];
    this.free = new Int32Array(chunkCount);
    this.inUse = new Uint8Array(chunkCount);
    for (let i = 0; i < chunkCount; i++) {
      this.chunks.push(Buffer.from(memory.buffer, memory.byteOffset + i * chunkBytes, chunkBytes));
      this.free[i] = chunkCount - 1 - i;
    }
    this.freeCount = chunkCount;
    this.exhausted = 0;
  }

  /** Chunks free to acquire. */
  get available(): number {
    return this.freeCount;
  }

  /** A free chunk (its previous contents are unspecified), or null when every chunk is in use. */
  acquire(): Buffer | null {
    if (this.freeCount === 0) {
      this.exhausted++;
      return null;
    }
    this.freeCount--;
    const index = this.free[this.freeCount] as number;
    assert(this.inUse[index] === 0, 'AlignedArena.acquire: free chunk marked in use');
    this.inUse[index] = 1;
    return this.chunks[index] as Buffer;
  }

  /** Returns a chunk acquired from this arena. */
  release(chunk: Buffer): void {
    const first = this.chunks[0] as Buffer;
    assert(chunk.buffer === first.buffer, 'AlignedArena.release: chunk is not from this arena');
    const index = (chunk.byteOffset - first.byteOffset) / this.chunkBytes;
    assert(Number.isInteger(index) && index >= 0 && index < this.chunkCount, 'AlignedArena.release: not a chunk boundary');
    assert(this.chunks[index] === chunk, 'AlignedArena.release: pass the chunk itself, not a view of it');
    assert(this.inUse[index] === 1, 'AlignedArena.release: chunk released twice');
    this.inUse[index] = 0;
    if (VERIFY) chunk.fill(POISON);
    this.free[this.freeCount] = index;
    this.freeCount++;
  }
}
