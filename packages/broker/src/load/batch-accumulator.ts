// What a LoadProducer needs from its per-partition batching, so the two
// batching modes share the producer's pacing, pipelining and ledger code:
//   UncompressedAccumulator  Kafka's and franz-go's default: one open batch
//                            per partition, closed by UNCOMPRESSED size
//                            (batchBytes) or linger; built at send time.
//   StreamingAccumulator     --streaming-compression: batches bounded by
//                            COMPRESSED size (maxBatchBytes), a backlog of
//                            never-sent batches merged before each send.
// Both hand out a batch at most once (`take`); its bytes are final from then
// on (sequence included) and a retry resends them verbatim.

/** A batch handed to the producer for its first send; `batch` is never changed afterwards. */
export interface SentBatch {
  readonly partition: number;
  readonly firstSequence: number;
  readonly count: number;
  /** performance.now() when its first record entered the accumulator (publish latency). */
  readonly openedAt: number;
  readonly batch: Buffer;
}

export interface BatchAccumulator {
  /**
   * Adds the record with `sequence` (its payload identity; the Kafka sequence
   * when idempotent) to `partition`; false, and nothing added, if it is full
   * and must wait for a send.
   */
  tryAdd(partition: number, sequence: number, now: number, timestamp: number): boolean;
  /**
   * The next batch of `partition` to send, or null if none is ready (a batch
   * is ready when full, lingered, or `flush` because generation has ended).
   */
  take(partition: number, now: number, flush: boolean): SentBatch | null;
  /** Any record not yet taken, in any partition. */
  hasPending(): boolean;
  /** When `partition`'s open batch becomes ready by linger (Infinity if none is open). */
  lingerDeadline(partition: number): number;
}
