// Settings shared by the kill -9 test and its child process.

import { LogConfig } from '@seglog/log';
import type { BatchShape } from './expected-log.js';

/** 1–8 records of 60–160-byte values: about 100-byte records, batches up to ~1.4 KiB. */
export const KILL9_BATCHES: BatchShape = { recordsSpread: 8, valueMin: 60, valueSpread: 100 };

/** 64 KiB segments (several rolls per run), a 1 KiB index interval, no retention. */
export function kill9Config(): LogConfig {
  return new LogConfig({
    segmentBytes: 64 * 1024,
    indexIntervalBytes: 1024,
    segmentIndexBytes: 8 * 1024,
    retentionMs: -1,
    retentionBytes: -1,
    minFreeBytes: 0,
  });
}
