// Transactional offset commits (Kafka's GroupCoordinator handleTxnCommitOffsets
// / scheduleHandleTxnCompletion): TxnOffsetCommit writes the offsets to
// __consumer_offsets in a transactional batch of the producer (its id and
// epoch, so the partition's producer state fences an old epoch), and holds
// them as pending for that producer; they become the group's committed
// offsets only when the transaction's COMMIT marker is written to the group's
// partition (completeTxnOffsets, called by the marker writer), and are dropped
// on ABORT. Loading replays the same rule (offsets-topic.ts); offsets still
// pending at the end of the load stay pending until their marker.

import { offsetKey, type CommittedOffset } from './classic-group.js';
import type { GroupCoordinator } from './group-coordinator.js';
import { storeErrorOf } from './group-coordinator.js';
import { commitRefusal, type OffsetCommitEntry } from './group-admin.js';
import type { GroupErrorName } from './group-member.js';
import type { GroupRecord, PendingTxnOffset } from './group-persistence.js';

export interface TxnCommitRequest {
  readonly groupId: string;
  readonly producerId: number;
  readonly producerEpoch: number;
  /** -1 (v0–2, or a producer outside group management): no member check. */
  readonly generationId: number;
  readonly memberId: string;
  readonly groupInstanceId: string | null;
  readonly offsets: readonly OffsetCommitEntry[];
}

/** One error per entry of the request, in its order. */
export async function commitTxnOffsets(coordinator: GroupCoordinator, request: TxnCommitRequest): Promise<GroupErrorName[]> {
  const all = (error: GroupErrorName): GroupErrorName[] => request.offsets.map(() => error);
  if (coordinator.loading) return all('COORDINATOR_LOAD_IN_PROGRESS');
  const group = coordinator.groups.get(request.groupId) ?? coordinator.groupOrCreate(request.groupId);
  if (group.state === 'Dead') return all('COORDINATOR_NOT_AVAILABLE');
  if (request.generationId >= 0) {
    const refusal = commitRefusal(coordinator, group, request);
    if (refusal !== null) return all(refusal);
  }
  const errors: GroupErrorName[] = request.offsets.map((entry) => (
    entry.metadata !== null && Buffer.byteLength(entry.metadata) > coordinator.options.offsetMetadataMaxBytes ? 'OFFSET_METADATA_TOO_LARGE' : 'NONE'
  ));
  const now = coordinator.clock.now();
  const records: GroupRecord[] = [];
  const pending: PendingTxnOffset[] = [];
  request.offsets.forEach((entry, i) => {
    if (errors[i] !== 'NONE') return;
    const value: CommittedOffset = { offset: entry.offset, leaderEpoch: entry.leaderEpoch, metadata: entry.metadata ?? '', commitTimestamp: now };
    records.push({ kind: 'offset', groupId: request.groupId, topic: entry.topic, partition: entry.partition, value });
    pending.push({ groupId: request.groupId, topic: entry.topic, partition: entry.partition, value });
  });
  if (records.length === 0) return errors;
  try {
    await coordinator.persistence.append(request.groupId, records, { producerId: request.producerId, producerEpoch: request.producerEpoch });
  } catch (error) {
    const failed = txnStoreErrorOf(error);
    return errors.map((e) => (e === 'NONE' ? failed : e));
  }
  addPendingTxnOffsets(coordinator, request.producerId, pending);
  return errors;
}

/** A stale epoch refused by the partition is the client's fencing error; the rest as plain commits. */
function txnStoreErrorOf(error: unknown): GroupErrorName {
  const kafka = (error as { kafka?: unknown } | null)?.kafka;
  if (kafka === 'INVALID_PRODUCER_EPOCH' || kafka === 'PRODUCER_FENCED') return 'PRODUCER_FENCED';
  return storeErrorOf(error, 'INVALID_COMMIT_OFFSET_SIZE');
}

export function addPendingTxnOffsets(coordinator: GroupCoordinator, producerId: number, offsets: readonly PendingTxnOffset[]): void {
  let byKey = coordinator.pendingTxnOffsets.get(producerId);
  if (byKey === undefined) {
    byKey = new Map();
    coordinator.pendingTxnOffsets.set(producerId, byKey);
  }
  for (const offset of offsets) byKey.set(`${offset.groupId}\u0000${offsetKey(offset.topic, offset.partition)}`, offset);
}

/** The producer's transaction ended: its pending offsets become committed ones (COMMIT) or are dropped (ABORT). */
export function completeTxnOffsets(coordinator: GroupCoordinator, producerId: number, commit: boolean): void {
  const byKey = coordinator.pendingTxnOffsets.get(producerId);
  if (byKey === undefined) return;
  coordinator.pendingTxnOffsets.delete(producerId);
  if (!commit) return;
  for (const offset of byKey.values()) {
    coordinator.groupOrCreate(offset.groupId).offsets.set(offsetKey(offset.topic, offset.partition), offset.value);
  }
}
