// DirCheckpointer: a data directory's two offset checkpoint files,
// `recovery-point-offset-checkpoint` (every log's durableOffset) and
// `log-start-offset-checkpoint` (only logs whose logStartOffset is above
// their first segment's base, as Kafka: the loader derives the others from
// the first segment). Format: OffsetCheckpoint, `0\n<count>\n<topic> <p>
// <offset>\n…`, each written atomically (tmp, fsync, rename).
//
// Writes run one at a time, in call order (a failed one does not block the
// next), by call or on an unref'd interval timer. What a failure means is the
// LogManager's decision (fail-stop or a retriable refusal); this class only
// writes.
import type { Io } from '@seglog/io';
import { OffsetCheckpoint } from '../checkpoint/offset-checkpoint.js';
import type { OffsetCheckpointEntry } from '../checkpoint/offset-checkpoint.js';
import { FileNames } from '../file-names.js';
import { join } from './partition-dirs.js';

const TIMER_MAX_MS = 0x7fffffff;

/** What a checkpoint reads of a log. */
export interface CheckpointedLog {
  readonly topic: string;
  readonly partition: number;
  readonly durableOffset: number;
  readonly logStartOffset: number;
  segmentBaseOffsets(): readonly number[];
}

export class DirCheckpointer {
  private readonly recoveryPointCheckpoint: OffsetCheckpoint;
  private readonly logStartCheckpoint: OffsetCheckpoint;
  private tail: Promise<void>;
  private timer: NodeJS.Timeout | null;

  constructor(io: Io, dir: string) {
    this.recoveryPointCheckpoint = new OffsetCheckpoint(io, join(dir, FileNames.recoveryPointCheckpoint));
    this.logStartCheckpoint = new OffsetCheckpoint(io, join(dir, FileNames.logStartOffsetCheckpoint));
    this.tail = Promise.resolve();
    this.timer = null;
  }

  /** Runs `run` after every earlier one has settled; its failure is the caller's, not the next run's. */
  serialize(run: () => Promise<void>): Promise<void> {
    const result = this.tail.then(run);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** Settles when every run queued so far has settled. */
  idle(): Promise<void> {
    return this.tail;
  }

  /** Writes both files from `logs`; throws the raw I/O error. */
  async write(logs: Iterable<CheckpointedLog>): Promise<void> {
    const recoveryPoints: OffsetCheckpointEntry[] = [];
    const logStarts: OffsetCheckpointEntry[] = [];
    for (const log of logs) {
      recoveryPoints.push({ topic: log.topic, partition: log.partition, offset: log.durableOffset });
      const firstBase = log.segmentBaseOffsets()[0];
      if (firstBase !== undefined && log.logStartOffset > firstBase) {
        logStarts.push({ topic: log.topic, partition: log.partition, offset: log.logStartOffset });
      }
    }
    await this.recoveryPointCheckpoint.write(recoveryPoints);
    await this.logStartCheckpoint.write(logStarts);
  }

  /** Calls `tick` every `intervalMs` (0: never) until stopTimer(); the timer does not keep the process alive. */
  startTimer(intervalMs: number, tick: () => void): void {
    if (intervalMs === 0) return;
    this.timer = setInterval(tick, Math.min(intervalMs, TIMER_MAX_MS));
    this.timer.unref();
  }

  stopTimer(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
