// What the log cleaner reads of a Log and the one way it changes it (the
// swap, as a mutation of the log). Log.cleanerAccess() hands it out; nothing
// but cleaner/ uses it.

import type { Io } from '@seglog/io';
import type { LogConfig } from '../log-config.js';
import type { FailStop } from '../log/fail-stop.js';
import type { LocalLog } from '../log/local-log.js';
import type { LogFlusher } from '../log/log-flusher.js';
import type { LogPositions } from '../log/log-positions.js';
import type { LogSegments } from '../log/log-segments.js';
import type { ProducerStateManager } from '../producer/producer-state-manager.js';

export interface CleanerAccess {
  readonly io: Io;
  readonly dir: string;
  readonly topic: string;
  readonly partition: number;
  readonly config: LogConfig;
  readonly segments: LogSegments;
  readonly positions: LogPositions;
  readonly producerState: ProducerStateManager;
  readonly flusher: LogFlusher;
  readonly local: LocalLog;
  readonly failStop: FailStop;
  readonly now: () => number;
  /** Runs `op` on the log's mutation chain (after every mutation queued before it). */
  readonly runMutation: <T>(op: () => Promise<T>) => Promise<T>;
}
