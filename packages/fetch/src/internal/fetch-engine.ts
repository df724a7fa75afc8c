// FetchEngine: walks one plan's parts in order and puts them on a FetchSink.
//
// - Coalesce (the whole response below coalesceBelowBytes under 'auto', or
//   everything under 'coalesce'): header, inline and file bytes are copied
//   (file bytes by pread) into a staging buffer; one write per full buffer,
//   so a small response is exactly one write.
// - Otherwise the header and inline parts are pushed zero-copy as slices of
//   a corked batch (≤ maxIovecs per writev). A file range goes by sendfile
//   (drain first, nothing else written until it settles) or is pread into a
//   staging buffer that joins the same batch, so the header leaves together
//   with the first body bytes. Two staging buffers per response: one is
//   written while the next is read; a buffer is reused only after the write
//   of its last slice completed.
// - Adjacent file parts that continue each other in the same file are sent
//   as one range (one sendfile / fewer preads).
// - Before the first byte, every file part is checked against its file's
//   current size: a truncated segment fails with
//   SEGLOG_ERR_FETCH_FILE_TRUNCATED and nothing written. A truncation racing
//   the response is caught by the short pread / short sendfile count: the
//   response fails with the same code; short or garbage bytes are never
//   passed off as the part.

import fs from 'node:fs';
import { assert } from '@seglog/common';
import { sendfile as nativeSendfile } from '@seglog/native';
import { FetchError, FetchErrorCode } from '../fetch-error.js';
import type { ResolvedFetchWriteOptions } from '../fetch-write-options.js';
import type { FileStrategyUsed, InlineStrategyUsed, WriteFetchResult } from '../fetch-write-result.js';
import type { SendfileLimiter } from '../sendfile-limiter.js';
import type { FetchFile, WritableFetchPart, WritableFetchPlan } from '../writable-fetch-plan.js';
import type { FetchSink } from './fetch-sink.js';
import type { StagingPool } from './staging-pool.js';

const PEER_GONE: ReadonlySet<string> = new Set(['EPIPE', 'ECONNRESET', 'ENOTCONN']);

export function truncatedError(file: FetchFile, position: number, length: number, available: number, bytesWritten: number): FetchError {
  return new FetchError(FetchErrorCode.fileTruncated,
    `fetch: ${file.path} holds ${available} of the ${length} bytes at position ${position} (truncated)`,
    { path: file.path, position, length, available, bytesWritten });
}

/** Checks every file part against its file's size now, before anything is written. */
export async function checkFileSizes(parts: readonly WritableFetchPart[]): Promise<void> {
  let last: FetchFile | null = null;
  let size = 0;
  for (const part of parts) {
    if (part.kind !== 'file' || part.length === 0) continue;
    const file = part.file.file;
    if (file !== last) {
      // fstat reads the inode, not the disk: ~1 µs on the loop, cheaper than a threadpool hop.
      size = file.fd >= 0 ? fs.fstatSync(file.fd).size : await file.size();
      last = file;
    }
    if (part.position + part.length > size) throw truncatedError(file, part.position, part.length, Math.max(0, size - part.position), 0);
  }
}

export class FetchEngine {
  private readonly sink: FetchSink;
  private readonly options: ResolvedFetchWriteOptions;
  private readonly limiter: SendfileLimiter;
  private readonly pool: StagingPool;
  private coalesceAll: boolean;
  private slot0: Buffer | null;
  private slot1: Buffer | null;
  private lastSequence0: number;
  private lastSequence1: number;
  private current: number;
  private stage: Buffer | null;
  private stageUsed: number;
  private stageEmitted: number;
  private sendfiles: number;
  private preads: number;
  private fallbacks: number;
  private slices: number;
  private usedSendfile: boolean;
  private usedPread: boolean;

  constructor(sink: FetchSink, options: ResolvedFetchWriteOptions, limiter: SendfileLimiter, pool: StagingPool) {
    this.sink = sink;
    this.options = options;
    this.limiter = limiter;
    this.pool = pool;
    this.coalesceAll = false;
    this.slot0 = null;
    this.slot1 = null;
    this.lastSequence0 = 0;
    this.lastSequence1 = 0;
    this.current = 0;
    this.stage = null;
    this.stageUsed = 0;
    this.stageEmitted = 0;
    this.sendfiles = 0;
    this.preads = 0;
    this.fallbacks = 0;
    this.slices = 0;
    this.usedSendfile = false;
    this.usedPread = false;
  }

  async run(header: Buffer, plan: WritableFetchPlan): Promise<WriteFetchResult> {
    const total = header.length + plan.totalBytes;
    await checkFileSizes(plan.parts);
    const strategy = this.options.strategy;
    this.coalesceAll = strategy === 'coalesce' || (strategy === 'auto' && total < this.options.coalesceBelowBytes);
    let inlineBytes = header.length;
    if (header.length > 0) await this.inline(header);
    const parts = plan.parts;
    let i = 0;
    while (i < parts.length) {
      const part = parts[i]!;
      if (part.kind === 'inline') {
        inlineBytes += part.buffer.length;
        if (part.buffer.length > 0) {
          const pending = this.inline(part.buffer);
          if (pending !== null) await pending;
        }
        i++;
        continue;
      }
      let end = part.position + part.length;
      let j = i + 1;
      for (; j < parts.length; j++) {
        const next = parts[j]!;
        if (next.kind !== 'file' || next.file !== part.file || next.position !== end) break;
        end += next.length;
      }
      if (end > part.position) await this.file(part.file.file, part.position, end - part.position);
      i = j;
    }
    if (this.emitStage()) await this.sink.flush();
    await this.sink.flush();
    await this.sink.waitCompleted(this.sink.pushed);
    this.returnStages();
    return this.result(total, inlineBytes, total - inlineBytes);
  }

  private result(total: number, inlineBytes: number, fileBytes: number): WriteFetchResult {
    let fileStrategy: FileStrategyUsed = null;
    if (fileBytes > 0) {
      if (this.coalesceAll) fileStrategy = 'coalesce';
      else if (this.usedSendfile) fileStrategy = this.usedPread ? 'sendfile+pread' : 'sendfile';
      else fileStrategy = 'pread';
    }
    const inlineStrategy: InlineStrategyUsed = inlineBytes === 0 ? null : this.coalesceAll ? 'coalesce' : 'writev';
    return {
      bytesWritten: total,
      inlineStrategy,
      fileStrategy,
      writes: this.sink.writes,
      slices: this.slices,
      sendfiles: this.sendfiles,
      preads: this.preads,
      sendfileFallbacks: this.fallbacks,
    };
  }

  /** Returns null when done synchronously (the common case), else a promise. */
  private inline(buffer: Buffer): Promise<void> | null {
    if (this.coalesceAll) {
      const stage = this.stage;
      if (stage === null || stage.length - this.stageUsed < buffer.length) return this.copyIn(buffer);
      buffer.copy(stage, this.stageUsed);
      this.stageUsed += buffer.length;
      return null;
    }
    if (this.stageUsed > this.stageEmitted) return this.inlineAfterStage(buffer);
    this.slices++;
    return this.sink.push(buffer) ? this.sink.flush() : null;
  }

  private async inlineAfterStage(buffer: Buffer): Promise<void> {
    if (this.emitStage()) await this.sink.flush();
    this.slices++;
    if (this.sink.push(buffer)) await this.sink.flush();
  }

  private async copyIn(buffer: Buffer): Promise<void> {
    let at = 0;
    while (at < buffer.length) {
      await this.ensureStage();
      const stage = this.stage!;
      const n = Math.min(buffer.length - at, stage.length - this.stageUsed);
      buffer.copy(stage, this.stageUsed, at, at + n);
      this.stageUsed += n;
      at += n;
      if (this.stageUsed === stage.length) {
        this.emitStage();
        await this.sink.flush();
      }
    }
  }

  private file(file: FetchFile, position: number, length: number): Promise<void> {
    if (this.coalesceAll) return this.preadIn(file, position, length);
    const strategy = this.options.strategy;
    const wanted = strategy === 'sendfile' || (strategy === 'auto' && length >= this.options.sendfileMinBytes);
    if (wanted && nativeSendfile !== null && this.sink.sendfileFd !== null && file.fd >= 0) {
      if (this.limiter.tryAcquire()) return this.sendfileRange(file, position, length);
      this.fallbacks++;
    }
    this.usedPread = true;
    return this.preadIn(file, position, length);
  }

  private async preadIn(file: FetchFile, position: number, length: number): Promise<void> {
    while (length > 0) {
      this.sink.check();
      await this.ensureStage();
      const stage = this.stage!;
      const n = Math.min(length, stage.length - this.stageUsed);
      const read = await file.pread(stage.subarray(this.stageUsed, this.stageUsed + n), position, n);
      this.preads++;
      if (read !== n) throw truncatedError(file, position, n, read, this.sink.bytesPushed);
      this.stageUsed += n;
      position += n;
      length -= n;
      if (this.stageUsed === stage.length) {
        this.emitStage();
        await this.sink.flush();
      }
    }
  }

  private async sendfileRange(file: FetchFile, position: number, length: number): Promise<void> {
    try {
      this.emitStage();
      await this.sink.flush();
      // Rule of the native sendfile: nothing queued in user space, and
      // nothing written until it settles (else the bytes interleave).
      await this.sink.waitEmpty();
      this.sink.check();
      let sent: number;
      try {
        sent = await nativeSendfile!(this.sink.sendfileFd!, file.fd, position, length, { idleTimeoutMs: this.options.sendfileIdleTimeoutMs });
      } catch (error) {
        throw this.sendfileError(error, file, position, length);
      }
      this.sendfiles++;
      this.usedSendfile = true;
      this.sink.bytesPushed += sent;
      if (sent !== length) throw truncatedError(file, position, length, sent, this.sink.bytesPushed);
      // The native call dup()s the socket fd: a socket destroyed meanwhile shows only now.
      this.sink.check();
    } finally {
      this.limiter.release();
    }
  }

  private sendfileError(error: unknown, file: FetchFile, position: number, length: number): unknown {
    const errno = (error as { errno?: unknown } | null)?.errno;
    const sentBefore = (error as { context?: { bytesSent?: unknown } } | null)?.context?.bytesSent;
    if (typeof sentBefore === 'number') this.sink.bytesPushed += sentBefore;
    if (typeof errno !== 'string') return error; // programmer error (bad argument): rethrow as is
    const context = { errno, path: file.path, position, length, bytesWritten: this.sink.bytesPushed };
    if (PEER_GONE.has(errno)) return new FetchError(FetchErrorCode.peerClosed, `fetch: peer closed the connection during sendfile (${errno})`, context, error);
    if (errno === 'ETIMEDOUT') return new FetchError(FetchErrorCode.peerTimeout, `fetch: sendfile made no progress for ${this.options.sendfileIdleTimeoutMs} ms`, context, error);
    return new FetchError(FetchErrorCode.writeFailed, `fetch: sendfile failed (${errno})`, context, error);
  }

  /** Makes `stage` a buffer with room: the other slot once its last write completed. */
  private ensureStage(): Promise<void> | void {
    if (this.stage !== null && this.stageUsed < this.stage.length) return;
    return this.nextStage();
  }

  private async nextStage(): Promise<void> {
    assert(this.stageUsed === this.stageEmitted, 'FetchEngine.nextStage: stage not emitted');
    if (this.stage !== null) this.current ^= 1;
    let buffer = this.current === 0 ? this.slot0 : this.slot1;
    if (buffer === null) {
      buffer = this.pool.acquire(this.options.preadChunkBytes);
      if (this.current === 0) this.slot0 = buffer;
      else this.slot1 = buffer;
    } else {
      await this.sink.waitCompleted(this.current === 0 ? this.lastSequence0 : this.lastSequence1);
    }
    this.stage = buffer;
    this.stageUsed = 0;
    this.stageEmitted = 0;
  }

  /** Pushes the stage's unsent bytes as one slice; true when the batch is full (flush). */
  private emitStage(): boolean {
    if (this.stage === null || this.stageUsed === this.stageEmitted) return false;
    const full = this.sink.push(this.stage.subarray(this.stageEmitted, this.stageUsed));
    this.slices++;
    this.stageEmitted = this.stageUsed;
    if (this.current === 0) this.lastSequence0 = this.sink.pushed;
    else this.lastSequence1 = this.sink.pushed;
    return full;
  }

  /** Only after every write completed: the buffers are ours again. */
  private returnStages(): void {
    if (this.slot0 !== null) this.pool.release(this.slot0);
    if (this.slot1 !== null) this.pool.release(this.slot1);
    this.slot0 = null;
    this.slot1 = null;
    this.stage = null;
  }
}
