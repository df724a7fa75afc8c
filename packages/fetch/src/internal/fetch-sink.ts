// FetchSink: where the fetch engine puts bytes. Two implementations: a
// net.Socket (corked writes become one writev per batch) and a raw fd
// (fs.writev with its own partial-write loop). The engine only pushes
// slices, flushes, waits for slices to be handed to the kernel (so a staging
// buffer can be reused) and, for sendfile, waits until nothing is queued.

export interface FetchSink {
  /** Sequence number of the last slice pushed (0 before the first). */
  readonly pushed: number;
  /** Bytes handed to the sink (pushed slices plus what the engine sent by sendfile); error contexts report it. */
  bytesPushed: number;
  /** Write calls issued so far. */
  readonly writes: number;
  /** fd for native sendfile, or null when sendfile cannot be used on this sink. */
  readonly sendfileFd: number | null;
  /**
   * Queues a slice zero-copy: its bytes must not change until
   * waitCompleted(its sequence number) resolves. Returns true when the batch
   * is full: the caller must then await flush().
   */
  push(buffer: Buffer): boolean;
  /** Hands the current batch to the kernel, and waits when the sink asks for backpressure. */
  flush(): Promise<void>;
  /** Resolves when every slice up to `sequence` has been handed to the kernel. */
  waitCompleted(sequence: number): Promise<void>;
  /** Resolves when nothing at all (ours or anyone's) is queued in user space: sendfile may start. */
  waitEmpty(): Promise<void>;
  /** Throws the sink's failure, if any (a dead peer). */
  check(): void;
}
