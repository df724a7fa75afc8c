// createStreamCompressor: picks the StreamCompressor for a codec (the contract
// every one keeps is in stream-compressor.ts). A module of its own so that the
// compressors can import the StreamCompressor type without an import circle.
import { assert } from '@seglog/common';
import { Codec, type CodecId } from '../../compression.js';
import { BlockStream } from './block-stream.js';
import { GzipStream } from './gzip-stream.js';
import type { StreamCompressor } from './stream-compressor.js';
import { ZstdStream } from './zstd-stream.js';

export function createStreamCompressor(codec: CodecId, level: number | undefined): StreamCompressor {
  switch (codec) {
    case Codec.gzip:
      return new GzipStream(level);
    case Codec.zstd:
      return new ZstdStream(level);
    case Codec.none:
    case Codec.snappy:
    case Codec.lz4:
      return new BlockStream(codec);
    default:
      assert(false, 'createStreamCompressor: codec must be 0..4');
      throw new Error('unreachable');
  }
}
