// Helpers for vectored writes that completed only partly.

/** Total bytes in `buffers`. */
export function iovecBytes(buffers: readonly Uint8Array[]): number {
  let total = 0;
  for (const b of buffers) total += b.byteLength;
  return total;
}

/**
 * The iovecs still to write after `written` bytes of `buffers` went out:
 * fully written buffers are dropped, a partly written one is sliced (a view,
 * no copy). Only called after a short write, so the allocation is off the
 * common path.
 */
export function advanceIovecs(buffers: readonly Uint8Array[], written: number): Uint8Array[] {
  let skip = written;
  let index = 0;
  while (index < buffers.length) {
    const length = (buffers[index] as Uint8Array).byteLength;
    if (skip < length) break;
    skip -= length;
    index++;
  }
  const rest: Uint8Array[] = [];
  for (let i = index; i < buffers.length; i++) {
    const b = buffers[i] as Uint8Array;
    rest.push(i === index && skip > 0 ? b.subarray(skip) : b);
  }
  return rest;
}
