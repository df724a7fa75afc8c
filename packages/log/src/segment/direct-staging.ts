// DirectStaging: the aligned staging memory of one DirectSegmentWriter
// (direct-segment-writer.ts, whose format it serves): which arena chunks the
// writer holds, which file pages their memory maps, and the tail page that a
// write ending inside it leaves to be rewritten.
//
// Layout: a "region" maps chunk memory [memBase, …) linearly onto file bytes
// [fileBase, stagedEnd), fileBase page-aligned; bytes below dispatchedEnd
// are in an issued write (or were in the file before). Regions with
// undispatched bytes are kept oldest first; the last is the head, where new
// bytes are staged.
//
// Invariants:
// - At least one chunk is held for the writer's life (acquired in the
//   constructor, SEGLOG_ERR_LOG_STAGING_EXHAUSTED when none is free), at
//   most `maxChunks`; a chunk goes back to the arena when no region and no
//   in-flight write references it (refs = 0).
// - Memory an in-flight write reads ([0, frozenEnd) of its chunk) is never
//   modified: new bytes for a page a write is reading are staged after the
//   frozen end, at the start of an idle chunk, or in a fresh chunk, with the
//   page's valid prefix copied there first (pageCopies counts the copies;
//   Redpanda #28249, #31306).
// - A full chunk ends on a page boundary; a frozen page was fully
//   dispatched.

import { assert, SeglogError } from '@seglog/common';
import type { AlignedArena } from '@seglog/io';

/** No arena chunk was free for a new direct writer: the Log falls back to buffered writes for this segment. Retriable. */
export function stagingExhausted(path: string, chunkCount: number): SeglogError {
  return new SeglogError('SEGLOG_ERR_LOG_STAGING_EXHAUSTED', `no staging chunk free for a direct writer of ${path} (arena of ${chunkCount} chunks)`, {
    context: { path, chunkCount },
  });
}

export class StagingChunk {
  readonly buffer: Buffer;
  /** Regions and in-flight writes using the chunk; released to the arena at 0. */
  refs: number;
  /** In-flight writes reading the chunk. */
  writes: number;
  /** Memory offset below which some in-flight write may read (0 when none). */
  frozenEnd: number;

  constructor(buffer: Buffer) {
    this.buffer = buffer;
    this.refs = 0;
    this.writes = 0;
    this.frozenEnd = 0;
  }
}

/** Chunk memory [memBase, ...) holds file bytes [fileBase, stagedEnd). */
export class StagingRegion {
  readonly chunk: StagingChunk;
  memBase: number;
  fileBase: number;
  stagedEnd: number;
  /** Bytes below this are in an issued write (or were in the file before). */
  dispatchedEnd: number;

  constructor(chunk: StagingChunk, memBase: number, fileBase: number, end: number) {
    this.chunk = chunk;
    this.memBase = memBase;
    this.fileBase = fileBase;
    this.stagedEnd = end;
    this.dispatchedEnd = end;
  }

  memPos(position: number): number {
    return this.memBase + (position - this.fileBase);
  }
}

export class DirectStaging {
  private readonly arena: AlignedArena;
  readonly alignment: number;
  readonly chunkBytes: number;
  private readonly maxChunks: number;
  /** Regions with undispatched bytes, oldest first; the last is the head (staging target). */
  readonly regions: StagingRegion[];
  /** Arena chunks held now. */
  chunksHeld: number;
  /** Tail-page copies to fresh memory (metrics). */
  pageCopies: number;

  /** Holds one chunk, its head region starting at `startPosition` (its page's bytes below it are hydrated by the writer). */
  constructor(arena: AlignedArena, options: { readonly alignment: number; readonly maxChunks: number; readonly startPosition: number; readonly path: string }) {
    this.arena = arena;
    this.alignment = options.alignment;
    this.chunkBytes = arena.chunkBytes;
    this.maxChunks = options.maxChunks;
    const buffer = arena.acquire();
    if (buffer === null) throw stagingExhausted(options.path, arena.chunkCount);
    const chunk = new StagingChunk(buffer);
    chunk.refs = 1;
    this.regions = [new StagingRegion(chunk, 0, this.alignDown(options.startPosition), options.startPosition)];
    this.chunksHeld = 1;
    this.pageCopies = 0;
  }

  head(): StagingRegion {
    return this.regions[this.regions.length - 1] as StagingRegion;
  }

  alignDown(position: number): number {
    return position - (position % this.alignment);
  }

  alignUp(position: number): number {
    const rest = position % this.alignment;
    return rest === 0 ? position : position + this.alignment - rest;
  }

  /** Whether `bytes` more fit in staging now (the head's room plus chunks still free). Conservative: true means it fits. */
  fits(bytes: number): boolean {
    const head = this.head();
    const chunk = head.chunk;
    const mem = head.memPos(head.stagedEnd);
    let room: number;
    if (chunk.writes > 0 && mem < chunk.frozenEnd) room = Math.max(0, this.chunkBytes - chunk.frozenEnd - (head.stagedEnd - this.alignDown(head.stagedEnd)));
    else room = this.chunkBytes - mem;
    if (room >= bytes) return true;
    const spare = Math.min(this.maxChunks - this.chunksHeld, this.arena.available);
    return room + spare * (this.chunkBytes - this.alignment) >= bytes;
  }

  /** Copies buffer[from..] into staging as far as memory allows; returns how far it got. */
  stage(buffer: Buffer, from: number): number {
    let at = from;
    while (at < buffer.length && this.makeRoom()) {
      const head = this.head();
      const mem = head.memPos(head.stagedEnd);
      const n = Math.min(this.chunkBytes - mem, buffer.length - at);
      buffer.copy(head.chunk.buffer, mem, at, at + n);
      head.stagedEnd += n;
      at += n;
    }
    return at;
  }

  /**
   * Makes the head region able to take at least one byte at its staged end
   * without touching memory an in-flight write reads; false when no memory is
   * free (backpressure).
   */
  private makeRoom(): boolean {
    const head = this.head();
    const chunk = head.chunk;
    const mem = head.memPos(head.stagedEnd);
    const frozen = chunk.writes > 0 && mem < chunk.frozenEnd;
    if (mem < this.chunkBytes && !frozen) return true;
    const pageStart = this.alignDown(head.stagedEnd);
    const prefix = head.stagedEnd - pageStart;
    // A full chunk ends on a page boundary; a frozen page was fully dispatched.
    assert(!frozen || head.dispatchedEnd === head.stagedEnd, 'DirectSegmentWriter: a frozen page holds undispatched bytes');
    if (frozen && chunk.frozenEnd + this.alignment <= this.chunkBytes) {
      this.moveHead(chunk, chunk.frozenEnd, pageStart, prefix);
      return true;
    }
    if (chunk.refs === 1 && this.regions.length === 1 && head.dispatchedEnd === head.stagedEnd) {
      // Idle chunk, everything in it written: rewind to its start.
      if (prefix > 0) chunk.buffer.copyWithin(0, head.memPos(pageStart), mem);
      if (prefix > 0) this.pageCopies++;
      head.memBase = 0;
      head.fileBase = pageStart;
      return true;
    }
    if (this.chunksHeld >= this.maxChunks) return false;
    const buffer = this.arena.acquire();
    if (buffer === null) return false;
    this.chunksHeld++;
    this.moveHead(new StagingChunk(buffer), 0, pageStart, prefix);
    return true;
  }

  /** Starts a new head region at chunk memory `memBase` for the page at `pageStart`, carrying its first `prefix` bytes. */
  private moveHead(chunk: StagingChunk, memBase: number, pageStart: number, prefix: number): void {
    const old = this.head();
    const region = new StagingRegion(chunk, memBase, pageStart, old.stagedEnd);
    if (prefix > 0) {
      old.chunk.buffer.copy(chunk.buffer, memBase, old.memPos(pageStart), old.memPos(old.stagedEnd));
      this.pageCopies++;
    }
    chunk.refs++;
    this.regions.push(region);
    if (old.dispatchedEnd === old.stagedEnd) this.dropRegion(this.regions.length - 2);
  }

  dropRegion(index: number): void {
    const region = this.regions[index] as StagingRegion;
    this.regions.splice(index, 1);
    this.unref(region.chunk);
  }

  unref(chunk: StagingChunk): void {
    chunk.refs--;
    assert(chunk.refs >= 0, 'DirectSegmentWriter: chunk released twice');
    if (chunk.refs > 0) return;
    this.arena.release(chunk.buffer);
    this.chunksHeld--;
  }

  /** Drops every region; chunks still read by an in-flight write go back when it settles. */
  releaseAll(): void {
    while (this.regions.length > 0) this.dropRegion(this.regions.length - 1);
  }
}
