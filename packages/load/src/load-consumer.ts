// The consume phase: Fetch from the start offset of every partition until
// its end offset (the high watermark after the produce phase), feeding each
// whole batch to the LoadChecker. Bounded: at most maxFetchRequests requests,
// and it stops after 20 consecutive rounds without progress; a partition
// whose fetch fails is reported once and not fetched again. A broker that
// refuses every partition's first fetch with one error code (the blackhole
// broker answers KAFKA_STORAGE_ERROR) gives the typed result
// 'fetch-refused', not a violation and not a crash.

import { KAFKA_ERROR_CODES } from '@seglog/protocol';
import type { FetchPartition, FetchRequest, FetchResponse } from '@seglog/protocol';
import type { KafkaConnection } from './kafka-connection.js';
import type { CheckerResult, LoadChecker } from './load-checker.js';

export type ConsumeResult =
  | ({ readonly kind: 'verified'; readonly fetchRequests: number; readonly bytesConsumed: number; readonly durationMs: number } & CheckerResult)
  | { readonly kind: 'skipped'; readonly reason: 'no-verify' | 'blackhole' }
  | { readonly kind: 'fetch-refused'; readonly errorCode: number; readonly errorName: string; readonly partitions: number; readonly fetchRequests: number };

const STALL_ROUNDS_MAX = 20;

export function kafkaErrorName(code: number): string {
  for (const [name, value] of Object.entries(KAFKA_ERROR_CODES)) if (value === code) return name;
  return `UNKNOWN(${code})`;
}

export interface ConsumeSetup {
  readonly connection: KafkaConnection;
  readonly fetchVersion: number;
  readonly topic: string;
  readonly partitionMaxBytes: number;
  readonly maxFetchRequests: number;
  readonly endOffsets: readonly number[];
}

function fetchRequest(setup: ConsumeSetup, partitions: readonly FetchPartition[]): FetchRequest {
  return {
    clusterId: null, replicaId: -1, maxWaitMs: 0, minBytes: 1, maxBytes: 64 * 1024 * 1024, isolationLevel: 0,
    sessionId: 0, sessionEpoch: -1, topics: [{ topic: setup.topic, partitions }], forgottenTopicsData: [], rackId: '',
  };
}

/** Whole batches in `records` (a trailing partial batch is cut off, as Kafka allows). */
export function forEachBatch(records: Buffer, visit: (batch: Buffer) => void): number {
  let at = 0;
  let bytes = 0;
  while (at + 61 <= records.length) {
    const size = records.readInt32BE(at + 8) + 12;
    if (size < 61 || at + size > records.length) break;
    visit(records.subarray(at, at + size));
    bytes += size;
    at += size;
  }
  return bytes;
}

export async function consumeAndCheck(setup: ConsumeSetup, checker: LoadChecker): Promise<ConsumeResult> {
  const started = performance.now();
  const next = checker.nextOffsets;
  let fetchRequests = 0;
  let bytesConsumed = 0;
  let stalled = 0;
  const failed = new Set<number>(); // partitions whose fetch failed: reported once, not fetched again
  while (fetchRequests < setup.maxFetchRequests) {
    const partitions: FetchPartition[] = [];
    for (let p = 0; p < next.length; p++) {
      if ((next[p] as number) >= (setup.endOffsets[p] as number) || failed.has(p)) continue;
      partitions.push({
        partition: p, currentLeaderEpoch: -1, fetchOffset: next[p] as number, lastFetchedEpoch: -1, logStartOffset: -1,
        partitionMaxBytes: setup.partitionMaxBytes,
      });
    }
    if (partitions.length === 0) break;
    fetchRequests++;
    const response: FetchResponse = await setup.connection.request('FETCH', setup.fetchVersion, fetchRequest(setup, partitions));
    const refused = refusal(response, partitions.length, fetchRequests);
    if (refused !== null) return refused;
    const before = next.reduce((a, b) => a + b, 0);
    bytesConsumed += absorb(response, checker, failed);
    stalled = next.reduce((a, b) => a + b, 0) === before ? stalled + 1 : 0;
    if (stalled >= STALL_ROUNDS_MAX) {
      checker.violation(`consume: no progress in ${STALL_ROUNDS_MAX} fetch rounds (offsets ${next.join(',')}, end ${setup.endOffsets.join(',')})`);
      break;
    }
  }
  if (fetchRequests >= setup.maxFetchRequests) checker.violation(`consume: stopped at the bound of ${setup.maxFetchRequests} fetch requests`);
  const result = checker.finish();
  return { kind: 'verified', fetchRequests, bytesConsumed, durationMs: performance.now() - started, ...result };
}

/** The typed refusal when the first fetch fails for every partition with one code; null otherwise. */
function refusal(response: FetchResponse, asked: number, fetchRequests: number): ConsumeResult | null {
  if (fetchRequests !== 1 || response.errorCode !== 0) {
    if (response.errorCode !== 0) return { kind: 'fetch-refused', errorCode: response.errorCode, errorName: kafkaErrorName(response.errorCode), partitions: asked, fetchRequests };
    return null;
  }
  const parts = response.responses.flatMap((t) => t.partitions);
  const first = parts[0];
  if (first === undefined || first.errorCode === 0 || parts.length !== asked) return null;
  if (!parts.every((p) => p.errorCode === first.errorCode)) return null;
  return { kind: 'fetch-refused', errorCode: first.errorCode, errorName: kafkaErrorName(first.errorCode), partitions: asked, fetchRequests };
}

/** Feeds every batch of the response to the checker; partition errors after the first round are violations. */
function absorb(response: FetchResponse, checker: LoadChecker, failed: Set<number>): number {
  let bytes = 0;
  for (const topic of response.responses) {
    for (const part of topic.partitions) {
      if (part.errorCode !== 0) {
        failed.add(part.partitionIndex);
        checker.violation(`partition ${part.partitionIndex}: fetch at offset ${checker.nextOffsets[part.partitionIndex]} failed with ${kafkaErrorName(part.errorCode)} (${part.errorCode})`);
        continue;
      }
      const records = part.records;
      if (!Buffer.isBuffer(records)) continue;
      bytes += forEachBatch(records, (batch) => checker.checkBatch(part.partitionIndex, batch));
    }
  }
  return bytes;
}
