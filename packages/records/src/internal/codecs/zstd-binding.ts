// zstd-napi's low-level binding, loaded once. zstd-napi compiles at install
// time; when its build script did not run (npm --ignore-scripts) or failed,
// the binding is missing. Then importing @seglog/records still works and
// every other codec is unaffected: zstdAvailable is false and any use of the
// binding throws SEGLOG_ERR_RECORDS_UNSUPPORTED_CODEC (kafka
// UNSUPPORTED_COMPRESSION_TYPE), naming the cause.
//
// The binding is CommonJS whose exports are not statically analysable, so it
// is loaded with require; its enum values must be read at run time (the
// .d.ts numbering differs from the native one, CODECS.md).

import { createRequire } from 'node:module';
import { SeglogError } from '@seglog/common';
import type * as ZstdBinding from 'zstd-napi/binding.js';

function load(): { binding: typeof ZstdBinding | null; cause: unknown } {
  try {
    return { binding: createRequire(import.meta.url)('zstd-napi/binding.js') as typeof ZstdBinding, cause: null };
  } catch (cause) {
    return { binding: null, cause };
  }
}

const loaded = load();

/** Whether the zstd binding loaded (false: its native build did not run or failed). */
export const zstdAvailable: boolean = loaded.binding !== null;

function unavailable(): SeglogError {
  return new SeglogError('SEGLOG_ERR_RECORDS_UNSUPPORTED_CODEC',
    'compression codec 4 (zstd) is not available: the zstd-napi binding did not load (its install build was skipped or failed)', {
      kafka: 'UNSUPPORTED_COMPRESSION_TYPE',
      context: { codecId: 4 },
      cause: loaded.cause,
    });
}

/** The binding, or a stand-in whose every property access throws the typed error above. */
export const zstd: typeof ZstdBinding = loaded.binding ?? (new Proxy({}, {
  get(): never {
    throw unavailable();
  },
}) as typeof ZstdBinding);
