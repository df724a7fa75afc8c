/**
 * The public surface of the @seglog/fetch package.
 * @module @seglog/fetch
 */
// @seglog/fetch: turns a read result (a FetchPlan from @seglog/log) into
// bytes on a socket or fd: one coalesced write for small responses, corked
// writev of zero-copy slices above that, native sendfile for large file
// ranges (bounded in flight), pread + write otherwise. See README.md.

export { writeFetch } from './write-fetch.js';
export { writeFetchToFd } from './write-fetch-to-fd.js';
export { FETCH_WRITE_DEFAULTS, resolveFetchWriteOptions } from './fetch-write-options.js';
export type { FetchWriteOptions, FetchWriteStrategy, ResolvedFetchWriteOptions } from './fetch-write-options.js';
export type { WriteFetchResult, InlineStrategyUsed, FileStrategyUsed } from './fetch-write-result.js';
export { FetchError, FetchErrorCode, isFetchError } from './fetch-error.js';
export { SendfileLimiter, sendfileLimiter, defaultSendfileConcurrency } from './sendfile-limiter.js';
export type { WritableFetchPlan, WritableFetchPart, FetchFile } from './writable-fetch-plan.js';
