// Loads build/Release/seglog_native.node and decides what of it may be used.
// Order: SEGLOG_NATIVE=0 turns everything off; a missing or unloadable build,
// a build with a different ABI version or missing functions, or a failed
// known-answer self-test each leave `loaded` false with the reason, so a
// broken build is never used and never crashes the importer. Nothing is
// logged unless SEGLOG_NATIVE_DEBUG=1 (one line to stderr).

import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ABI_VERSION, FEATURE_FUNCTIONS, REQUIRED_FUNCTIONS } from './binding.js';
import type { RawBinding, RawFeatures } from './binding.js';

export interface NativeCapabilities {
  /** The addon loaded and passed its known-answer self-test. */
  readonly loaded: boolean;
  /** Why it is not loaded (missing build, self-test failure, SEGLOG_NATIVE=0); null when loaded. */
  readonly reason: string | null;
  readonly crc32c: boolean;
  /** crc32c uses SSE4.2 instructions (else the addon's own table fallback). */
  readonly crc32cHardware: boolean;
  readonly fallocate: boolean;
  readonly sendfile: boolean;
  readonly fadvise: boolean;
  /** startWriteback exists (Linux builds): sync_file_range(SYNC_FILE_RANGE_WRITE) on the threadpool. */
  readonly writeback: boolean;
  /** pwritevDatasync exists (Linux builds): a write and an fdatasync in one threadpool job. */
  readonly pwritevDatasync: boolean;
  /** pwritevMany exists (Linux builds): several files' writes in one threadpool job. */
  readonly pwritevMany: boolean;
  readonly alignedAlloc: boolean;
}

export interface LoadOptions {
  /** Usually process.env: SEGLOG_NATIVE=0 disables, SEGLOG_NATIVE_DEBUG=1 logs one line. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The .node file; default: this package's build/Release/seglog_native.node. */
  readonly addonPath?: string;
  /** Loads the addon (default: require); tests inject broken bindings. */
  readonly requireAddon?: (path: string) => unknown;
  /** Receives the debug line (default: process.stderr). */
  readonly log?: (line: string) => void;
}

export interface LoadResult {
  /** Non-null exactly when capabilities.loaded. */
  readonly binding: RawBinding | null;
  readonly capabilities: NativeCapabilities;
}

// src/internal/ and dist/internal/ are both two levels below the package root.
export const DEFAULT_ADDON_PATH: string = fileURLToPath(new URL('../../build/Release/seglog_native.node', import.meta.url));

export function loadNative(options: LoadOptions): LoadResult {
  const result = tryLoad(options);
  if (options.env['SEGLOG_NATIVE_DEBUG'] === '1') {
    const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
    log(`@seglog/native: ${JSON.stringify(result.capabilities)}`);
  }
  return result;
}

function tryLoad(options: LoadOptions): LoadResult {
  if (options.env['SEGLOG_NATIVE'] === '0') return unloaded('disabled by SEGLOG_NATIVE=0');
  const path = options.addonPath ?? DEFAULT_ADDON_PATH;
  let raw: unknown;
  try {
    raw = (options.requireAddon ?? createRequire(import.meta.url))(path);
  } catch (error) {
    return unloaded(`addon not loaded from ${path}: ${messageOf(error)}`);
  }
  const shapeProblem = checkShape(raw);
  if (shapeProblem !== null) return unloaded(`unusable build at ${path}: ${shapeProblem}`);
  const binding = raw as RawBinding;
  let testProblem: string | null;
  try {
    testProblem = selfTest(binding);
  } catch (error) {
    testProblem = `threw ${messageOf(error)}`;
  }
  if (testProblem !== null) return unloaded(`self-test failed: ${testProblem}`);
  const features = binding.features;
  return {
    binding,
    capabilities: Object.freeze({
      loaded: true, reason: null, crc32c: true, crc32cHardware: binding.crc32cHardwareAvailable,
      fallocate: features.fallocate, sendfile: features.sendfile, fadvise: features.fadvise, writeback: features.writeback,
      pwritevDatasync: features.pwritevDatasync, pwritevMany: features.pwritevMany, alignedAlloc: true,
    }),
  };
}

function unloaded(reason: string): LoadResult {
  return {
    binding: null,
    capabilities: Object.freeze({
      loaded: false, reason, crc32c: false, crc32cHardware: false,
      fallocate: false, sendfile: false, fadvise: false, writeback: false, pwritevDatasync: false, pwritevMany: false, alignedAlloc: false,
    }),
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message.split('\n')[0] ?? '' : String(error);
}

/** Null when `raw` has every member this loader will call; else what is wrong. */
export function checkShape(raw: unknown): string | null {
  if (raw === null || typeof raw !== 'object') return 'exports are not an object';
  const b = raw as Record<string, unknown>;
  if (b['abiVersion'] !== ABI_VERSION) return `abiVersion ${String(b['abiVersion'])}, expected ${ABI_VERSION} (rebuild)`;
  for (const name of REQUIRED_FUNCTIONS) {
    if (typeof b[name] !== 'function') return `missing function ${name}`;
  }
  if (typeof b['crc32cHardwareAvailable'] !== 'boolean') return 'missing crc32cHardwareAvailable';
  const features = b['features'] as Record<string, unknown> | null | undefined;
  if (features === null || typeof features !== 'object') return 'missing features';
  for (const feature of Object.keys(FEATURE_FUNCTIONS) as (keyof RawFeatures)[]) {
    if (typeof features[feature] !== 'boolean') return `missing features.${feature}`;
    if (features[feature] !== true) continue;
    for (const name of FEATURE_FUNCTIONS[feature]) {
      if (typeof b[name] !== 'function') return `features.${feature} without function ${name}`;
    }
  }
  return null;
}

// CRC-32C check values: the standard check string, and the iSCSI test
// patterns of RFC 3720 appendix B.4.
const CRC_VECTORS: readonly (readonly [Uint8Array, number])[] = [
  [new TextEncoder().encode('123456789'), 0xe3069283],
  [new Uint8Array(0), 0],
  [new Uint8Array(32), 0x8a9136aa],
  [new Uint8Array(32).fill(0xff), 0x62a8ab43],
  [Uint8Array.from({ length: 32 }, (_, i) => i), 0x46dd794e],
  [Uint8Array.from({ length: 32 }, (_, i) => 31 - i), 0x113fdb5c],
];

// Long enough for both interleaved block sizes of the hardware path
// (3 x 8192 and 3 x 256 bytes) plus an unaligned tail.
const AGREEMENT_BYTES = 2 * 3 * 8192 + 3 * 256 + 13;

/** Null when the binding computes what it must; else the first discrepancy. Exported for tests. */
export function selfTest(b: RawBinding): string | null {
  const paths: [string, (buf: Uint8Array, seed: number) => number][] = [
    ['crc32c', b.crc32c], ['crc32cSoftware', b.crc32cSoftware],
  ];
  if (b.crc32cHardwareAvailable) paths.push(['crc32cHardware', b.crc32cHardware]);
  for (const [name, fn] of paths) {
    for (const [input, expected] of CRC_VECTORS) {
      const actual = fn(input, 0);
      if (actual !== expected) return `${name}(${input.length} bytes) = ${hex(actual)}, expected ${hex(expected)}`;
    }
    const whole = fn(CRC_VECTORS[0]![0], 0);
    const chained = fn(CRC_VECTORS[0]![0].subarray(5), fn(CRC_VECTORS[0]![0].subarray(0, 5), 0));
    if (chained !== whole) return `${name} seed chaining: ${hex(chained)} != ${hex(whole)}`;
  }
  const data = pseudoRandomBytes(AGREEMENT_BYTES + 8);
  for (const start of [0, 1, 5]) {
    const view = data.subarray(start, start + AGREEMENT_BYTES - start);
    const soft = b.crc32cSoftware(view, 0x12345678);
    for (const [name, fn] of paths) {
      const actual = fn(view, 0x12345678);
      if (actual !== soft) return `${name} disagrees with crc32cSoftware at start ${start}: ${hex(actual)} != ${hex(soft)}`;
    }
  }
  return alignedAllocProblem(b);
}

function alignedAllocProblem(b: RawBinding): string | null {
  const buf = b.alignedAlloc(8192, 4096);
  if (buf.length !== 8192) return `alignedAlloc length ${buf.length}, expected 8192`;
  const mod = b.bufferAddressMod(buf, 4096);
  if (mod !== 0) return `alignedAlloc address mod 4096 = ${mod}`;
  if (b.bufferAddressMod(buf.subarray(1), 4096) !== 1) return 'bufferAddressMod ignores the view offset';
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] !== 0) return `alignedAlloc byte ${i} not zero`;
  }
  return null;
}

function hex(value: number): string {
  return `0x${(value >>> 0).toString(16).padStart(8, '0')}`;
}

/** xorshift32 bytes: deterministic, no dependency. */
export function pseudoRandomBytes(length: number, seed = 0x9e3779b9): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}
