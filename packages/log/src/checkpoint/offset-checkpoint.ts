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
import { CheckpointFile, parseJavaInt, parseJavaSafeLong } from './checkpoint-file.js';
import type { CheckpointFormat } from './checkpoint-file.js';
import { FileNames } from '../file-names.js';

export interface OffsetCheckpointEntry {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
}

const OFFSET_CHECKPOINT_VERSION = 0;

function topicError(topic: string): string | undefined {
  try {
    FileNames.validateTopic(topic);
    return undefined;
  } catch {
    return `illegal topic name ${JSON.stringify(topic)}`;
  }
}

export const offsetCheckpointFormat: CheckpointFormat<OffsetCheckpointEntry> = {
  version: OFFSET_CHECKPOINT_VERSION,
  format: (entry) => `${entry.topic} ${entry.partition} ${entry.offset}`,
  parse(fields) {
    if (fields.length !== 3) return `expected 3 fields, found ${fields.length}`;
    const [topic, partitionText, offsetText] = fields as [string, string, string];
    const badTopic = topicError(topic);
    if (badTopic !== undefined) return badTopic;
    const partition = parseJavaInt(partitionText);
    if (partition === undefined || partition < 0) return `partition ${JSON.stringify(partitionText)} is not a non-negative int32`;
    const offset = parseJavaSafeLong(offsetText);
    if (offset === undefined || offset < 0) return `offset ${JSON.stringify(offsetText)} is not a non-negative safe integer`;
    return { topic, partition, offset };
  },
};

function compareEntries(a: OffsetCheckpointEntry, b: OffsetCheckpointEntry): number {
  if (a.topic !== b.topic) return a.topic < b.topic ? -1 : 1;
  return a.partition - b.partition;
}

export class OffsetCheckpoint {
  private readonly file: CheckpointFile<OffsetCheckpointEntry>;

  constructor(io: Io, path: string) {
    this.file = new CheckpointFile(io, path, offsetCheckpointFormat);
  }

  get path(): string {
    return this.file.path;
  }

  /** The entries in file order; a missing file has none. */
  read(): Promise<OffsetCheckpointEntry[]> {
    return this.file.read();
  }

  /**
   * Writes the entries (sorted by topic, partition) atomically and durably.
   * Rejects with SEGLOG_ERR_LOG_INVALID_TOPIC / _PARTITION before writing
   * anything if an entry is illegal.
   */
  async write(entries: readonly OffsetCheckpointEntry[]): Promise<void> {
    for (const entry of entries) {
      FileNames.validateTopic(entry.topic);
      FileNames.validatePartition(entry.partition);
      assert(Number.isSafeInteger(entry.offset) && entry.offset >= 0, 'OffsetCheckpoint.write: offset must be a non-negative safe integer');
    }
    await this.file.write([...entries].sort(compareEntries));
  }

  /** Entries keyed by partition directory name (`<topic>-<partition>`); a later duplicate wins. */
  static toMap(entries: readonly OffsetCheckpointEntry[]): Map<string, number> {
    const map = new Map<string, number>();
    for (const entry of entries) map.set(`${entry.topic}-${entry.partition}`, entry.offset);
    return map;
  }
}
