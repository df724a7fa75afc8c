// Consume-transform-produce, exactly once, across SIGKILLs of the broker (a
// child process, --sync-on-ack). The loop is what a transactional stream
// processor does, spoken with the raw protocol client so every step is ours to
// count: fetch a slice of an input partition, AddPartitionsToTxn, produce the
// transformed records transactionally to the same output partition,
// AddOffsetsToTxn + TxnOffsetCommit (the input position), EndTxn(commit).
// After a kill the processor reconnects, InitProducerId (which completes or
// aborts what the dead broker left, answering CONCURRENT_TRANSACTIONS until
// then) and resumes from the group's committed offsets, as a restarted
// application does. Each kill lands right after a request is sent, before its
// answer, at a different step of a transaction per round (EndTxn sent: its
// offsets are pending and the transaction is likely still open; TxnOffsetCommit
// sent; the transactional Produce sent), chosen by counts, not by time.
//
// The transform turns input record i (value `r<i>`, on partition i % 2 at
// offset ⌊i / 2⌋) into the load payload of (producer 0, partition i % 2,
// sequence ⌊i / 2⌋), derived from the record's content, not the processor's
// position, so a slice processed twice shows up as sequences delivered twice.
// The verdict is the load client's ReadCommittedChecker, fed the raw
// read_committed Fetch answers of each output partition (small answers, so
// the aborted lists arrive piecewise as a consumer gets them): sequences
// 0 .. 119 of each partition delivered once, in order, intact; no aborted
// record delivered, no committed one dropped, no delivered transaction left
// without a marker. The aborted transactions the kills leave must be there
// (records filtered), and the committed input offsets are the input ends.

import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { buildBatch } from '@seglog/records';
import { KAFKA_ERROR_CODES } from '@seglog/broker';
import { ReadCommittedChecker, fillPayload } from '@seglog/load';
import type { AbortedTxn, ReadCommittedResult } from '@seglog/load';
import { RawClient } from '../packages/broker/test/raw-client.js';
import { fetch, produce, valuesOf } from '../packages/broker/test/broker-helpers.js';
import { startBrokerChild } from './lib/broker-process.js';
import type { BrokerChild } from './lib/broker-process.js';

const IN = 'ctp-in';
const OUT = 'ctp-out';
const GROUP = 'ctp-group';
const TID = 'ctp-tx';
const PARTITIONS = 2;
const RECORDS = 240;
const PER_PARTITION = RECORDS / PARTITIONS;
const OUT_RECORD_BYTES = 32;
/** Small read_committed answers: several per output partition, each with the aborted transactions of its range. */
const VERIFY_FETCH_BYTES = 1024;
const ROUNDS = 3; // = KILLS.length
const SLICE_BYTES = 900;
const E = KAFKA_ERROR_CODES;
const RETRIABLE: ReadonlySet<number> = new Set([E.COORDINATOR_LOAD_IN_PROGRESS, E.CONCURRENT_TRANSACTIONS, E.COORDINATOR_NOT_AVAILABLE]);
const RETRY_LIMIT = 600;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

const pause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));

type Step = 'init' | 'offsets' | 'fetch' | 'add' | 'produce' | 'addOffsets' | 'txnCommit' | 'endTxn';

/** Where a round's kill lands: right after sending `step` of the `slice`-th transaction of the session. */
interface KillPoint {
  readonly slice: number;
  readonly step: Step;
}

const KILLS: readonly KillPoint[] = [{ slice: 3, step: 'endTxn' }, { slice: 5, step: 'txnCommit' }, { slice: 4, step: 'produce' }];

/**
 * The processor's side of one broker incarnation: a connection that kills the
 * broker right after sending the kill point's request. `killed` tells the
 * round's error handler whether an error can be the kill's.
 */
class Session {
  slices = 0;
  killed = false;
  constructor(readonly client: RawClient, readonly kill: KillPoint | null, readonly victim: BrokerChild | null) {}

  async call<T>(step: Step, send: () => Promise<T>): Promise<T> {
    const answer = send();
    if (step === 'fetch') this.slices++;
    if (this.victim !== null && this.kill !== null && this.kill.slice === this.slices && this.kill.step === step) {
      this.killed = true;
      this.victim.child.kill('SIGKILL');
    }
    return answer;
  }
}

interface Producer {
  producerId: number;
  producerEpoch: number;
  /** Next sequence per output partition (0 after each InitProducerId). */
  sequences: number[];
}

async function initProducer(s: Session): Promise<Producer> {
  for (let attempt = 0; attempt < RETRY_LIMIT; attempt++) {
    const r = await s.call('init', () => s.client.request('INIT_PRODUCER_ID', 4, { transactionalId: TID, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 }));
    if (r.body.errorCode === E.NONE) return { producerId: r.body.producerId, producerEpoch: r.body.producerEpoch, sequences: [0, 0] };
    if (!RETRIABLE.has(r.body.errorCode)) throw new Error(`InitProducerId: error ${r.body.errorCode}`);
    await pause();
  }
  throw new Error('InitProducerId never succeeded');
}

async function committedPositions(s: Session): Promise<number[]> {
  for (let attempt = 0; attempt < RETRY_LIMIT; attempt++) {
    const r = await s.call('offsets', () => s.client.request('OFFSET_FETCH', 7, {
      groupId: GROUP, topics: [{ name: IN, partitionIndexes: [0, 1] }], groups: [], requireStable: true,
    }));
    if (r.body.errorCode === E.NONE) return (r.body.topics[0]?.partitions ?? []).map((p) => Math.max(0, p.committedOffset));
    if (!RETRIABLE.has(r.body.errorCode)) throw new Error(`OffsetFetch: error ${r.body.errorCode}`);
    await pause();
  }
  throw new Error('OffsetFetch never succeeded');
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function ok(what: string, code: number | undefined): void {
  if (code !== E.NONE) throw new Error(`${what}: error ${String(code)}`);
}

/** The transform: input `r<i>` of partition p → the load payload of (producer 0, p, ⌊i / PARTITIONS⌋). */
function transform(value: string, p: number): Buffer {
  const i = Number(value.slice(1));
  if (!Number.isInteger(i) || i % PARTITIONS !== p) throw new Error(`input partition ${p} holds ${JSON.stringify(value)}`);
  const out = Buffer.alloc(OUT_RECORD_BYTES);
  fillPayload(out, 0, OUT_RECORD_BYTES, { producer: 0, partition: p, sequence: (i - p) / PARTITIONS });
  return out;
}

function newChecker(): ReadCommittedChecker {
  return new ReadCommittedChecker({
    partitions: PARTITIONS, producers: 1, recordBytes: OUT_RECORD_BYTES, payload: 'random',
    expectedRecords: Array.from({ length: PARTITIONS }, () => PER_PARTITION), maxViolationsReported: 20,
  });
}

interface Answer {
  readonly records: Buffer | null;
  readonly aborted: readonly AbortedTxn[] | null;
}

/**
 * Feeds `checker` the read_committed Fetch answers of output partition p, from
 * offset 0 until the checker has passed the high watermark and nothing is
 * left unstable. Returns the answers (copies), for the canary below.
 */
async function readCommitted(client: RawClient, checker: ReadCommittedChecker, p: number): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let attempt = 0; attempt < RETRY_LIMIT; attempt++) {
    const fetched = await client.request('FETCH', 12, fetch(OUT, checker.nextOffset(p), { maxBytes: VERIFY_FETCH_BYTES, isolationLevel: 1 }, p));
    const part = fetched.body.responses[0]?.partitions[0];
    ok('read_committed Fetch', part?.errorCode);
    if (part === undefined) throw new Error('read_committed Fetch: no partition answer');
    const answer: Answer = { records: Buffer.isBuffer(part.records) ? Buffer.from(part.records) : null, aborted: part.abortedTransactions };
    const batches = checker.checkFetch(p, answer.records, answer.aborted);
    if (batches > 0) answers.push(answer);
    if (checker.nextOffset(p) >= part.highWatermark && part.lastStableOffset === part.highWatermark) return answers;
    if (batches === 0) await pause(); // the LSO is behind: a marker is still being written
  }
  throw new Error(`hang guard: output partition ${p} read_committed stopped at offset ${checker.nextOffset(p)}`);
}

/** One transaction: a slice of input partition p to output partition p, with the input position. Returns the records processed. */
async function processSlice(s: Session, producer: Producer, p: number, position: number): Promise<number> {
  const fetched = await s.call('fetch', () => s.client.request('FETCH', 12, fetch(IN, position, { maxBytes: SLICE_BYTES }, p)));
  const part = fetched.body.responses[0]?.partitions[0];
  ok('Fetch', part?.errorCode);
  const values = valuesOf(part?.records);
  // The slice starts at `position` (input batches are produced one record per batch, below).
  if (values.length === 0) return 0;
  const txn = { transactionalId: TID, producerId: producer.producerId, producerEpoch: producer.producerEpoch };
  const added = await s.call('add', () => s.client.request('ADD_PARTITIONS_TO_TXN', 3, {
    transactions: [], v3AndBelowTransactionalId: TID, v3AndBelowProducerId: txn.producerId, v3AndBelowProducerEpoch: txn.producerEpoch,
    v3AndBelowTopics: [{ name: OUT, partitions: [p] }],
  }));
  ok('AddPartitionsToTxn', added.body.resultsByTopicV3AndBelow[0]?.resultsByPartition[0]?.partitionErrorCode);
  const records = buildBatch({
    records: values.map((v) => ({ value: transform(v, p), timestamp: Date.now() })),
    producerId: txn.producerId, producerEpoch: txn.producerEpoch, baseSequence: producer.sequences[p] ?? 0, transactional: true,
  });
  const produced = await s.call('produce', () => s.client.request('PRODUCE', 9, { ...produce(OUT, records, -1, p), transactionalId: TID }));
  ok('Produce', produced.body.responses[0]?.partitionResponses[0]?.errorCode);
  producer.sequences[p] = (producer.sequences[p] ?? 0) + values.length;
  const offsets = await s.call('addOffsets', () => s.client.request('ADD_OFFSETS_TO_TXN', 3, { ...txn, groupId: GROUP }));
  ok('AddOffsetsToTxn', offsets.body.errorCode);
  const committed = await s.call('txnCommit', () => s.client.request('TXN_OFFSET_COMMIT', 3, {
    ...txn, groupId: GROUP, generationId: -1, memberId: '', groupInstanceId: null,
    topics: [{ name: IN, partitions: [{ partitionIndex: p, committedOffset: position + values.length, committedLeaderEpoch: -1, committedMetadata: null }] }],
  }));
  ok('TxnOffsetCommit', committed.body.topics[0]?.partitions[0]?.errorCode);
  const ended = await s.call('endTxn', () => s.client.request('END_TXN', 3, { ...txn, committed: true }));
  ok('EndTxn', ended.body.errorCode);
  return values.length;
}

describe('consume-transform-produce under SIGKILL (--sync-on-ack)', () => {
  let dir: string;
  let child: BrokerChild | null = null;

  afterEach(() => {
    child?.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('processes every input record exactly once across three kills', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'seglog-txn-kill9-'));
    const port = await freePort();
    const args = ['--data-dir', dir, '--sync-on-ack', '--offsets-topic-partitions', '2', '--transaction-state-topic-partitions', '2', '--port', String(port)];
    child = await startBrokerChild(args);
    {
      const setup = await RawClient.connect(child.port);
      for (const name of [IN, OUT]) {
        await setup.request('CREATE_TOPICS', 4, { topics: [{ name, numPartitions: PARTITIONS, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false });
      }
      // One record per batch, so a fetch slice always starts exactly at the requested offset.
      for (let i = 0; i < RECORDS; i++) {
        const answer = await setup.request('PRODUCE', 9, produce(IN, buildBatch({ records: [{ value: `r${i}`, timestamp: Date.now() }] }), -1, i % PARTITIONS));
        ok('input Produce', answer.body.responses[0]?.partitionResponses[0]?.errorCode);
      }
      setup.close();
    }
    let kills = 0;
    let done = false;
    for (let round = 0; !done; round++) {
      expect(round, 'rounds needed').toBeLessThanOrEqual(ROUNDS + 1);
      const victim = round < ROUNDS ? child : null;
      const s = new Session(await RawClient.connect(child.port), KILLS[round] ?? null, victim);
      try {
        const producer = await initProducer(s);
        const positions = await committedPositions(s);
        for (let step = 0; ; step++) {
          const p = step % PARTITIONS;
          const position = positions[p] ?? 0;
          const processed = await processSlice(s, producer, p, position);
          positions[p] = position + processed;
          if (positions.reduce((a, b) => a + b, 0) === RECORDS) break;
        }
        done = true;
      } catch (error) {
        // The kill: the connection is gone mid-transaction. Any error before
        // it is the test's failure (else `victim.exited` below waits forever).
        if (!s.killed) throw new Error(`round ${round}: ${errorText(error)} before the kill point was sent`, { cause: error });
      }
      s.client.close();
      if (victim !== null) {
        expect(s.killed, `round ${round} reached its kill point ${JSON.stringify(KILLS[round])}`).toBe(true);
        await victim.exited;
        kills++;
        child = await startBrokerChild(args);
      }
    }
    expect(kills).toBe(ROUNDS);

    // The verdict: the read_committed checker over each output partition's raw Fetch answers.
    const check = await RawClient.connect(child.port);
    const checker = newChecker();
    const answers: Answer[][] = [];
    for (let p = 0; p < PARTITIONS; p++) answers.push(await readCommitted(check, checker, p));
    const result: ReadCommittedResult = checker.finish();
    expect(result.violations, `${result.violationCount} violations`).toEqual([]);
    expect(result.recordsCommitted).toBe(RECORDS);
    // The kills at TxnOffsetCommit and at Produce leave transactions with
    // produced records that recovery aborts: the filter had work to do.
    expect(result.abortMarkers).toBeGreaterThanOrEqual(2);
    expect(result.recordsAborted).toBeGreaterThan(0);

    // Canary: the same answers with partition 0's first answer fed again
    // after the others (its batches a second time) must be reported.
    const canary = newChecker();
    for (let p = 0; p < PARTITIONS; p++) for (const a of answers[p] ?? []) canary.checkFetch(p, a.records, a.aborted);
    const first = answers[0]?.[0];
    expect(first).toBeDefined();
    canary.checkFetch(0, first?.records ?? null, first?.aborted ?? null);
    const broken = canary.finish();
    expect(broken.violations.some((v) => /^partition 0: .*\(overlap\)/.test(v))).toBe(true);
    expect(broken.violations.some((v) => /^partition 0: producer 0 sequence 0 delivered again .*duplicate/.test(v))).toBe(true);

    const final = await committedPositions(new Session(check, null, null));
    expect(final).toEqual([PER_PARTITION, PER_PARTITION]);
    check.close();
  });
});
