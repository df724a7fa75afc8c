// What a LoadProducer needs from its per-partition batching, so the two
// batching modes share the producer's pacing, pipelining and ledger code:
//   UncompressedAccumulator  Kafka's and franz-go's default: one open batch
//                            per partition, closed by UNCOMPRESSED size
//                            (batchBytes) or linger; built at seal time.
//   StreamingAccumulator     --streaming-compression: a backlog of records
//                            (not bytes) per partition; a backlog of more
//                            than one uncompressed batch is sealed into ONE
//                            batch bounded by its COMPRESSED size
//                            (maxBatchBytes), each record compressed once.
// A batch goes through three states: pending (records only), sealed (`ready`
// built its bytes, or a merge worker did and `wake` said so; its wire length
// is exact, so a request is packed by it),
// taken (`take`: its first send, base sequence written once). From `take` on
// its bytes never change: a retry resends them verbatim.

/** A batch handed to the producer for its first send; `batch` is never changed afterwards. */
export interface SentBatch {
  readonly partition: number;
  readonly firstSequence: number;
  readonly count: number;
  /** performance.now() when its first record entered the accumulator (publish latency). */
  readonly openedAt: number;
  readonly batch: Buffer;
}

/** Told about each run of records an accumulator dropped without sending (purge). */
export type DroppedRecords = (partition: number, firstSequence: number, count: number) => void;

export interface BatchAccumulator {
  /**
   * Adds the record with `sequence` (its payload identity; the Kafka sequence
   * when idempotent) to `partition`; false, and nothing added, if it is full
   * and must wait for a send. Never compresses.
   */
  tryAdd(partition: number, sequence: number, now: number, timestamp: number): boolean;
  /**
   * Seals `partition`'s next batch if one is ready (full, lingered, or
   * `flush` because generation has ended) and returns its exact wire length;
   * -1 if none is ready. A sealed batch stays sealed (same bytes) until taken.
   */
  ready(partition: number, now: number, flush: boolean): number;
  /** Hands out the sealed batch of `partition` (call after `ready` returned >= 0), once. */
  take(partition: number): SentBatch;
  /** Any record not yet taken, in any partition. */
  hasPending(): boolean;
  /** When `partition`'s open batch becomes ready by linger (Infinity if none is open). */
  lingerDeadline(partition: number): number;
  /** Drops every record not yet taken (sealed batches included), telling `dropped` about each run. */
  purge(dropped: DroppedRecords): void;
  /**
   * `wake` is called when a batch became ready on its own, not in a call of
   * this interface (a merge answered by its worker): the producer then sends.
   */
  setWake(wake: () => void): void;
}
