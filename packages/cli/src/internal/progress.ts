// Progress: a one-line progress bar for long scans, drawn on stderr only when
// stderr is a terminal, so pipes, files and tests see nothing. It appears
// only after `delayMs` (short scans never flash a bar) and redraws at most
// every `intervalMs`.

export interface ProgressStream {
  readonly isTTY?: boolean;
  write(text: string): unknown;
}

export interface ProgressOptions {
  readonly label: string;
  readonly totalBytes: number;
  /** Clock in ms (tests inject one). Default Date.now. */
  readonly now?: () => number;
  readonly delayMs?: number;
  readonly intervalMs?: number;
}

const BAR_WIDTH = 30;

export class Progress {
  readonly enabled: boolean;
  private readonly stream: ProgressStream;
  private readonly label: string;
  private readonly totalBytes: number;
  private readonly now: () => number;
  private readonly startMs: number;
  private readonly delayMs: number;
  private readonly intervalMs: number;
  private doneBytes: number;
  private lastDrawMs: number;
  private drawn: boolean;

  constructor(stream: ProgressStream, options: ProgressOptions) {
    this.enabled = stream.isTTY === true;
    this.stream = stream;
    this.label = options.label;
    this.totalBytes = Math.max(0, options.totalBytes);
    this.now = options.now ?? Date.now;
    this.startMs = this.now();
    this.delayMs = options.delayMs ?? 300;
    this.intervalMs = options.intervalMs ?? 100;
    this.doneBytes = 0;
    this.lastDrawMs = -Infinity;
    this.drawn = false;
  }

  /** Adds `bytes` to the work done and redraws if it is time. */
  advance(bytes: number): void {
    this.doneBytes += bytes;
    if (!this.enabled) return;
    const now = this.now();
    if (now - this.startMs < this.delayMs || now - this.lastDrawMs < this.intervalMs) return;
    this.lastDrawMs = now;
    this.drawn = true;
    this.stream.write(`\r${this.render()}`);
  }

  /** The bar as text (no control characters). */
  render(): string {
    const fraction = this.totalBytes === 0 ? 1 : Math.min(1, this.doneBytes / this.totalBytes);
    const filled = Math.round(fraction * BAR_WIDTH);
    const percent = String(Math.floor(fraction * 100)).padStart(3);
    return `${this.label} [${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${percent}% ${mib(this.doneBytes)}/${mib(this.totalBytes)} MiB`;
  }

  /** Erases the bar if one was drawn. */
  done(): void {
    if (this.drawn) this.stream.write('\r\x1b[K');
    this.drawn = false;
  }
}

function mib(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1);
}
