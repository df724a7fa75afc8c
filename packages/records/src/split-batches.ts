// Splits a buffer of concatenated batches into zero-copy RecordBatch views,
// framing each with nextBatchSize (file or memory rules). Stops at the end of
// data (including a partial trailing batch); the bytes covered by the views
// are the sum of their sizes. CRCs are not checked here.
import { nextBatchSize, type FrameOptions } from './next-batch-size.js';
import { RecordBatch } from './record-batch.js';

export function splitBatches(buf: Uint8Array, options?: FrameOptions): RecordBatch[] {
  const batches: RecordBatch[] = [];
  let position = 0;
  for (;;) {
    const size = nextBatchSize(buf, position, options);
    if (size === 0) return batches;
    batches.push(new RecordBatch(buf, position));
    position += size;
  }
}
