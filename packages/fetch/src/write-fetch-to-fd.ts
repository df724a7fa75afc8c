// writeFetchToFd: writeFetch for any writable fd (a pipe, a file, a socket
// fd owned by no net.Socket), for benchmarks and tools. Batches go out with
// fs.writev (partial writes advance the slice list; EAGAIN/EINTR retried;
// zero progress fails), file ranges by native sendfile(2) when chosen (Linux
// sendfile accepts any output fd) or pread + write. On failure the fd is left
// open: the caller owns it and must treat the stream as broken.

import { resolveFetchWriteOptions, type FetchWriteOptions } from './fetch-write-options.js';
import type { WriteFetchResult } from './fetch-write-result.js';
import { FetchEngine } from './internal/fetch-engine.js';
import { FdSink } from './internal/fd-sink.js';
import { stagingPool } from './internal/staging-pool.js';
import { sendfileLimiter } from './sendfile-limiter.js';
import type { WritableFetchPlan } from './writable-fetch-plan.js';

export async function writeFetchToFd(fd: number, header: Buffer, plan: WritableFetchPlan, options?: FetchWriteOptions): Promise<WriteFetchResult> {
  try {
    const resolved = resolveFetchWriteOptions(options);
    const sink = new FdSink(fd, resolved.maxIovecs);
    return await new FetchEngine(sink, resolved, options?.limiter ?? sendfileLimiter, stagingPool).run(header, plan);
  } finally {
    await plan.release();
  }
}
