// The file lifecycle both sparse indexes share (.index: 8-byte entries,
// .timeindex: 12-byte entries; formats in offset-index.ts and time-index.ts).
// An index is an IndexFile (in-memory mirror written back through Io) with a
// capacity of maxEntries: a new file is preallocated to segment.index.bytes
// rounded down to whole entries, trimmed to entries × entryBytes on roll and
// close, and an existing file's entry count is its length / entryBytes.

import { assert } from '@seglog/common';
import type { Io } from '@seglog/io';
import { invalidIndexSize, roundDown } from './index-errors.js';
import { IndexFile, INITIAL_MIRROR_BYTES } from './index-file.js';
import type { IndexFileOptions } from './index-file.js';

export interface IndexOpenOptions {
  /** The segment's base offset. */
  readonly baseOffset: number;
  /** segment.index.bytes: the size a new file is preallocated to (rounded down to whole entries). */
  readonly maxIndexBytes: number;
  /** Open read-only (tools): never create, write or resize. Default false. */
  readonly readOnly?: boolean;
  /** Do not read an existing file at open; load() before the first lookup (segment/index-residency.ts). */
  readonly lazy?: boolean;
  /** Whether the file exists, when the caller knows it (a directory listing). */
  readonly present?: boolean | undefined;
  /** With lazy: the file's length as a clean close recorded it (no stat at open). */
  readonly knownBytes?: number | undefined;
  /** Dirty bytes that start a background write-back (LogConfig.indexWriteBackBytes); default SPARSE_WRITE_BACK_BYTES. */
  readonly writeBackBytes?: number;
}

/**
 * Dirty bytes of an offset or time index that start a background write-back
 * (IndexFile deferWriteBackBytes): a page, 512 offset entries (about 2 MiB of
 * log at index.interval.bytes 4096). Fewer are deferred to the roll (the
 * sealed segment's indexes are flushed), a truncation's rewrite, or the
 * close; a durable acknowledgement does not wait for them. Nothing reads the
 * file of an index whose mirror lives, and recovery rebuilds the active
 * segment's indexes (from floor(recovery point)), so a crash loses nothing
 * with them. A write-back that runs and fails is fail-stop as before: no
 * acknowledgement after it.
 */
export const SPARSE_WRITE_BACK_BYTES = 4096;

/** Opens (creating and preallocating when missing) the storage of an index with `entryBytes` entries. */
export function openIndexStorage(io: Io, path: string, options: IndexOpenOptions, entryBytes: number, name: string): Promise<IndexFile> {
  return IndexFile.open(io, path, indexStorageOptions(path, options, entryBytes, name));
}

/** The storage options of a sparse index with `entryBytes` entries (checked). */
export function indexStorageOptions(path: string, options: IndexOpenOptions, entryBytes: number, name: string): IndexFileOptions {
  assert(Number.isSafeInteger(options.baseOffset) && options.baseOffset >= 0, `${name}.open: baseOffset must be a non-negative safe integer`);
  assert(Number.isSafeInteger(options.maxIndexBytes), `${name}.open: maxIndexBytes must be a safe integer`);
  const preallocateBytes = roundDown(options.maxIndexBytes, entryBytes);
  const readOnly = options.readOnly ?? false;
  if (preallocateBytes === 0 && !readOnly) throw invalidIndexSize(path, options.maxIndexBytes, entryBytes);
  return {
    entryBytes,
    sizing: 'preallocated',
    preallocateBytes,
    readOnly,
    initialCapacityBytes: Math.min(preallocateBytes, roundDown(INITIAL_MIRROR_BYTES, entryBytes)),
    lazy: options.lazy ?? false,
    present: options.present,
    knownBytes: options.knownBytes,
    deferWriteBackBytes: options.writeBackBytes ?? SPARSE_WRITE_BACK_BYTES,
  };
}

export abstract class SparseIndex {
  readonly baseOffset: number;
  protected readonly storage: IndexFile;
  protected maxEntriesValue: number;
  private readonly entryBytes: number;

  protected constructor(storage: IndexFile, baseOffset: number, entryBytes: number) {
    this.baseOffset = baseOffset;
    this.storage = storage;
    this.entryBytes = entryBytes;
    this.maxEntriesValue = Math.floor(storage.fileBytes / entryBytes);
  }

  get path(): string {
    return this.storage.path;
  }

  /** Number of entries. */
  get entries(): number {
    return this.storage.usedBytes / this.entryBytes;
  }

  get maxEntries(): number {
    return this.maxEntriesValue;
  }

  /** entries × entryBytes: the bytes a trimmed file holds. */
  get sizeBytes(): number {
    return this.storage.usedBytes;
  }

  /** False while the entries are not in memory (lazily opened or evicted). */
  get isLoaded(): boolean {
    return this.storage.isLoaded;
  }

  /** Bytes of the in-memory mirror. */
  get memoryBytes(): number {
    return this.storage.memoryBytes;
  }

  /** Reads the entries into memory if they are not (IndexFile.load). */
  load(): Promise<void> {
    return this.storage.load();
  }

  /** Drops the entries from memory when nothing is pending (IndexFile.unload). */
  unload(): boolean {
    return this.storage.unload();
  }

  /** The file's current length (preallocated or trimmed). */
  get fileBytes(): number {
    return this.storage.fileBytes;
  }

  /**
   * Sets the file length to maxIndexBytes rounded down to whole entries (at
   * least the current entries) and maxEntries accordingly. Returns false
   * when the length was already that.
   */
  async resize(maxIndexBytes: number): Promise<boolean> {
    const bytes = roundDown(maxIndexBytes, this.entryBytes);
    assert(bytes >= this.sizeBytes, 'SparseIndex.resize: below the current entries');
    if (bytes === this.storage.fileBytes) return false;
    await this.storage.resizeFile(bytes);
    this.maxEntriesValue = bytes / this.entryBytes;
    return true;
  }

  /** Trims the file to entries × entryBytes (roll, close). */
  async trim(): Promise<void> {
    await this.resize(this.sizeBytes);
  }

  /** Writes pending entries and fdatasyncs the file. */
  flush(): Promise<void> {
    return this.storage.flush();
  }

  /** Waits for pending write-backs (no fdatasync); rejects with the kept failure. */
  drain(): Promise<void> {
    return this.storage.drain();
  }

  /** No write-back pending or running and no failure kept (drain() would find nothing to do). */
  get settled(): boolean {
    return this.storage.settled;
  }

  /** Reports the first failed file operation (background write-backs included) to `listener` (the log's fail-stop). */
  setFailureListener(listener: (error: unknown) => void): void {
    this.storage.setFailureListener(listener);
  }

  /** Renames the file (e.g. to `.deleted` or from `.swap`); the index stays usable. */
  renameTo(path: string): Promise<void> {
    return this.storage.rename(path);
  }

  /** Trims the file to entries × entryBytes and closes it. Does not fdatasync: flush() first. */
  close(): Promise<void> {
    return this.storage.close(this.sizeBytes);
  }

  /** Closes and deletes the file. */
  delete(): Promise<void> {
    return this.storage.delete();
  }
}
