// The descriptor budget (issue 24): what the broker may keep open under the
// process's soft RLIMIT_NOFILE, checked at start-up and on every topic or
// partition creation.
//
// Budget: every partition's active segment holds up to 4 descriptors (.log,
// .index, .timeindex, .txnindex), the LogManager's handle cache holds up to
// maxOpenSegmentFiles idle sealed-segment descriptors, and a fixed margin
// stays free for sockets, the data directory's lock and checkpoints, and
// Node itself (about 40 before main runs). The limit is read from
// /proc/self/limits ("Max open files", soft column); where that file does not
// exist (not Linux) or says "unlimited", there is no check.
//
// An operator who sets no maxOpenSegmentFiles gets a handle cache sized to
// the limit (autoMaxOpenSegmentFiles: the default 1000 where it fits, else
// what the limit leaves, at least 16), so a default broker starts under the
// common `ulimit -n 1024`; an explicit value is taken as given.
//
// Start-up: when the limit is below the budget for the partitions found on
// disk, Broker.start refuses with SEGLOG_ERR_BROKER_FD_LIMIT (main.ts prints
// one line saying what to raise or lower) before opening any log, instead of
// failing halfway with EMFILE.
//
// The internal topics the coordinators create at start-up (__consumer_offsets,
// __transaction_state) count when missing on disk: reserved from the start,
// never refused (TopicStore.createInternal takes over their reservation).
//
// Admission: a creation of n partitions first reserves n × 4 descriptors;
// when the partitions open, plus those being created, plus the new ones would
// not fit, it is refused with SEGLOG_ERR_BROKER_FD_BUDGET (Kafka
// POLICY_VIOLATION, the reason in the message) before any directory is made.
// The reservation is released when the creation ends (the partitions then
// count as open ones, or were not made).

import { readFileSync, readdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { SeglogError } from '@seglog/common';
import { DEFAULT_MAX_OPEN_SEGMENT_FILES, FileNames } from '@seglog/log';

/** Descriptors an active segment may hold: .log, .index, .timeindex, .txnindex. */
export const DESCRIPTORS_PER_PARTITION = 4;
/** Descriptors kept free for sockets, the lock file, checkpoints and Node's own. */
export const DESCRIPTOR_MARGIN = 128;

/**
 * The soft "Max open files" of a /proc/<pid>/limits text; null when the line
 * is missing or the limit is unlimited.
 */
export function parseSoftNoFileLimit(limits: string): number | null {
  const line = /^Max open files\s+(\S+)\s+(\S+)/m.exec(limits);
  if (line === null) return null;
  const soft = line[1] as string;
  if (!/^\d+$/.test(soft)) return null; // "unlimited"
  const n = Number(soft);
  return Number.isSafeInteger(n) ? n : null;
}

/** This process's soft open-file limit (Linux: /proc/self/limits); null when unknown or unlimited. */
export function readSoftNoFileLimit(): number | null {
  let text: string;
  try {
    text = readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return null; // not Linux: no check
  }
  return parseSoftNoFileLimit(text);
}

/** Descriptors this process has open now (Linux: /proc/self/fd); null when unknown. */
export function countOpenDescriptors(): number | null {
  try {
    return readdirSync('/proc/self/fd').length - 1; // less the descriptor readdir itself holds
  } catch {
    return null;
  }
}

export interface FdBudgetOptions {
  /** The soft open-file limit; null = unknown or unlimited (nothing is refused). */
  readonly limit: number | null;
  /** The handle cache's budget (LogManager maxOpenSegmentFiles). */
  readonly maxOpenSegmentFiles: number;
  /** Default DESCRIPTOR_MARGIN. */
  readonly margin?: number;
}

export class FdBudget {
  readonly limit: number | null;
  readonly maxOpenSegmentFiles: number;
  readonly margin: number;
  /** Partitions whose creation is admitted and still running, and the internal topics' still to be created. */
  private reservedPartitions: number;
  /** Internal topics the broker will create (start-up), by name → partitions, counted in reservedPartitions. */
  private readonly pendingInternal: Map<string, number>;

  constructor(options: FdBudgetOptions) {
    this.limit = options.limit;
    this.maxOpenSegmentFiles = options.maxOpenSegmentFiles;
    this.margin = options.margin ?? DESCRIPTOR_MARGIN;
    this.reservedPartitions = 0;
    this.pendingInternal = new Map();
  }

  /** Counts an internal topic the broker will create (its coordinator) as reserved until it is made. */
  expectInternal(topic: string, count: number): void {
    if (this.pendingInternal.has(topic)) return;
    this.pendingInternal.set(topic, count);
    this.reservedPartitions += count;
  }

  /**
   * Reserves an internal topic's partitions without refusing them (the
   * broker's own coordinators need them; start-up checked they fit):
   * replaces its expectInternal reservation. Returns the release.
   */
  reserveInternal(topic: string, count: number): () => void {
    const expected = this.pendingInternal.get(topic);
    if (expected !== undefined) {
      this.pendingInternal.delete(topic);
      this.reservedPartitions -= expected;
    }
    return this.reserve(count);
  }

  private reserve(count: number): () => void {
    this.reservedPartitions += count;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.reservedPartitions -= count;
    };
  }

  /** Descriptors the budget needs with `partitions` partitions open. */
  required(partitions: number): number {
    return partitions * DESCRIPTORS_PER_PARTITION + this.maxOpenSegmentFiles + this.margin;
  }

  /** Partitions being created (admitted, not finished). */
  get reserved(): number {
    return this.reservedPartitions;
  }

  /**
   * Throws SEGLOG_ERR_BROKER_FD_LIMIT when the limit is below the budget
   * for the `partitions` found in `dataDir`.
   */
  checkStartup(dataDir: string, found: number): void {
    if (this.limit === null) return;
    const internal = this.reservedPartitions;
    const partitions = found + internal;
    const required = this.required(partitions);
    if (this.limit >= required) return;
    const lower = partitions * DESCRIPTORS_PER_PARTITION + this.margin < this.limit
      ? `, or lower --max-open-segment-files to at most ${this.limit - partitions * DESCRIPTORS_PER_PARTITION - this.margin}`
      : '';
    throw new SeglogError('SEGLOG_ERR_BROKER_FD_LIMIT',
      `the open-file limit ${this.limit} is below the descriptor budget ${required} ` +
      `(${partitions} partitions${internal === 0 ? '' : `, ${internal} of them internal topics to create,`} × ${DESCRIPTORS_PER_PARTITION} for active segments + ${this.maxOpenSegmentFiles} max-open-segment-files + ${this.margin} for sockets and the runtime). ` +
      `Raise the open-file limit to at least ${required} (ulimit -n ${required}; LimitNOFILE=${required} under systemd)${lower}`,
      { context: { dir: dataDir, limit: this.limit, required, partitions, internal, maxOpenSegmentFiles: this.maxOpenSegmentFiles, margin: this.margin } });
  }

  /**
   * Admits the creation of `count` partitions of `topic` while `open`
   * partitions exist: reserves them and returns the release, or throws
   * SEGLOG_ERR_BROKER_FD_BUDGET (POLICY_VIOLATION) when they would not fit.
   */
  admit(topic: string, count: number, open: number): () => void {
    if (this.limit !== null) {
      const inUse = this.required(open + this.reservedPartitions);
      const needed = count * DESCRIPTORS_PER_PARTITION;
      const free = Math.max(0, this.limit - inUse);
      if (needed > free) {
        const fits = Math.floor(free / DESCRIPTORS_PER_PARTITION);
        throw new SeglogError('SEGLOG_ERR_BROKER_FD_BUDGET',
          `${count} new partitions of topic ${topic} need ${needed} file descriptors (${DESCRIPTORS_PER_PARTITION} each) but ${free} of the open-file limit ${this.limit} are free ` +
          `(${open + this.reservedPartitions} partitions use ${(open + this.reservedPartitions) * DESCRIPTORS_PER_PARTITION}, max-open-segment-files ${this.maxOpenSegmentFiles}, ${this.margin} kept for sockets); ` +
          `at most ${fits} more fit. Raise the broker's open-file limit (ulimit -n; LimitNOFILE=) or lower --max-open-segment-files`,
          { kafka: 'POLICY_VIOLATION', context: { topic, count, needed, free, limit: this.limit } });
      }
    }
    return this.reserve(count);
  }
}

/** The smallest handle cache the broker sizes by itself; below it, start-up refuses (see checkStartup). */
export const MIN_AUTO_MAX_OPEN_SEGMENT_FILES = 16;

/**
 * The handle-cache budget when the operator set none: the default (1000)
 * where the limit allows it, else what is left of the limit after the
 * partitions' active segments and the margin (a common `ulimit -n 1024`
 * must not refuse a default broker), never below
 * MIN_AUTO_MAX_OPEN_SEGMENT_FILES (then the start-up check refuses).
 */
export function autoMaxOpenSegmentFiles(limit: number | null, partitions: number): number {
  if (limit === null) return DEFAULT_MAX_OPEN_SEGMENT_FILES;
  const left = limit - partitions * DESCRIPTORS_PER_PARTITION - DESCRIPTOR_MARGIN;
  return Math.min(DEFAULT_MAX_OPEN_SEGMENT_FILES, Math.max(MIN_AUTO_MAX_OPEN_SEGMENT_FILES, left));
}

/** Live partition directories (`<topic>-<partition>`) in `dataDir`, and their topics. */
export async function scanPartitionDirs(dataDir: string): Promise<{ partitions: number; topics: Set<string> }> {
  let partitions = 0;
  const topics = new Set<string>();
  for (const entry of await readdir(dataDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    try {
      const parsed = FileNames.parsePartitionDirName(entry.name);
      if (parsed.state !== 'live') continue;
      partitions++;
      topics.add(parsed.topic);
    } catch {
      // not a partition directory: the LogManager skips or refuses it
    }
  }
  return { partitions, topics };
}

/**
 * The broker's budget over `dataDir`, checked against the partitions found
 * there and the internal topics (name → partitions) the broker creates when
 * missing: throws SEGLOG_ERR_BROKER_FD_LIMIT when the limit is too low.
 */
export async function openFdBudget(dataDir: string, options: {
  readonly maxOpenSegmentFiles: number | null;
  readonly internalTopics: ReadonlyMap<string, number>;
  readonly limit?: number | null;
}): Promise<FdBudget> {
  const limit = options.limit === undefined ? readSoftNoFileLimit() : options.limit;
  const found = await scanPartitionDirs(dataDir);
  let internal = 0;
  for (const [topic, count] of options.internalTopics) if (!found.topics.has(topic)) internal += count;
  const budget = new FdBudget({ limit, maxOpenSegmentFiles: options.maxOpenSegmentFiles ?? autoMaxOpenSegmentFiles(limit, found.partitions + internal) });
  for (const [topic, count] of options.internalTopics) if (!found.topics.has(topic)) budget.expectInternal(topic, count);
  budget.checkStartup(dataDir, found.partitions);
  return budget;
}
