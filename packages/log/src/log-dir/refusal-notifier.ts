// RefusalNotifier: reports a data directory's retriable refusals (disk full,
// out of descriptors) to the operator's hook without flooding it: the first
// at once, then at most one per interval, carrying the count suppressed in
// between. A notice never throws into the refused call.
/** A retriable refusal (LogManagerOptions.onRefusal). */
export interface RefusalNotice {
  readonly dir: string;
  /** The `<topic>-<partition>` refused, or null (the disk guard, a checkpoint). */
  readonly partition: string | null;
  readonly cause: unknown;
  /** Refusals since the previous notice that were not reported. */
  readonly suppressed: number;
  readonly message: string;
}

export class RefusalNotifier {
  private readonly dir: string;
  private readonly hook: ((notice: RefusalNotice) => void) | null;
  private readonly intervalMs: number;
  private readonly now: () => number;
  private lastNoticeMs: number;
  private suppressed: number;

  constructor(dir: string, hook: ((notice: RefusalNotice) => void) | null, options: { readonly intervalMs: number; readonly now: () => number }) {
    this.dir = dir;
    this.hook = hook;
    this.intervalMs = options.intervalMs;
    this.now = options.now;
    this.lastNoticeMs = -Infinity;
    this.suppressed = 0;
  }

  /** Notes `refusal` and returns it (for the caller to throw). */
  refuse(refusal: unknown, partition: string | null): unknown {
    this.note(refusal, partition);
    return refusal;
  }

  /** Reports a retriable refusal: the first at once, then one per interval with the count in between. Never throws. */
  note(cause: unknown, partition: string | null): void {
    const hook = this.hook;
    if (hook === null) return;
    const now = this.now();
    if (now - this.lastNoticeMs < this.intervalMs) {
      this.suppressed++;
      return;
    }
    const suppressed = this.suppressed;
    this.lastNoticeMs = now;
    this.suppressed = 0;
    const code = (cause as { code?: unknown } | null)?.code;
    const text = cause instanceof Error ? cause.message : String(cause);
    const message = `seglog: data directory ${this.dir} refused a write${partition === null ? '' : ` to ${partition}`} (retriable, nothing written): ` +
      `${typeof code === 'string' ? `${code}: ` : ''}${text}${suppressed > 0 ? ` [${suppressed} more refusals since the last notice]` : ''}`;
    try {
      hook({ dir: this.dir, partition, cause, suppressed, message });
    } catch {
      // A notice never changes the outcome of the refused call.
    }
  }
}
