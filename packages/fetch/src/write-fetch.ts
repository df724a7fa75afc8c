// writeFetch: writes one fetch response (a header the caller built, then the
// plan's parts in order) to a net.Socket, choosing per plan between one
// coalesced write, corked writev of zero-copy slices, native sendfile and
// pread + write (see internal/fetch-engine.ts and README.md).
//
// Contract:
// - The socket is the response's until the promise settles: the caller
//   writes nothing meanwhile (sendfile bytes would interleave) and starts no
//   second writeFetch on it (asserted).
// - Resolves once every byte has been handed to the kernel (every write
//   callback ran), so staging buffers are reusable and the result is exact.
// - Sets TCP_NODELAY: a header written before a sendfile must not wait for
//   Nagle / delayed ACK (Go #45256: ~200 ms stalls per response).
// - Rejects with a FetchError (PEER_CLOSED, PEER_TIMEOUT, FILE_TRUNCATED,
//   WRITE_FAILED) or the IoError of a failed pread. When any byte had already
//   been handed to the socket, the socket is destroyed: the peer would
//   otherwise take whatever comes next for the rest of this response.
// - plan.release() runs exactly once, on every outcome, before it settles.

import type { Socket } from 'node:net';
import { assert } from '@seglog/common';
import { resolveFetchWriteOptions, type FetchWriteOptions } from './fetch-write-options.js';
import type { WriteFetchResult } from './fetch-write-result.js';
import { FetchEngine } from './internal/fetch-engine.js';
import { SocketSink } from './internal/socket-sink.js';
import { stagingPool } from './internal/staging-pool.js';
import { sendfileLimiter } from './sendfile-limiter.js';
import type { WritableFetchPlan } from './writable-fetch-plan.js';

const busy = new WeakSet<Socket>();

export async function writeFetch(socket: Socket, header: Buffer, plan: WritableFetchPlan, options?: FetchWriteOptions): Promise<WriteFetchResult> {
  let sink: SocketSink | null = null;
  try {
    assert(!busy.has(socket), 'writeFetch: another response is being written to this socket');
    const resolved = resolveFetchWriteOptions(options);
    busy.add(socket);
    sink = new SocketSink(socket, resolved.maxIovecs);
    sink.check();
    socket.setNoDelay(true);
    return await new FetchEngine(sink, resolved, options?.limiter ?? sendfileLimiter, stagingPool).run(header, plan);
  } catch (error) {
    if (sink !== null && sink.bytesPushed > 0 && !socket.destroyed) socket.destroy();
    throw error;
  } finally {
    if (sink !== null) {
      sink.detach();
      busy.delete(socket);
    }
    await plan.release();
  }
}
