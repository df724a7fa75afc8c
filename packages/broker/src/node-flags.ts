// The node (V8) flags the broker's process is started with: `pnpm start`
// (root package.json), `seglog serve`, the bench report's brokers and the
// tests' shared launcher (test/lib/broker-process.ts) pass them
// (test/broker-node-flags.test.ts keeps the start script in step). Like
// Kafka's KAFKA_HEAP_OPTS, they are the launcher's business: V8 reads them
// only at process start.
//
// --initial-old-space-size=256: without it V8's old-generation limit settles
// a few MB above the live heap (~15-20 MB here), and under a produce load
// the old generation fills from promoted request objects every 70-90 ms:
// 25-50 mark-compacts per 6 M-record `pnpm load` run instead of 3, in about
// half the runs (the other half stay at 3-12). Measured, fresh broker per
// run, 6 M records, 16 partitions, 3 idempotent producers (packages/broker
// README, "Process flags"): broker CPU 0.31-0.35 µs/record with the flag
// against 0.37-0.43 without; GC time 133-160 ms against 250-360 ms in the
// runs that went wrong; peak RSS unchanged (~315 MB storing, ~160 MB
// blackhole): the heap itself stays small, the flag only stops the
// collector from running on every few MB.
export const BROKER_NODE_FLAGS: readonly string[] = ['--initial-old-space-size=256'];
