// zstd (RFC 8878) written as one frame in segments through the streaming API
// of zstd-napi's binding: every segment is fed with ZSTD_e_flush (the CCtx
// ends its current block and emits everything it holds, keeping the window,
// so later segments still match against earlier ones); the last with
// ZSTD_e_end. The frame carries no content size (unknown when it starts), so
// readers decode it with the streaming decoder; the window is the level's
// (level 3: 2 MiB), under the 8 MiB floor our decoder accepts.
// Worst case per segment: raw blocks (3-byte header per <= 128 KiB) plus the
// frame header (<= 18 bytes) once and a last empty block (3 bytes).
// CCtx objects are pooled (a streaming CCtx at level 3 holds ~2-3 MiB), at
// most POOL_MAX kept.
import { assert } from '@seglog/common';
import type * as ZstdBinding from 'zstd-napi/binding.js';
import { zstd } from '../codecs/zstd-binding.js';
import { Codec } from '../../compression.js';
import { ZSTD_LEVEL_DEFAULT, ZSTD_LEVEL_MAX, ZSTD_LEVEL_MIN, zstdCompressBound } from '../codecs/zstd.js';
import type { StreamCompressor } from './stream-compressor.js';

// Enum values are read from the loaded module: the .d.ts numbering differs
// from the native one (CODECS.md).

const FRAME_HEADER_BYTES_MAX = 18;
const BLOCK_HEADER_BYTES = 3;
const BLOCK_BYTES_MAX = 128 * 1024;
/** Per flushed segment, beyond its raw blocks: room for an extra block header or two. */
const SEGMENT_SLACK_BYTES = 8;
/** Last (empty) block 3 + a content checksum 4 (we do not enable it) + slack. */
const END_BYTES = 16;
const POOL_MAX = 4;
const pool: ZstdBinding.CCtx[] = [];

export class ZstdStream implements StreamCompressor {
  readonly codec = Codec.zstd;
  outputBytes: number;
  private readonly chunks: Uint8Array[];
  private context: ZstdBinding.CCtx | null;

  constructor(level: number | undefined) {
    const resolved = level === undefined || level === 0 ? ZSTD_LEVEL_DEFAULT : level;
    assert(Number.isInteger(resolved), 'ZstdStream: level must be an integer');
    assert(resolved >= ZSTD_LEVEL_MIN && resolved <= ZSTD_LEVEL_MAX, 'ZstdStream: level out of range');
    const context = pool.pop() ?? new zstd.CCtx();
    context.reset(zstd.ResetDirective.sessionAndParameters);
    context.setParameter(zstd.CParameter.compressionLevel, resolved);
    this.context = context;
    this.chunks = [];
    this.outputBytes = 0;
  }

  /**
   * Worst case = committed + the frame header if nothing is written yet +
   * the pending bytes as raw blocks (3-byte header per <= 128 KiB block, plus
   * slack) + the frame end (an empty last block; no checksum). Monotone like
   * the gzip bound: bound(0) after flush(k) <= bound(k) before it.
   */
  bound(pendingBytes: number): number {
    const header = this.outputBytes === 0 ? FRAME_HEADER_BYTES_MAX : 0;
    const segment = pendingBytes === 0 ? 0 : pendingBytes + BLOCK_HEADER_BYTES * Math.ceil(pendingBytes / BLOCK_BYTES_MAX) + SEGMENT_SLACK_BYTES;
    return this.outputBytes + header + segment + END_BYTES;
  }

  flush(input: Uint8Array): void {
    if (input.length === 0) return;
    this.segment(input, zstd.EndDirective.flush);
  }

  finish(input: Uint8Array): readonly Uint8Array[] {
    this.segment(input, zstd.EndDirective.end);
    this.release();
    return this.chunks;
  }

  dispose(): void {
    // A context that failed mid-stream is dropped, not pooled.
    this.context = null;
  }

  private segment(input: Uint8Array, directive: ZstdBinding.EndDirective): void {
    const context = this.context;
    assert(context !== null, 'ZstdStream: used after finish or dispose');
    let output = Buffer.allocUnsafe(zstdCompressBound(input.length) + FRAME_HEADER_BYTES_MAX + END_BYTES);
    let produced = 0;
    let consumed = 0;
    for (;;) {
      const [remaining, producedNow, consumedNow] = context.compressStream2(output.subarray(produced), input.subarray(consumed), directive);
      produced += producedNow;
      consumed += consumedNow;
      if (remaining === 0 && consumed === input.length) break;
      if (produced === output.length) {
        // Only if zstd broke its own bound: grow and let the builder's size check decide.
        const grown = Buffer.allocUnsafe(output.length * 2);
        output.copy(grown, 0, 0, produced);
        output = grown;
      }
    }
    // Exact-size copy: the segment stays until seal, the slack should not.
    const chunk = Buffer.from(output.subarray(0, produced));
    this.chunks.push(chunk);
    this.outputBytes += produced;
  }

  private release(): void {
    const context = this.context;
    this.context = null;
    if (context !== null && pool.length < POOL_MAX) pool.push(context);
  }
}
