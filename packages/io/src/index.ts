/**
 * The public surface of the @seglog/io package.
 * @module @seglog/io
 */
// @seglog/io: the one I/O seam (Io, NodeIo, SimIo), aligned buffers for
// O_DIRECT (AlignedArena) and the blocking pool. Knows nothing of records or
// segments.
export type { AllocateMode, FileStat, FsStat, Io, IoFile, IoLock, OpenOptions } from './io.js';
export { IoError, IoErrorCode, ioErrorFromErrno, isIoError } from './io-error.js';
export type { IoErrorDetails } from './io-error.js';
export { NodeIo } from './node-io.js';
export type { NodeIoFs, NodeIoOptions, NodeIoStats } from './node-io.js';
export { CrashMode, SimIo } from './sim-io.js';
export type { CrashPoint, FaultKind, FaultRule, SimFaults, SimIoOptions } from './sim-io.js';
export { AlignedArena, ArenaSource } from './aligned-arena.js';
export type { AlignedArenaOptions } from './aligned-arena.js';
export { BlockingPool, Priority } from './blocking-pool.js';
export type { BlockingPoolCounters, BlockingPoolOptions } from './blocking-pool.js';
