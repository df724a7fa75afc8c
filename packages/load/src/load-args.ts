// Parsing of `pnpm load`'s command line into LoadOptions (names in
// kebab-case, see USAGE). Usage mistakes are SEGLOG_ERR_LOAD_USAGE.

import type { CodecName } from '@seglog/records';
import { parseArgs } from 'node:util';
import { GROUP_ASSIGNORS } from './group-assignor.js';
import type { GroupAssignor } from './group-assignor.js';
import { LoadErrorCode, loadError } from './load-error.js';
import type { LoadOptions } from './load-options.js';
import { PAYLOAD_KINDS } from './payload.js';
import type { PayloadKind } from './payload.js';

export const LOAD_USAGE = `usage: pnpm load [--] (or: seglog-load) --topic T (--records N | --duration-ms D) [options]
  --bootstrap HOST:PORT      broker (default 127.0.0.1:9092; loopback)
  --topic T                  topic (default seglog-load)
  --partitions N             partitions used, round-robin (default 16)
  --producers P              producer connections (default 1)
  --record-bytes B           value bytes per record, >= 12 (default 100)
  --records N                records in all, spread over the producers
  --duration-ms D            or: produce for D ms
  --rate R                   records/s over all producers (default: closed loop, as fast as acks allow)
  --produce-chunk N          records per producing-task turn, yielding to the event loop between turns
                             (default: closed loop, the accumulator filled before each send)
  --produce-tasks T          producing tasks per producer with --produce-chunk (default 4)
  --acks 1|-1|0              (default -1)
  --idempotent               InitProducerId per producer, sequences per partition (needs acks=-1)
  --compression C            none|gzip|snappy|lz4|zstd (default none)
  --linger-ms L              linger.ms (default 1)
  --batch-bytes B            batch.size, uncompressed (default 16384)
  --streaming-compression    batches bounded by compressed size; a backlog is compressed once into one batch
  --max-batch-bytes B        the broker's max.message.bytes, bound of a compressed batch (default 1048588)
  --buffer-bytes B           buffer.memory per producer with --streaming-compression (default 33554432)
  --merge-workers N          threads that compress merged batches with --streaming-compression, 0..64; 0 merges
                             on the producing thread (default: cores - 1, 1..4)
  --merge-deadline-ms MS     a merge not answered in MS fails, its worker is replaced and merging demotes
                             to the uncompressed-bounded path (default 10000)
  --payload K                random (incompressible) | text (~5x compressible) (default random)
  --max-in-flight N          produce requests in flight per connection (default 5)
  --max-request-bytes B      bound of one produce request, packed by exact batch bytes (default 104857600)
  --create-topic             CreateTopics first (an existing topic is accepted)
  --no-verify                skip the consume-and-check phase
  --broker-pid PID           measure the broker's CPU from /proc/PID/stat
  --request-timeout-ms MS    per request (default 30000)
  --group G                  consume as consumer group G (JoinGroup/SyncGroup, heartbeats, commits) instead of
                             fetching every partition directly
  --consumers N              group members (default 1), each with its own connections
  --assignor A               range|roundrobin (default range), run by the group's leader
  --session-timeout-ms MS    session.timeout.ms (default 45000)
  --rebalance-timeout-ms MS  JoinGroup rebalance timeout, max.poll.interval.ms (default 300000)
  --heartbeat-interval-ms MS heartbeat.interval.ms (default 3000)
  --auto-commit-interval-ms MS  auto.commit.interval.ms: each member commits this often and at the end (default 5000)
  --json                     print the report as JSON
  --help`;

function int(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  const x = Number(value);
  if (!Number.isSafeInteger(x) || x < min) throw loadError(LoadErrorCode.USAGE, `--${name} must be an integer >= ${min}, got '${value}'`);
  return x;
}

const CODECS: readonly string[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

export function parseLoadArgs(argv: readonly string[]): { options: Partial<LoadOptions>; json: boolean } | 'help' {
  const raw = argv[0] === '--' ? argv.slice(1) : [...argv];
  // node's parseArgs takes '-1' after '--acks' for an option; join it as '--acks=-1'.
  const args: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    const next = raw[i + 1];
    if (raw[i] === '--acks' && next !== undefined && /^-\d+$/.test(next)) {
      args.push(`--acks=${next}`);
      i++;
    } else {
      args.push(raw[i] as string);
    }
  }
  let values;
  try {
    ({ values } = parseArgs({
      args, strict: true, allowPositionals: false,
      options: {
        bootstrap: { type: 'string' }, topic: { type: 'string' }, partitions: { type: 'string' }, producers: { type: 'string' },
        'record-bytes': { type: 'string' }, records: { type: 'string' }, 'duration-ms': { type: 'string' }, rate: { type: 'string' },
        'produce-chunk': { type: 'string' }, 'produce-tasks': { type: 'string' },
        acks: { type: 'string' }, idempotent: { type: 'boolean' }, compression: { type: 'string' }, 'linger-ms': { type: 'string' },
        'batch-bytes': { type: 'string' }, 'max-in-flight': { type: 'string' }, 'max-request-bytes': { type: 'string' }, 'create-topic': { type: 'boolean' },
        'streaming-compression': { type: 'boolean' }, 'max-batch-bytes': { type: 'string' }, 'buffer-bytes': { type: 'string' },
        'merge-workers': { type: 'string' }, 'merge-deadline-ms': { type: 'string' }, payload: { type: 'string' },
        'no-verify': { type: 'boolean' }, 'broker-pid': { type: 'string' }, 'request-timeout-ms': { type: 'string' },
        group: { type: 'string' }, consumers: { type: 'string' }, assignor: { type: 'string' }, 'session-timeout-ms': { type: 'string' },
        'rebalance-timeout-ms': { type: 'string' }, 'heartbeat-interval-ms': { type: 'string' }, 'auto-commit-interval-ms': { type: 'string' },
        json: { type: 'boolean' }, help: { type: 'boolean' },
      },
    }));
  } catch (error) {
    throw loadError(LoadErrorCode.USAGE, (error as Error).message);
  }
  if (values.help === true) return 'help';
  const o: { -readonly [K in keyof LoadOptions]?: LoadOptions[K] } = {};
  if (values.bootstrap !== undefined) {
    const m = /^([^:]+):(\d+)$/.exec(values.bootstrap);
    if (m === null) throw loadError(LoadErrorCode.USAGE, `--bootstrap must be HOST:PORT, got '${values.bootstrap}'`);
    o.host = m[1] as string;
    o.port = Number(m[2]);
  }
  if (values.topic !== undefined) o.topic = values.topic;
  const set = <K extends keyof LoadOptions>(key: K, value: LoadOptions[K] | undefined): void => {
    if (value !== undefined) o[key] = value;
  };
  set('partitions', int('partitions', values.partitions, 1));
  set('producers', int('producers', values.producers, 1));
  set('recordBytes', int('record-bytes', values['record-bytes'], 1));
  set('records', int('records', values.records, 1));
  set('durationMs', int('duration-ms', values['duration-ms'], 1));
  set('produceChunk', int('produce-chunk', values['produce-chunk'], 1));
  set('produceTasks', int('produce-tasks', values['produce-tasks'], 1));
  set('lingerMs', int('linger-ms', values['linger-ms'], 0));
  set('batchBytes', int('batch-bytes', values['batch-bytes'], 1));
  set('maxBatchBytes', int('max-batch-bytes', values['max-batch-bytes'], 1));
  set('bufferBytes', int('buffer-bytes', values['buffer-bytes'], 1));
  set('mergeWorkers', int('merge-workers', values['merge-workers'], 0));
  set('mergeDeadlineMs', int('merge-deadline-ms', values['merge-deadline-ms'], 1));
  set('maxInFlight', int('max-in-flight', values['max-in-flight'], 1));
  set('maxRequestBytes', int('max-request-bytes', values['max-request-bytes'], 1));
  set('brokerPid', int('broker-pid', values['broker-pid'], 1));
  set('requestTimeoutMs', int('request-timeout-ms', values['request-timeout-ms'], 1));
  if (values.rate !== undefined) o.rate = Number(values.rate);
  if (values.acks !== undefined) {
    if (values.acks !== '-1' && values.acks !== '0' && values.acks !== '1' && values.acks !== 'all') throw loadError(LoadErrorCode.USAGE, `--acks must be 1, -1 (all) or 0, got '${values.acks}'`);
    o.acks = values.acks === 'all' ? -1 : (Number(values.acks) as -1 | 0 | 1);
  }
  if (values.compression !== undefined) {
    if (!CODECS.includes(values.compression)) throw loadError(LoadErrorCode.USAGE, `--compression must be one of ${CODECS.join(', ')}`);
    o.compression = values.compression as CodecName;
  }
  if (values.payload !== undefined) {
    if (!PAYLOAD_KINDS.includes(values.payload as PayloadKind)) throw loadError(LoadErrorCode.USAGE, `--payload must be one of ${PAYLOAD_KINDS.join(', ')}`);
    o.payload = values.payload as PayloadKind;
  }
  if (values.group !== undefined) o.group = values.group;
  set('consumers', int('consumers', values.consumers, 1));
  set('sessionTimeoutMs', int('session-timeout-ms', values['session-timeout-ms'], 1));
  set('rebalanceTimeoutMs', int('rebalance-timeout-ms', values['rebalance-timeout-ms'], 1));
  set('heartbeatIntervalMs', int('heartbeat-interval-ms', values['heartbeat-interval-ms'], 1));
  set('autoCommitIntervalMs', int('auto-commit-interval-ms', values['auto-commit-interval-ms'], 1));
  if (values.assignor !== undefined) {
    if (!GROUP_ASSIGNORS.includes(values.assignor as GroupAssignor)) throw loadError(LoadErrorCode.USAGE, `--assignor must be one of ${GROUP_ASSIGNORS.join(', ')}`);
    o.assignor = values.assignor as GroupAssignor;
  }
  if (values['streaming-compression'] === true) o.streamingCompression = true;
  if (values.idempotent === true) o.idempotent = true;
  if (values['create-topic'] === true) o.createTopic = true;
  if (values['no-verify'] === true) o.verify = false;
  return { options: o, json: values.json === true };
}
