// The shape of a read result that the fetch layer can write: @seglog/log's
// FetchPlan satisfies it structurally (parts of inline slices and
// SegmentFileRef ranges, totalBytes, an idempotent release()). Declared here
// so fetch depends on the contract, not on the engine's classes.

import type { IoFile } from '@seglog/io';

/** What the fetch layer needs of an open segment file (NodeIo's IoFile; fd -1 means no sendfile). */
export type FetchFile = Pick<IoFile, 'fd' | 'path' | 'pread' | 'size'>;

export type WritableFetchPart =
  | { readonly kind: 'inline'; readonly buffer: Buffer }
  | { readonly kind: 'file'; readonly file: { readonly file: FetchFile }; readonly position: number; readonly length: number };

export interface WritableFetchPlan {
  readonly parts: readonly WritableFetchPart[];
  /** Sum of the parts' lengths. */
  readonly totalBytes: number;
  /** Drops the plan's file references; must be idempotent (writeFetch calls it exactly once, on every outcome). */
  release(): Promise<void>;
}
