// The broker's command line: `pnpm start` (root package.json) runs this with
// the embedded defaults: data in ./data, 127.0.0.1:9092, topics auto-created
// with 1 partition. SIGINT/SIGTERM stop it gracefully (exit 0); `--port 0`
// picks a free port (printed). A start-up refusal (port in use, data
// directory locked, damaged data or broker-producer-id, too many open files,
// any other typed error) is one line on stderr naming the file, the reason
// and the command that inspects or repairs it, exit 2 (internal errors: 1);
// SEGLOG_DEBUG=1 adds the stack (internal/startup-error.ts).

import { parseArgs } from 'node:util';
import { Broker } from './broker.js';
import { BROKER_DEFAULTS } from './broker-options.js';
import { BROKER_NODE_FLAGS } from './node-flags.js';
import type { BrokerOptions } from './broker-options.js';
import { startupRefusal } from './internal/startup-error.js';
import { MAX_TIMER_DELAY_MS } from './internal/txn/transaction-coordinator.js';

const USAGE = `usage: pnpm start [-- options]
  --data-dir DIR                 data directory (default ./data)
  --host HOST                    listen address (default 127.0.0.1)
  --port N                       listen port (default 9092; 0 = any free port)
  --write-mode buffered|direct   write path of new segments (default buffered)
  --preallocate                  reserve segment space ahead in zero-filled steps (trimmed on roll)
  --tail-cache-bytes N           tail-cache budget across all partitions (default 256 MiB)
  --max-open-segment-files N     idle sealed-segment descriptors kept open, all partitions (default 1000);
                                 active segments keep 3 each on top of it
  --index-cache-bytes N          memory for sealed segments' offset/time indexes, all partitions, loaded
                                 on first read and evicted least recently used (default 128 MiB)
  --min-free-bytes N             refuse appends (retriable KAFKA_STORAGE_ERROR) that would leave less
                                 free space on the data directory's file system (default 64 MiB; 0 = off)
  --auto-create-partitions N     partitions of auto-created topics (default 1; 0 = no auto-creation)
  --blackhole                    discard records after accounting (benchmarks); fetches fail
  --sync-on-ack                  acks=-1 answered only after fdatasync (default: once written)
  --flush-interval-ms N          periodic fdatasync of every log (flush.ms)
  --flush-interval-messages N    fdatasync after N messages (flush.messages)
  --status-interval-ms N         print a status line every N ms (0 = off)
  --max-request-bytes N          largest request accepted (socket.request.max.bytes; default 100 MiB)
  --socket-request-max-bytes N   the same, by Kafka's name
  --queued-max-request-bytes N   request bytes held across all connections before sockets pause (default 512 MiB)
  --connections-max-idle-ms N    close a connection after N ms without a complete request or a response written
                                 (connections.max.idle.ms; default 600000; 0 = never)
  --offsets-topic-partitions N   partitions of __consumer_offsets when first created (offsets.topic.num.partitions; default 50)
  --group-initial-rebalance-delay-ms N  wait for more members before a new group's first rebalance (default 3000)
  --transaction-state-topic-partitions N  partitions of __transaction_state when first created
                                 (transaction.state.log.num.partitions; default 50)
  --transaction-max-timeout-ms N the largest transaction timeout a producer may ask for (transaction.max.timeout.ms; default 900000)
  --transactional-id-expiration-ms N  remove a transactional id with no open transaction after N ms without
                                 an update (transactional.id.expiration.ms; default 604800000 = 7 days)
  --transaction-remove-expired-transaction-cleanup-interval-ms N  how often expired transactional ids
                                 are removed (default 3600000; at most 2147483647)
  --help`;

function int(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${name} must be an integer >= ${min}, got '${value}'`);
  return n;
}

export function parseBrokerArgs(argv: readonly string[]): Partial<BrokerOptions> | 'help' {
  // `pnpm start -- --port 0`: pnpm passes the `--` separator through.
  const args = argv[0] === '--' ? argv.slice(1) : [...argv];
  const { values } = parseArgs({
    args,
    options: {
      'data-dir': { type: 'string' }, host: { type: 'string' }, port: { type: 'string' }, 'write-mode': { type: 'string' },
      preallocate: { type: 'boolean' }, 'tail-cache-bytes': { type: 'string' }, 'max-open-segment-files': { type: 'string' }, 'index-cache-bytes': { type: 'string' }, 'min-free-bytes': { type: 'string' }, 'auto-create-partitions': { type: 'string' },
      blackhole: { type: 'boolean' }, 'sync-on-ack': { type: 'boolean' }, 'flush-interval-ms': { type: 'string' },
      'flush-interval-messages': { type: 'string' }, 'status-interval-ms': { type: 'string' }, 'max-request-bytes': { type: 'string' },
      'socket-request-max-bytes': { type: 'string' }, 'queued-max-request-bytes': { type: 'string' }, 'connections-max-idle-ms': { type: 'string' },
      'offsets-topic-partitions': { type: 'string' }, 'group-initial-rebalance-delay-ms': { type: 'string' },
      'transaction-state-topic-partitions': { type: 'string' }, 'transaction-max-timeout-ms': { type: 'string' },
      'transactional-id-expiration-ms': { type: 'string' }, 'transaction-remove-expired-transaction-cleanup-interval-ms': { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help === true) return 'help';
  const mode = values['write-mode'];
  if (mode !== undefined && mode !== 'buffered' && mode !== 'direct') throw new Error(`--write-mode must be buffered or direct, got '${mode}'`);
  const options: { -readonly [K in keyof BrokerOptions]?: BrokerOptions[K] } = {};
  if (values['data-dir'] !== undefined) options.dataDir = values['data-dir'];
  if (values.host !== undefined) options.host = values.host;
  const port = int('port', values.port, 0);
  if (port !== undefined) {
    if (port > 65535) throw new Error('--port must be at most 65535');
    options.port = port;
  }
  if (mode !== undefined) options.writeMode = mode;
  if (values.preallocate === true) options.preallocate = true;
  const tail = int('tail-cache-bytes', values['tail-cache-bytes'], 0);
  if (tail !== undefined) options.tailCacheBytes = tail;
  const maxOpen = int('max-open-segment-files', values['max-open-segment-files'], 1);
  if (maxOpen !== undefined) options.maxOpenSegmentFiles = maxOpen;
  const indexCache = int('index-cache-bytes', values['index-cache-bytes'], 0);
  if (indexCache !== undefined) options.indexCacheBytes = indexCache;
  const minFree = int('min-free-bytes', values['min-free-bytes'], 0);
  if (minFree !== undefined) options.minFreeBytes = minFree;
  const auto = int('auto-create-partitions', values['auto-create-partitions'], 0);
  if (auto !== undefined) options.autoCreatePartitions = auto;
  if (values.blackhole === true) options.blackhole = true;
  if (values['sync-on-ack'] === true) options.ackMode = 'sync';
  const flushMs = int('flush-interval-ms', values['flush-interval-ms'], 0);
  if (flushMs !== undefined) options.flushIntervalMs = flushMs;
  const flushMessages = int('flush-interval-messages', values['flush-interval-messages'], 1);
  if (flushMessages !== undefined) options.flushIntervalMessages = flushMessages;
  const status = int('status-interval-ms', values['status-interval-ms'], 0);
  if (status !== undefined) options.statusIntervalMs = status;
  const maxRequest = int('max-request-bytes', values['max-request-bytes'], 1024);
  if (maxRequest !== undefined) options.maxRequestBytes = maxRequest;
  const socketMax = int('socket-request-max-bytes', values['socket-request-max-bytes'], 1024);
  if (socketMax !== undefined) options.maxRequestBytes = socketMax;
  const queuedMax = int('queued-max-request-bytes', values['queued-max-request-bytes'], 1024);
  if (queuedMax !== undefined) options.queuedMaxRequestBytes = queuedMax;
  const idleMs = int('connections-max-idle-ms', values['connections-max-idle-ms'], 0);
  if (idleMs !== undefined) options.connectionsMaxIdleMs = idleMs;
  const offsetsPartitions = int('offsets-topic-partitions', values['offsets-topic-partitions'], 1);
  if (offsetsPartitions !== undefined) options.offsetsTopicPartitions = offsetsPartitions;
  const rebalanceDelay = int('group-initial-rebalance-delay-ms', values['group-initial-rebalance-delay-ms'], 0);
  if (rebalanceDelay !== undefined) options.groupInitialRebalanceDelayMs = rebalanceDelay;
  const txnPartitions = int('transaction-state-topic-partitions', values['transaction-state-topic-partitions'], 1);
  if (txnPartitions !== undefined) options.transactionStateTopicPartitions = txnPartitions;
  const txnMaxTimeout = int('transaction-max-timeout-ms', values['transaction-max-timeout-ms'], 1);
  if (txnMaxTimeout !== undefined) options.transactionMaxTimeoutMs = txnMaxTimeout;
  const idExpiration = int('transactional-id-expiration-ms', values['transactional-id-expiration-ms'], 1);
  if (idExpiration !== undefined) options.transactionalIdExpirationMs = idExpiration;
  const expireInterval = int('transaction-remove-expired-transaction-cleanup-interval-ms', values['transaction-remove-expired-transaction-cleanup-interval-ms'], 1);
  if (expireInterval !== undefined) {
    // A node timer fires at once above 2^31 - 1 ms.
    if (expireInterval > MAX_TIMER_DELAY_MS) throw new Error(`--transaction-remove-expired-transaction-cleanup-interval-ms must be at most ${MAX_TIMER_DELAY_MS}`);
    options.transactionRemoveExpiredTransactionCleanupIntervalMs = expireInterval;
  }
  return options;
}

async function main(): Promise<void> {
  const out = (line: string): void => void process.stdout.write(`${line}\n`);
  let options: Partial<BrokerOptions> | 'help';
  try {
    options = parseBrokerArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (options === 'help') {
    out(USAGE);
    return;
  }
  let broker: Broker;
  try {
    broker = await Broker.start(options);
  } catch (error) {
    // Every start-up refusal is one line: file, reason, the command that inspects or repairs it.
    const refusal = startupRefusal(error, {
      dataDir: options.dataDir ?? BROKER_DEFAULTS.dataDir, host: options.host ?? BROKER_DEFAULTS.host, port: options.port ?? BROKER_DEFAULTS.port,
    });
    process.stderr.write(`${refusal.line}\n`);
    if (process.env['SEGLOG_DEBUG'] === '1') process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(refusal.exitCode);
  }
  // Handlers first, banner second: a supervisor that signals as soon as it
  // sees the banner must get a graceful stop, not the default exit 143.
  const running = broker;
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    out(`${signal}: stopping`);
    running.stop().then(() => {
      out('stopped');
      process.exit(0);
    }, (error: unknown) => {
      process.stderr.write(`stop failed: ${String(error)}\n`);
      process.exit(1);
    });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  const o = broker.options;
  const address = `${broker.host}:${broker.port}`;
  out(`seglog broker listening on ${address} (node 0, data ${o.blackhole ? 'blackhole (records discarded)' : o.dataDir}, ` +
    `acks=-1 answered when ${o.ackMode === 'sync' ? 'fdatasync-ed' : 'written'}, auto-create ${o.autoCreatePartitions} partition(s))`);
  const missing = BROKER_NODE_FLAGS.filter((flag) => !process.execArgv.includes(flag));
  if (missing.length > 0) out(`note:     node was started without ${missing.join(' ')} (more GC under load; see the broker README, "Process flags")`);
  out(`produce:  kcat -b ${address} -P -t demo        (one message per line; Ctrl-D to send)`);
  out(`consume:  kcat -b ${address} -C -t demo -e     (-e: exit at the end)`);
  out('stop:     Ctrl-C (graceful: answers in-flight requests, closes the data directory cleanly)');
}

await main();
