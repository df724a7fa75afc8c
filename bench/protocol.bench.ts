// The generic protocol codec (@seglog/protocol MessageCodec, a compiled plan
// walked by a loop) against the broker's hand-written codecs on the hot
// path: decoding Produce requests and encoding Fetch responses (10 topics ×
// 10 partitions, 1 KiB record slices, so the work is the message structure,
// not the bytes). Baseline for the ratio: the hand-written codec.
import {
  ProtocolReader as BrokerReader, ProtocolWriter as BrokerWriter, decodeProduceRequest, encodeFetchResponse,
} from '@seglog/broker';
import { FETCH_RESPONSE, MessageCodec, PRODUCE_REQUEST, ProtocolReader, ProtocolWriter } from '@seglog/protocol';
import { fmtRate, printTable, runCases, type BenchOptions, type Case } from './lib/harness.js';

const TOPICS = 10;
const PARTITIONS = 10;

function produceRequest(): Record<string, unknown> {
  const records = Buffer.alloc(1024, 7);
  return {
    transactionalId: null, acks: -1, timeoutMs: 30_000,
    topicData: Array.from({ length: TOPICS }, (_, t) => ({
      name: `topic-${t}`,
      partitionData: Array.from({ length: PARTITIONS }, (_, index) => ({ index, records })),
    })),
  };
}

function fetchResponse(): Record<string, unknown> {
  const records = Buffer.alloc(1024, 9);
  return {
    throttleTimeMs: 0, errorCode: 0, sessionId: 0,
    responses: Array.from({ length: TOPICS }, (_, t) => ({
      topic: `topic-${t}`,
      partitions: Array.from({ length: PARTITIONS }, (_, partitionIndex) => ({
        partitionIndex, errorCode: 0, highWatermark: 1_000_000 + partitionIndex, lastStableOffset: 1_000_000,
        logStartOffset: 0, abortedTransactions: null, preferredReadReplica: -1, records,
      })),
    })),
  };
}

function frameOf(parts: readonly unknown[]): Buffer {
  return Buffer.concat(parts as Buffer[]);
}

export async function run(options: BenchOptions): Promise<void> {
  const messages = options.quick ? 2_000 : 50_000;
  const produceCodec = new MessageCodec(PRODUCE_REQUEST);
  const fetchCodec = new MessageCodec(FETCH_RESPONSE);
  const rows: string[][] = [['case', 'median', 'min-max', 'vs hand-written', 'checksum']];
  for (const version of [3, 9]) {
    const writer = new ProtocolWriter();
    produceCodec.write(writer, version, produceRequest());
    const frame = frameOf(writer.finish().parts);
    const cases: Case[] = [
      {
        name: `Produce v${version} request decode, hand-written`,
        run: () => {
          let c = 0;
          for (let i = 0; i < messages; i++) c = (c + decodeProduceRequest(new BrokerReader(frame), version).topicData.length) >>> 0;
          return { units: messages, checksum: c };
        },
      },
      {
        name: `Produce v${version} request decode, generic`,
        run: () => {
          let c = 0;
          for (let i = 0; i < messages; i++) c = (c + (produceCodec.decode(new ProtocolReader(frame), version)['topicData'] as unknown[]).length) >>> 0;
          return { units: messages, checksum: c };
        },
      },
    ];
    addRows(rows, await runCases(cases, options));
  }
  for (const version of [4, 12]) {
    const body = fetchResponse();
    const brokerWriter = new BrokerWriter(4096);
    const writer = new ProtocolWriter(4096);
    const cases: Case[] = [
      {
        name: `Fetch v${version} response encode, hand-written`,
        run: () => {
          let c = 0;
          for (let i = 0; i < messages; i++) {
            encodeFetchResponse(brokerWriter, version, body as never);
            c = (c + brokerWriter.finish().totalBytes) >>> 0;
          }
          return { units: messages, checksum: c };
        },
      },
      {
        name: `Fetch v${version} response encode, generic`,
        run: () => {
          let c = 0;
          for (let i = 0; i < messages; i++) {
            fetchCodec.write(writer, version, body);
            c = (c + writer.finish().totalBytes) >>> 0;
          }
          return { units: messages, checksum: c };
        },
      },
    ];
    addRows(rows, await runCases(cases, options));
  }
  printTable(rows);
  console.log(`messages per round: ${messages}; ${TOPICS} topics × ${PARTITIONS} partitions per message`);
}

function addRows(rows: string[][], results: Awaited<ReturnType<typeof runCases>>): void {
  const baseline = results[0];
  for (const result of results) {
    rows.push([
      result.name, fmtRate(result.median, 'msg'), `${fmtRate(result.min, '')}–${fmtRate(result.max, '')}`,
      baseline === undefined ? '' : `${(result.median / baseline.median).toFixed(2)}x`, String(result.checksum),
    ]);
  }
}
