// What one writeFetch / writeFetchToFd did: bytes, the path each part kind
// took, and the calls it made (the benchmark divides them by MiB).

/** How the inline parts (and the header) went out: copied into a staging buffer, or zero-copy slices. */
export type InlineStrategyUsed = 'coalesce' | 'writev' | null;
/** How the file parts went out; 'sendfile+pread' when some fell back (size, limiter, no fd). */
export type FileStrategyUsed = 'coalesce' | 'sendfile' | 'pread' | 'sendfile+pread' | null;

export interface WriteFetchResult {
  /** Header plus every part: all handed to the kernel when the promise resolves. */
  readonly bytesWritten: number;
  readonly inlineStrategy: InlineStrategyUsed;
  readonly fileStrategy: FileStrategyUsed;
  /** Write system calls issued: corked batches (one writev each) on a socket; fs.writev calls on an fd (retries included). */
  readonly writes: number;
  /** Slices handed to those writes. */
  readonly slices: number;
  readonly sendfiles: number;
  readonly preads: number;
  /** File ranges that qualified for sendfile but found the limiter full and were pread instead. */
  readonly sendfileFallbacks: number;
}
