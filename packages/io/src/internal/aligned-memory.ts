// Registry of memory known to start at an aligned address. JavaScript cannot
// see a buffer's address, but it can know that an ArrayBuffer came from a
// page-aligned source (a WebAssembly.Memory, an mmap). For a view into such
// memory the address alignment follows from its byteOffset alone, so SimIo
// and NodeIo can check O_DIRECT buffer alignment exactly for those views.
// For any other buffer the alignment is unknown: NodeIo leaves the check to
// the kernel (EINVAL), SimIo rejects it by default (see SimIoOptions).

const registry = new WeakMap<ArrayBufferLike, number>();

/** Records that `memory` starts at an address aligned to `alignment` (a power of two). */
export function registerAlignedMemory(memory: ArrayBufferLike, alignment: number): void {
  registry.set(memory, alignment);
}

/**
 * The largest power of two (capped at the base alignment) that the address of
 * `view` is known to be a multiple of, or 0 when its memory is not registered.
 */
export function knownAddressAlignment(view: Uint8Array): number {
  const base = registry.get(view.buffer);
  if (base === undefined) return 0;
  const offset = view.byteOffset;
  if (offset === 0) return base;
  const lowBit = offset & -offset;
  // For offsets of 2^31 and more `&` wraps; fall back to a division loop.
  if (offset >= 0x8000_0000) {
    let a = 1;
    while (a < base && offset % (a * 2) === 0) a *= 2;
    return a;
  }
  return Math.min(base, lowBit);
}
