// A compressor that writes one codec payload (the bytes after the 61-byte
// batch header) in segments, for the compressed-size-bounded batch builder.
//
// Contract, shared by every codec:
// - `outputBytes` is exact: the bytes of payload committed so far (headers,
//   flushed segments). Nothing is buffered inside the compressor between
//   calls, so the builder always knows which records the payload holds.
// - `flush(input)` compresses `input` as the next segment and ends it on a
//   byte boundary the decoder can continue from (gzip: Z_SYNC_FLUSH; zstd:
//   ZSTD_e_flush; lz4/snappy: short blocks). It copies what it keeps.
// - `finish(input)` compresses `input` as the last segment, closes the
//   stream (gzip trailer, zstd last block, lz4 end mark) and returns every
//   output chunk in order; the compressor is unusable afterwards.
// - `bound(k)` is the worst case of `outputBytes` after `finish(k bytes)`,
//   i.e. assuming the k bytes do not compress at all (stored/raw blocks plus
//   per-block framing, the flush marker and the stream end). The builder
//   compares it with its limit; the sealed size is checked again after
//   finish, so a bound that is wrong demotes a batch, never ships an
//   oversized one. The bounds are checked on random input in
//   test/bounded-stream.test.ts.
import type { CodecId } from '../../compression.js';

export interface StreamCompressor {
  readonly codec: CodecId;
  readonly outputBytes: number;
  bound(pendingBytes: number): number;
  flush(input: Uint8Array): void;
  finish(input: Uint8Array): readonly Uint8Array[];
  /** Releases native resources without finishing (after a failure or a discarded trial). */
  dispose(): void;
}
