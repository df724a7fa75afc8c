// The transaction APIs over the wire (raw protocol client, a real Broker on
// loopback): AddPartitionsToTxn v3 and v4 (batched, VerifyOnly), unknown
// partitions, the PRODUCER_FENCED / INVALID_PRODUCER_EPOCH mapping by version,
// TxnOffsetCommit without AddOffsetsToTxn, DescribeTransactions and
// ListTransactions with their filters, and EndTxn.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Broker, KAFKA_ERROR_CODES as E } from '../src/index.js';
import { offsetsPartitionFor } from '../src/internal/group/offsets-topic.js';
import { RawClient } from './raw-client.js';

const TOPIC = 'wt';

describe('transaction APIs over the wire', () => {
  let dir: string;
  let broker: Broker;
  let c: RawClient;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-txn-wire-'));
    broker = await Broker.start({ dataDir: dir, port: 0, offsetsTopicPartitions: 2, transactionStateTopicPartitions: 2, log: () => undefined });
    await broker.groupsReady();
    c = await RawClient.connect(broker.port);
    await c.request('CREATE_TOPICS', 4, { topics: [{ name: TOPIC, numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false });
  });

  afterAll(async () => {
    c.close();
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const init = async (transactionalId: string): Promise<{ producerId: number; producerEpoch: number }> => {
    const r = await c.request('INIT_PRODUCER_ID', 4, { transactionalId, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
    expect(r.body.errorCode).toBe(E.NONE);
    return { producerId: r.body.producerId, producerEpoch: r.body.producerEpoch };
  };

  const addV3 = async (transactionalId: string, p: { producerId: number; producerEpoch: number }, topics: { name: string; partitions: number[] }[], version = 3): Promise<number[]> => {
    const r = await c.request('ADD_PARTITIONS_TO_TXN', version, {
      transactions: [], v3AndBelowTransactionalId: transactionalId, v3AndBelowProducerId: p.producerId, v3AndBelowProducerEpoch: p.producerEpoch, v3AndBelowTopics: topics,
    });
    return r.body.resultsByTopicV3AndBelow.flatMap((t) => t.resultsByPartition.map((x) => x.partitionErrorCode));
  };

  it('adds partitions (v3, and v4 batched with VerifyOnly); an unknown partition fails the request', async () => {
    const a = await init('w-a');
    const b = await init('w-b');
    expect(await addV3('w-a', a, [{ name: TOPIC, partitions: [0, 1] }])).toEqual([E.NONE, E.NONE]);
    expect(await addV3('w-b', b, [{ name: TOPIC, partitions: [0] }, { name: 'nope', partitions: [0] }]))
      .toEqual([E.OPERATION_NOT_ATTEMPTED, E.UNKNOWN_TOPIC_OR_PARTITION]);
    const batched = await c.request('ADD_PARTITIONS_TO_TXN', 4, {
      transactions: [
        { transactionalId: 'w-a', producerId: a.producerId, producerEpoch: a.producerEpoch, verifyOnly: true, topics: [{ name: TOPIC, partitions: [0, 1] }] },
        { transactionalId: 'w-b', producerId: b.producerId, producerEpoch: b.producerEpoch, verifyOnly: true, topics: [{ name: TOPIC, partitions: [1] }] },
        { transactionalId: 'w-b', producerId: b.producerId, producerEpoch: b.producerEpoch, verifyOnly: false, topics: [{ name: TOPIC, partitions: [1] }] },
      ],
      v3AndBelowTransactionalId: '', v3AndBelowProducerId: 0, v3AndBelowProducerEpoch: 0, v3AndBelowTopics: [],
    });
    expect(batched.body.resultsByTransaction.map((t) => [t.transactionalId, t.topicResults.flatMap((x) => x.resultsByPartition.map((y) => y.partitionErrorCode))]))
      .toEqual([['w-a', [E.NONE, E.NONE]], ['w-b', [E.INVALID_TXN_STATE]], ['w-b', [E.NONE]]]);

    const described = await c.request('DESCRIBE_TRANSACTIONS', 0, { transactionalIds: ['w-a', 'missing'] });
    expect(described.body.transactionStates.map((t) => [t.transactionalId, t.errorCode, t.transactionState, t.producerId, t.topics])).toEqual([
      ['w-a', E.NONE, 'Ongoing', a.producerId, [{ topic: TOPIC, partitions: [0, 1] }]],
      ['missing', E.TRANSACTIONAL_ID_NOT_FOUND, '', -1, []],
    ]);
    const ongoing = await c.request('LIST_TRANSACTIONS', 1, { stateFilters: ['Ongoing', 'Bogus'], producerIdFilters: [], durationFilter: -1 });
    expect(ongoing.body.unknownStateFilters).toEqual(['Bogus']);
    expect(ongoing.body.transactionStates.map((t) => t.transactionalId).sort()).toEqual(['w-a', 'w-b']);
    const byId = await c.request('LIST_TRANSACTIONS', 0, { stateFilters: [], producerIdFilters: [b.producerId], durationFilter: -1 });
    expect(byId.body.transactionStates.map((t) => t.transactionalId)).toEqual(['w-b']);

    const end = await c.request('END_TXN', 3, { transactionalId: 'w-a', producerId: a.producerId, producerEpoch: a.producerEpoch, committed: true });
    expect(end.body.errorCode).toBe(E.NONE);
    const again = await c.request('END_TXN', 3, { transactionalId: 'w-a', producerId: a.producerId, producerEpoch: a.producerEpoch, committed: false });
    expect(again.body.errorCode).toBe(E.INVALID_TXN_STATE);
    const complete = await c.request('LIST_TRANSACTIONS', 1, { stateFilters: ['CompleteCommit'], producerIdFilters: [], durationFilter: -1 });
    expect(complete.body.transactionStates.map((t) => t.transactionalId)).toEqual(['w-a']);
  });

  it('an old epoch is PRODUCER_FENCED from v2 (EndTxn, AddPartitionsToTxn), INVALID_PRODUCER_EPOCH before', async () => {
    const old = await init('w-f');
    await init('w-f');
    for (const [version, code] of [[1, E.INVALID_PRODUCER_EPOCH], [2, E.PRODUCER_FENCED]] as const) {
      const end = await c.request('END_TXN', version, { transactionalId: 'w-f', producerId: old.producerId, producerEpoch: old.producerEpoch, committed: true });
      expect(end.body.errorCode, `EndTxn v${version}`).toBe(code);
      expect(await addV3('w-f', old, [{ name: TOPIC, partitions: [0] }], version), `AddPartitionsToTxn v${version}`).toEqual([code]);
    }
  });

  it('TxnOffsetCommit needs AddOffsetsToTxn first; then the offsets count only once committed', async () => {
    const p = await init('w-o');
    const commit = (offset: number) => c.request('TXN_OFFSET_COMMIT', 3, {
      transactionalId: 'w-o', groupId: 'w-group', producerId: p.producerId, producerEpoch: p.producerEpoch, generationId: -1, memberId: '', groupInstanceId: null,
      topics: [{ name: TOPIC, partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
    expect(await addV3('w-o', p, [{ name: TOPIC, partitions: [0] }])).toEqual([E.NONE]);
    expect((await commit(5)).body.topics[0]?.partitions[0]?.errorCode).toBe(E.INVALID_TXN_STATE);
    const added = await c.request('ADD_OFFSETS_TO_TXN', 3, { transactionalId: 'w-o', producerId: p.producerId, producerEpoch: p.producerEpoch, groupId: 'w-group' });
    expect(added.body.errorCode).toBe(E.NONE);
    expect((await commit(5)).body.topics[0]?.partitions[0]?.errorCode).toBe(E.NONE);
    const fetchOffset = async (): Promise<number | undefined> => (await c.request('OFFSET_FETCH', 7, {
      groupId: 'w-group', topics: [{ name: TOPIC, partitionIndexes: [0] }], groups: [], requireStable: false,
    })).body.topics[0]?.partitions[0]?.committedOffset;
    expect(await fetchOffset()).toBe(-1);
    const end = await c.request('END_TXN', 3, { transactionalId: 'w-o', producerId: p.producerId, producerEpoch: p.producerEpoch, committed: true });
    expect(end.body.errorCode).toBe(E.NONE);
    expect(await fetchOffset()).toBe(5);
  });

  it('one transaction commits offsets of two groups on different __consumer_offsets partitions, twice each', async () => {
    const groups = ['w-g0', 'w-g1', 'w-g2', 'w-g3', 'w-g4'];
    const first = groups.find((g) => offsetsPartitionFor(g, 2) === 0);
    const second = groups.find((g) => offsetsPartitionFor(g, 2) === 1);
    if (first === undefined || second === undefined) throw new Error('no groups on both partitions');
    const p = await init('w-2g');
    expect(await addV3('w-2g', p, [{ name: TOPIC, partitions: [1] }])).toEqual([E.NONE]);
    for (const groupId of [first, second]) {
      const added = await c.request('ADD_OFFSETS_TO_TXN', 3, { transactionalId: 'w-2g', producerId: p.producerId, producerEpoch: p.producerEpoch, groupId });
      expect(added.body.errorCode).toBe(E.NONE);
    }
    for (const offset of [3, 4]) {
      for (const groupId of [first, second]) {
        const r = await c.request('TXN_OFFSET_COMMIT', 3, {
          transactionalId: 'w-2g', groupId, producerId: p.producerId, producerEpoch: p.producerEpoch, generationId: -1, memberId: '', groupInstanceId: null,
          topics: [{ name: TOPIC, partitions: [{ partitionIndex: 1, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null }] }],
        });
        expect(r.body.topics[0]?.partitions[0]?.errorCode, `${groupId} at ${offset}`).toBe(E.NONE);
      }
    }
    const end = await c.request('END_TXN', 3, { transactionalId: 'w-2g', producerId: p.producerId, producerEpoch: p.producerEpoch, committed: true });
    expect(end.body.errorCode).toBe(E.NONE);
    for (const groupId of [first, second]) {
      const r = await c.request('OFFSET_FETCH', 7, { groupId, topics: [{ name: TOPIC, partitionIndexes: [1] }], groups: [], requireStable: false });
      expect(r.body.topics[0]?.partitions[0]?.committedOffset, groupId).toBe(4);
    }
  });
});
