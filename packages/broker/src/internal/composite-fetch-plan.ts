// CompositeFetchPlan: one response frame as a WritableFetchPlan for
// @seglog/fetch's writeFetch. The encoder hands the frame over as parts:
// Buffers (size prefix, header, fields) and RecordsRefs (one FetchPlan per
// partition with records). Here the Buffers become inline parts and each
// plan's own parts are spliced in place, so record bytes go from the plan's
// file ranges (sendfile / pread) or tail-cache slices straight to the socket.
//
// Invariants: totalBytes equals the frame's size; release() releases every
// plan exactly once (idempotent), whichever way the write ends.

import { assert } from '@seglog/common';
import type { WritableFetchPart, WritableFetchPlan } from '@seglog/fetch';
import type { MessagePart } from '@seglog/protocol';

export class CompositeFetchPlan implements WritableFetchPlan {
  readonly parts: readonly WritableFetchPart[];
  readonly totalBytes: number;
  /** The frame's first bytes (size prefix and header), written before the parts. */
  readonly header: Buffer;
  private readonly plans: readonly WritableFetchPlan[];
  private released: boolean;

  constructor(frameParts: readonly MessagePart[]) {
    const first = frameParts[0];
    assert(first !== undefined && Buffer.isBuffer(first), 'CompositeFetchPlan: a frame starts with its header buffer');
    const parts: WritableFetchPart[] = [];
    const plans: WritableFetchPlan[] = [];
    let total = 0;
    for (let i = 1; i < frameParts.length; i++) {
      const part = frameParts[i] as MessagePart;
      if (Buffer.isBuffer(part)) {
        parts.push({ kind: 'inline', buffer: part });
        total += part.length;
        continue;
      }
      const plan = part as WritableFetchPlan;
      assert(Array.isArray(plan.parts) && typeof plan.release === 'function', 'CompositeFetchPlan: records part is not a fetch plan');
      for (const inner of plan.parts) parts.push(inner);
      plans.push(plan);
      total += plan.totalBytes;
    }
    this.parts = parts;
    this.totalBytes = total;
    this.header = first;
    this.plans = plans;
    this.released = false;
  }

  get planCount(): number {
    return this.plans.length;
  }

  release(): Promise<void> {
    if (this.released) return Promise.resolve();
    this.released = true;
    return Promise.all(this.plans.map((plan) => plan.release())).then(() => undefined);
  }
}

/** Releases the fetch plans among a frame's parts (a response that will never be written). */
export function releaseFrameParts(frameParts: readonly MessagePart[]): Promise<void> {
  const pending: Promise<void>[] = [];
  for (const part of frameParts) {
    if (Buffer.isBuffer(part)) continue;
    const plan = part as Partial<WritableFetchPlan>;
    if (typeof plan.release === 'function') pending.push(plan.release());
  }
  return Promise.all(pending).then(() => undefined);
}
