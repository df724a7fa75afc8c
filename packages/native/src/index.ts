// CONTRACT for @seglog/native (the loader replaces this stub). The addon is
// optional: when it is missing, fails its self-test, or SEGLOG_NATIVE=0,
// `capabilities` has every flag false and every function below is null.

export interface NativeCapabilities {
  /** The addon loaded and passed its known-answer self-test. */
  readonly loaded: boolean;
  /** Why it is not loaded (missing build, self-test failure, SEGLOG_NATIVE=0). */
  readonly reason: string | null;
  readonly crc32c: boolean;
  /** crc32c uses SSE4.2 instructions (else the addon's own table fallback). */
  readonly crc32cHardware: boolean;
  readonly fallocate: boolean;
  readonly sendfile: boolean;
  readonly fadvise: boolean;
  readonly alignedAlloc: boolean;
}

export const capabilities: NativeCapabilities = {
  loaded: false, reason: 'not built yet', crc32c: false, crc32cHardware: false,
  fallocate: false, sendfile: false, fadvise: false, alignedAlloc: false,
};

/** CRC-32C of buf[start, end) continuing from `seed` (0 for a fresh CRC); unsigned result. */
export const crc32c: ((buf: Uint8Array, seed: number) => number) | null = null;
