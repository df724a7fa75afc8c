// FailStop: the I/O-error funnel of one log (ARCHITECTURE.md "Errors and
// faults"). Any write, fsync, rename, truncate or checkpoint failure takes
// the log offline once: the first error is kept as the cause, every
// written()/durable() waiter is rejected with SEGLOG_ERR_LOG_OFFLINE, and
// nothing is acknowledged afterwards (never retry an fsync and then
// acknowledge). A retriable refusal (SEGLOG_ERR_LOG_RESOURCE_UNAVAILABLE:
// out of descriptors or space before any byte was at risk) passes through
// and the log stays open.
//
// Invariant: state only moves open → offline (here) and → closed (close).

import { logClosed, logOffline } from '../internal/log-errors.js';
import type { LogPositions } from './log-positions.js';
import type { OffsetWaiters } from './offset-waiters.js';

export interface FailStopDeps {
  readonly dir: string;
  readonly positions: LogPositions;
  readonly writtenWaiters: OffsetWaiters;
  readonly durableWaiters: OffsetWaiters;
  /** Called once, after the waiters are rejected, when the log goes offline. */
  readonly afterOffline: (cause: unknown) => void;
  /** Called with each retriable refusal that passes through the funnel. */
  readonly onRefusal: ((refusal: unknown) => void) | null;
}

export class FailStop {
  readonly dir: string;
  private readonly positions: LogPositions;
  private readonly writtenWaiters: OffsetWaiters;
  private readonly durableWaiters: OffsetWaiters;
  private readonly afterOffline: (cause: unknown) => void;
  private readonly onRefusal: ((refusal: unknown) => void) | null;

  constructor(deps: FailStopDeps) {
    this.dir = deps.dir;
    this.positions = deps.positions;
    this.writtenWaiters = deps.writtenWaiters;
    this.durableWaiters = deps.durableWaiters;
    this.afterOffline = deps.afterOffline;
    this.onRefusal = deps.onRefusal;
  }

  /** Failure reports of background work (writers, index write-backs, epoch checkpoint rewrites): fail-stop at once. */
  readonly onFailure = (error: unknown): void => {
    this.fail(error);
  };

  /** Marks the log offline (once) and rejects every waiter. No-op unless open. */
  fail(error: unknown): void {
    if (this.positions.state !== 'open') return;
    this.positions.state = 'offline';
    this.positions.failure = error;
    const offline = logOffline(this.dir, error);
    this.writtenWaiters.rejectAll(offline);
    this.durableWaiters.rejectAll(offline);
    this.afterOffline(error);
  }

  /**
   * The funnel of mutations: the log goes offline and the caller gets
   * SEGLOG_ERR_LOG_OFFLINE. A retriable refusal passes through and the log
   * stays open. Returns the error to throw.
   */
  failWith(error: unknown): unknown {
    if (this.positions.state === 'closed') return error;
    if ((error as { code?: unknown } | null)?.code === 'SEGLOG_ERR_LOG_RESOURCE_UNAVAILABLE') {
      this.onRefusal?.(error);
      return error;
    }
    this.fail(error);
    return logOffline(this.dir, this.positions.failure);
  }

  /** The error a new mutation or waiter gets (offline, closed), or null when the log is open. */
  refusal(): unknown {
    if (this.positions.state === 'offline') return logOffline(this.dir, this.positions.failure);
    if (this.positions.state === 'closed') return logClosed(this.dir);
    return null;
  }

  checkWritable(): void {
    const refused = this.refusal();
    if (refused !== null) throw refused;
  }
}
