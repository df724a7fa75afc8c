// The transaction APIs over the wire (raw protocol client, a real Broker on
// loopback): AddPartitionsToTxn v3 and v4 (batched, VerifyOnly), unknown
// partitions, the PRODUCER_FENCED / INVALID_PRODUCER_EPOCH mapping by version,
// TxnOffsetCommit without AddOffsetsToTxn, DescribeTransactions and
// ListTransactions with their filters, EndTxn, and Produce's verification of
// transactional batches against the transaction (KIP-890 part 1).

import { buildBatch } from '@seglog/records';
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

  describe('Produce of a transactional batch (KIP-890 part 1: the partition must be in the transaction)', () => {
    const VT = 'wv';
    const endOffset = async (partition: number): Promise<number | undefined> => (await c.request('LIST_OFFSETS', 7, {
      replicaId: -1, isolationLevel: 0, topics: [{ name: VT, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp: -1, maxNumOffsets: 1 }] }],
    })).body.topics[0]?.partitions[0]?.offset;
    const produceTxn = async (
      transactionalId: string | null, p: { producerId: number; producerEpoch: number }, partition: number, sequence: number, values: string[],
    ): Promise<{ errorCode: number | undefined; baseOffset: number | undefined }> => {
      const records = buildBatch({
        records: values.map((value) => ({ value, timestamp: Date.now() })),
        producerId: p.producerId, producerEpoch: p.producerEpoch, baseSequence: sequence, transactional: true,
      });
      const r = await c.request('PRODUCE', 9, { transactionalId, acks: -1, timeoutMs: 5000, topicData: [{ name: VT, partitionData: [{ index: partition, records }] }] });
      const answer = r.body.responses[0]?.partitionResponses[0];
      return { errorCode: answer?.errorCode, baseOffset: answer?.baseOffset };
    };

    beforeAll(async () => {
      const created = await c.request('CREATE_TOPICS', 4, { topics: [{ name: VT, numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false });
      expect(created.body.topics[0]?.errorCode).toBe(E.NONE);
    });

    it('is refused (INVALID_TXN_STATE, nothing appended) until AddPartitionsToTxn, accepted after, refused again once committed', async () => {
      const p = await init('w-v');
      expect([await endOffset(0), await endOffset(1)]).toEqual([0, 0]);
      // (1) Never added: refused, the partition's end offset stays.
      expect(await produceTxn('w-v', p, 0, 0, ['a', 'b'])).toEqual({ errorCode: E.INVALID_TXN_STATE, baseOffset: -1 });
      expect(await endOffset(0)).toBe(0);
      // (2) Added: the same batch is appended; a partition not added (1) is still refused.
      expect(await addV3('w-v', p, [{ name: VT, partitions: [0] }])).toEqual([E.NONE]);
      expect(await produceTxn('w-v', p, 1, 0, ['x'])).toEqual({ errorCode: E.INVALID_TXN_STATE, baseOffset: -1 });
      expect(await produceTxn('w-v', p, 0, 0, ['a', 'b'])).toEqual({ errorCode: E.NONE, baseOffset: 0 });
      expect([await endOffset(0), await endOffset(1)]).toEqual([2, 0]);
      // (3) Committed (the COMMIT marker is offset 2): the transaction holds no partition any more.
      const end = await c.request('END_TXN', 3, { transactionalId: 'w-v', producerId: p.producerId, producerEpoch: p.producerEpoch, committed: true });
      expect(end.body.errorCode).toBe(E.NONE);
      expect(await endOffset(0)).toBe(3);
      expect(await produceTxn('w-v', p, 0, 2, ['c'])).toEqual({ errorCode: E.INVALID_TXN_STATE, baseOffset: -1 });
      expect(await endOffset(0)).toBe(3);
      // The next transaction adds the partition again and goes on with the producer's sequence.
      expect(await addV3('w-v', p, [{ name: VT, partitions: [0] }])).toEqual([E.NONE]);
      expect(await produceTxn('w-v', p, 0, 2, ['c'])).toEqual({ errorCode: E.NONE, baseOffset: 3 });
      const abort = await c.request('END_TXN', 3, { transactionalId: 'w-v', producerId: p.producerId, producerEpoch: p.producerEpoch, committed: false });
      expect(abort.body.errorCode).toBe(E.NONE);
      expect(await endOffset(0)).toBe(5);
    });

    it('checks the pair against the request\'s transactionalId: none, another id, a wrong producer id, an old epoch', async () => {
      const p = await init('w-v2');
      const other = await init('w-v3');
      expect(await addV3('w-v2', p, [{ name: VT, partitions: [1] }])).toEqual([E.NONE]);
      expect(await produceTxn(null, p, 1, 0, ['n'])).toEqual({ errorCode: E.INVALID_TXN_STATE, baseOffset: -1 });
      expect(await produceTxn('w-v3', p, 1, 0, ['n'])).toEqual({ errorCode: E.INVALID_TXN_STATE, baseOffset: -1 });
      expect(await produceTxn('w-v2', { producerId: other.producerId, producerEpoch: p.producerEpoch }, 1, 0, ['n'])).toEqual({ errorCode: E.INVALID_TXN_STATE, baseOffset: -1 });
      expect(await endOffset(1)).toBe(0);
      // A new producer of the id (InitProducerId aborts the open transaction first: CONCURRENT_TRANSACTIONS until done) fences the old epoch.
      let bumped: { errorCode: number; producerId: number; producerEpoch: number } = { errorCode: -1, producerId: -1, producerEpoch: -1 };
      for (let attempt = 0; attempt < 200; attempt++) {
        const r = await c.request('INIT_PRODUCER_ID', 4, { transactionalId: 'w-v2', transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
        bumped = { errorCode: r.body.errorCode, producerId: r.body.producerId, producerEpoch: r.body.producerEpoch };
        if (bumped.errorCode !== E.CONCURRENT_TRANSACTIONS) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(bumped.errorCode).toBe(E.NONE);
      expect(bumped.producerId).toBe(p.producerId);
      expect(bumped.producerEpoch).toBeGreaterThan(p.producerEpoch);
      const next = { producerId: bumped.producerId, producerEpoch: bumped.producerEpoch };
      expect(await addV3('w-v2', next, [{ name: VT, partitions: [1] }])).toEqual([E.NONE]);
      expect(await produceTxn('w-v2', p, 1, 0, ['old'])).toEqual({ errorCode: E.INVALID_PRODUCER_EPOCH, baseOffset: -1 });
      const atAbort = await endOffset(1);
      expect(await produceTxn('w-v2', next, 1, 0, ['new'])).toEqual({ errorCode: E.NONE, baseOffset: atAbort });
    });
  });
});
