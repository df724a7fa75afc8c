// CliContext: what a command needs from the process — the Io to read data
// directories through, line output with backpressure (a dump of a large
// segment piped into `head` must not buffer gigabytes), and progress bars
// on stderr when it is a terminal.

import type { Io } from '@seglog/io';
import { Progress } from './progress.js';
import type { ProgressStream } from './progress.js';

export interface OutputStream {
  write(text: string): boolean;
  once(event: 'drain', listener: () => void): unknown;
}

export interface CliStreams {
  readonly stdout: OutputStream;
  readonly stderr: ProgressStream;
}

/** Lines are batched into one write of about this many characters. */
const FLUSH_CHARS = 64 * 1024;

export class CliContext {
  readonly io: Io;
  readonly streams: CliStreams;
  private pending: string[];
  private pendingChars: number;

  constructor(io: Io, streams: CliStreams) {
    this.io = io;
    this.streams = streams;
    this.pending = [];
    this.pendingChars = 0;
  }

  /** Queues one line of output (stdout). */
  out(line: string): void {
    this.pending.push(line);
    this.pendingChars += line.length + 1;
  }

  /** Writes one line to stderr at once. */
  err(line: string): void {
    this.streams.stderr.write(`${line}\n`);
  }

  /** Writes queued lines when enough have gathered; waits for 'drain' when the stream asks. */
  async maybeFlush(): Promise<void> {
    if (this.pendingChars >= FLUSH_CHARS) await this.flush();
  }

  /** Writes every queued line; waits for 'drain' when the stream asks. */
  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const text = `${this.pending.join('\n')}\n`;
    this.pending = [];
    this.pendingChars = 0;
    if (!this.streams.stdout.write(text)) {
      await new Promise<void>((resolve) => this.streams.stdout.once('drain', resolve));
    }
  }

  progress(label: string, totalBytes: number): Progress {
    return new Progress(this.streams.stderr, { label, totalBytes });
  }
}
