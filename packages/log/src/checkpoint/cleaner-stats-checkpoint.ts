// CleanerStatsCheckpoint: the data directory's `cleaner-stats` file, what the
// log cleaner reports of each compacted log across restarts (issue 20): when
// its last pass finished cleaning and how many bytes its passes saved in all.
// seglog's own file (Kafka keeps these figures in memory only); the cleaner's
// progress proper stays in `cleaner-offset-checkpoint`.
//
// On-disk format: CheckpointFile version 0 (so written tmp, fdatasync, rename,
// directory fsync), one line per log, sorted by topic then partition:
//   "<topic> <partition> <lastCleanMs> <bytesSaved>"
// Invariants (checked on read, SEGLOG_ERR_CHECKPOINT_CORRUPT otherwise): the
// topic is a legal Kafka topic name, the partition a non-negative int32,
// lastCleanMs a safe integer ≥ -1 (-1: no pass has finished cleaning yet),
// bytesSaved a non-negative safe integer. The figures are reports, never
// used to decide what to clean: a missing or unreadable file only makes them
// start over at zero (the cleaner keeps the error and says so).

import { assert } from '@seglog/common';
import type { Io } from '@seglog/io';
import { parseJavaSafeLong } from './checkpoint-file.js';
import type { CheckpointFormat } from './checkpoint-file.js';
import { PartitionCheckpoint, parseTopicPartition } from './partition-checkpoint.js';
import { FileNames } from '../file-names.js';

export const CLEANER_STATS_FILE = FileNames.cleanerStats;

export interface CleanerStatsEntry {
  readonly topic: string;
  readonly partition: number;
  /** When the last pass that finished cleaning started (ms), or -1. */
  readonly lastCleanMs: number;
  /** Bytes saved by every pass so far. */
  readonly bytesSaved: number;
}

const CLEANER_STATS_VERSION = 0;

export const cleanerStatsFormat: CheckpointFormat<CleanerStatsEntry> = {
  version: CLEANER_STATS_VERSION,
  format: (entry) => `${entry.topic} ${entry.partition} ${entry.lastCleanMs} ${entry.bytesSaved}`,
  parse(fields) {
    if (fields.length !== 4) return `expected 4 fields, found ${fields.length}`;
    const [topic, partitionText, lastCleanText, bytesText] = fields as [string, string, string, string];
    const tp = parseTopicPartition(topic, partitionText);
    if (typeof tp === 'string') return tp;
    const { partition } = tp;
    const lastCleanMs = parseJavaSafeLong(lastCleanText);
    if (lastCleanMs === undefined || lastCleanMs < -1) return `last clean time ${JSON.stringify(lastCleanText)} is not a safe integer ≥ -1`;
    const bytesSaved = parseJavaSafeLong(bytesText);
    if (bytesSaved === undefined || bytesSaved < 0) return `bytes saved ${JSON.stringify(bytesText)} is not a non-negative safe integer`;
    return { topic, partition, lastCleanMs, bytesSaved };
  },
};

export class CleanerStatsCheckpoint extends PartitionCheckpoint<CleanerStatsEntry> {
  constructor(io: Io, path: string) {
    super(io, path, cleanerStatsFormat, (entry) => {
      assert(Number.isSafeInteger(entry.lastCleanMs) && entry.lastCleanMs >= -1, 'CleanerStatsCheckpoint.write: lastCleanMs must be -1 or a time');
      assert(Number.isSafeInteger(entry.bytesSaved) && entry.bytesSaved >= 0, 'CleanerStatsCheckpoint.write: bytesSaved must be a non-negative safe integer');
    });
  }

  /** Entries keyed by partition directory name (`<topic>-<partition>`); a later duplicate wins. */
  static toMap(entries: readonly CleanerStatsEntry[]): Map<string, CleanerStatsEntry> {
    const map = new Map<string, CleanerStatsEntry>();
    for (const entry of entries) map.set(FileNames.partitionDirName(entry.topic, entry.partition), entry);
    return map;
  }
}
