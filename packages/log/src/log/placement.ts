// Placement counters (ARCHITECTURE.md "Placement: on the caller or on the
// blocking pool"): how many appends and reads ran on the caller (the event
// loop, no await, no pool hop) and how many went to the BlockingPool, and
// why. One object per log, one shape, updated in place; LogManager sums them.
//
// An operation counts one reason: the first rule (in the order below) that
// sent it to the pool.

import type { BlockingPool } from '@seglog/io';

/** Why an append or a read was placed on the pool. */
export interface PlacementReasons {
  /** An earlier mutation (pooled append, truncation, flush(), …) of the log is still queued: appends complete in order. */
  pending: number;
  /** The log's active segment has no writer yet (opening) or is switching (roll, truncation). */
  init: number;
  /** A transaction marker (coordinator control batch). */
  control: number;
  /** A transactional producer batch. */
  transactional: number;
  /** LogAppendTime: the batch is restamped (CRC recomputed). */
  timestamp: number;
  /** The leader epoch changes (checkpoint write), or the epoch checkpoint has an unwritten change. */
  epoch: number;
  /** The active segment must roll first. */
  roll: number;
  /** flush.messages reached: the append forces a flush. */
  flush: number;
  /** The segment's reservation must grow first. */
  reservation: number;
  /** The writer's queue (buffered) or staging memory (direct) has no room now. */
  room: number;
  /** Read: the offset is not in the active segment (sealed or reopened segments are read from the file). */
  sealed: number;
  /** Read: the tail cache does not hold the sparse-index floor entry and every following byte. */
  uncached: number;
  /** Pool work that found the pool's queue full after admission and ran without a slot. */
  overflow: number;
}

export interface PlacementMetrics {
  readonly append: { caller: number; pool: number };
  readonly read: { caller: number; pool: number };
  readonly reasons: PlacementReasons;
}

export type PlacementReason = keyof PlacementReasons;

export function newPlacementMetrics(): PlacementMetrics {
  return {
    append: { caller: 0, pool: 0 },
    read: { caller: 0, pool: 0 },
    reasons: { pending: 0, init: 0, control: 0, transactional: 0, timestamp: 0, epoch: 0, roll: 0, flush: 0, reservation: 0, room: 0, sealed: 0, uncached: 0, overflow: 0 },
  };
}

/** Adds `from` into `into` (LogManager's totals). */
export function addPlacement(into: PlacementMetrics, from: PlacementMetrics): void {
  into.append.caller += from.append.caller;
  into.append.pool += from.append.pool;
  into.read.caller += from.read.caller;
  into.read.pool += from.read.pool;
  for (const key of Object.keys(into.reasons) as PlacementReason[]) into.reasons[key] += from.reasons[key];
}

/**
 * A plain, deeply frozen copy of `from`: compare two phases by taking one
 * snapshot before and one after (the live counters change in place).
 */
export function snapshotPlacement(from: PlacementMetrics): PlacementMetrics {
  return Object.freeze({
    append: Object.freeze({ ...from.append }),
    read: Object.freeze({ ...from.read }),
    reasons: Object.freeze({ ...from.reasons }),
  });
}

/** What runOnPool needs: the pool and the counters of one log. */
export interface PoolPlacement {
  readonly pool: BlockingPool;
  readonly placement: PlacementMetrics;
}

/**
 * Runs `task` on the pool. Work already admitted is never refused later: if
 * the pool's queue filled up in between, it runs without a slot (counted).
 */
export function runOnPool<T>(where: PoolPlacement, task: () => Promise<T>, priority: number): Promise<T> {
  if (where.pool.hasRoom(priority)) return where.pool.submit(task, priority);
  where.placement.reasons.overflow++;
  return task();
}
