// OffsetCheckpoint: the per-data-directory offset checkpoints
// (recovery-point-offset-checkpoint, log-start-offset-checkpoint,
// replication-offset-checkpoint), reference/kafka-storage.md §9.
//
// On-disk format: CheckpointFile version 0, one line per partition:
//   "<topic> <partition> <offset>"
// Invariants (checked on read, SEGLOG_ERR_CHECKPOINT_CORRUPT otherwise): the
// topic is a legal Kafka topic name, the partition a non-negative int32, the
// offset a non-negative safe integer. Entries are written sorted by topic then
// partition, so equal maps give byte-identical files. Kafka does not reject
// duplicate partitions; neither do we (the last one wins in toMap()).

import { assert } from '@seglog/common';
import type { Io } from '@seglog/io';
import { parseJavaSafeLong } from './checkpoint-file.js';
import type { CheckpointFormat } from './checkpoint-file.js';
import { PartitionCheckpoint, parseTopicPartition } from './partition-checkpoint.js';

export interface OffsetCheckpointEntry {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
}

const OFFSET_CHECKPOINT_VERSION = 0;

export const offsetCheckpointFormat: CheckpointFormat<OffsetCheckpointEntry> = {
  version: OFFSET_CHECKPOINT_VERSION,
  format: (entry) => `${entry.topic} ${entry.partition} ${entry.offset}`,
  parse(fields) {
    if (fields.length !== 3) return `expected 3 fields, found ${fields.length}`;
    const [topic, partitionText, offsetText] = fields as [string, string, string];
    const tp = parseTopicPartition(topic, partitionText);
    if (typeof tp === 'string') return tp;
    const { partition } = tp;
    const offset = parseJavaSafeLong(offsetText);
    if (offset === undefined || offset < 0) return `offset ${JSON.stringify(offsetText)} is not a non-negative safe integer`;
    return { topic, partition, offset };
  },
};

export class OffsetCheckpoint extends PartitionCheckpoint<OffsetCheckpointEntry> {
  constructor(io: Io, path: string) {
    super(io, path, offsetCheckpointFormat, (entry) => assert(Number.isSafeInteger(entry.offset) && entry.offset >= 0, 'OffsetCheckpoint.write: offset must be a non-negative safe integer'));
  }

  /** Entries keyed by partition directory name (`<topic>-<partition>`); a later duplicate wins. */
  static toMap(entries: readonly OffsetCheckpointEntry[]): Map<string, number> {
    const map = new Map<string, number>();
    for (const entry of entries) map.set(`${entry.topic}-${entry.partition}`, entry.offset);
    return map;
  }
}
