// The human-readable form of a LoadReport (`pnpm load` without --json): one
// labelled line per fact, every violation on its own line.

import type { LatencySummary } from './latency-recorder.js';
import type { LoadReport } from './run-load.js';

const n = (x: number, digits = 0): string => x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function latency(l: LatencySummary): string {
  return `p50 ${n(l.p50Ms, 2)}  p99 ${n(l.p99Ms, 2)}  p99.9 ${n(l.p999Ms, 2)}  max ${n(l.maxMs, 2)}  mean ${n(l.meanMs, 2)}`;
}

function header(r: LoadReport): string {
  const o = r.options;
  const amount = o.records !== null ? `${n(o.records)} records` : `${n(o.durationMs ?? 0)} ms`;
  return `seglog load: ${o.host}:${o.port} topic ${o.topic}, ${o.partitions} partitions, ${o.producers} producer(s)` +
    `${o.idempotent ? ' (idempotent)' : ''}, acks=${o.acks}, ${o.recordBytes} B records, ${amount}` +
    `${o.rate === null ? ' (closed loop)' : ` at ${n(o.rate)} records/s`}, compression ${o.compression}, linger ${o.lingerMs} ms, ` +
    `batch ${o.batchBytes} B${o.streamingCompression ? ` (streaming compression, max ${o.maxBatchBytes} B compressed)` : ''}, ` +
    `${o.payload} payload, ${o.maxInFlight} in flight; Produce v${r.versions.produce}, Fetch v${r.versions.fetch}`;
}

function produceLines(r: LoadReport): string[] {
  const p = r.produce;
  const failed = Object.entries(p.failedByError).map(([name, count]) => `${name} ${count}`).join(', ');
  const lines = [
    `produce   sent ${n(p.recordsSent)}, acknowledged ${n(p.recordsAcknowledged)}, refused ${n(p.recordsFailed)}${failed === '' ? '' : ` (${failed})`}, ` +
      `unanswered ${n(p.recordsUncertain)} in ${n(p.durationMs / 1000, 3)} s`,
    `          completion rate ${n(p.completionRate)} records/s${r.options.acks === 0 ? ' (acks=0: written to the socket)' : ''}, ` +
      `${n(p.payloadMBps, 2)} MB/s payload, ${n(p.wireMBps, 2)} MB/s record batches`,
    `          ${n(p.produceRequests)} produce requests, ${n(p.recordsPerRequest, 1)} records/request, ${n(p.batches)} batches, ${n(p.recordsPerBatch, 1)} records/batch`,
    `          publish latency ms (batch opened -> acknowledged, per record): ${latency(p.publishLatency)}`,
    `          request latency ms (request written -> response read, per record): ${latency(p.requestLatency)}`,
  ];
  const s = p.streaming;
  if (s !== null) lines.push(`          backlog merges ${n(s.merges)}: ${n(s.batchesIn)} batches -> ${n(s.batchesOut)}${s.mergeErrors > 0 ? `, ${n(s.mergeErrors)} codec failures (plain path since)` : ''}`);
  for (const e of p.requestErrors) lines.push(`          request error: ${e}`);
  return lines;
}

function cpuLine(r: LoadReport): string {
  const c = r.brokerCpu;
  if (c === null) return 'broker    CPU not measured (pass --broker-pid PID for an external broker)';
  const scope = c.scope === 'pid' ? `broker pid ${r.options.brokerPid}` : 'this process: broker and load client together';
  return `broker    CPU ${n(c.userMs)} ms user + ${n(c.systemMs)} ms system = ${n(c.usPerRecord, 2)} us per record (${scope})`;
}

function consumeLines(r: LoadReport): string[] {
  const c = r.consume;
  switch (c.kind) {
    case 'skipped':
      return [`consume   skipped (${c.reason === 'blackhole' ? 'blackhole broker: it keeps no records' : '--no-verify'}); nothing verified`];
    case 'fetch-refused':
      return [`consume   fetch refused by the broker: ${c.errorName} (${c.errorCode}) on all ${c.partitions} partitions; nothing verified ` +
        `(a --blackhole broker keeps no records; pass --no-verify to skip the consume phase)`];
    case 'verified': {
      const head = `consume   ${n(c.recordsConsumed)} records in ${n(c.batchesConsumed)} batches, ${n(c.fetchRequests)} fetch requests, ` +
        `${n(c.durationMs / 1000, 3)} s; unacknowledged present ${n(c.unacknowledgedPresent)}, unanswered missing ${n(c.uncertainMissing)}`;
      if (c.violationCount === 0) return [head, 'integrity OK: CRCs valid, offsets contiguous, every acknowledged record once at its offset, payloads intact' +
        `${r.options.idempotent ? ', sequences contiguous' : ''}`];
      const more = c.violationCount - c.violations.length;
      return [head, `integrity VIOLATIONS: ${c.violationCount}`, ...c.violations.map((v) => `  violation: ${v}`), ...(more > 0 ? [`  ... and ${more} more`] : [])];
    }
  }
}

function groupLines(r: LoadReport): string[] {
  const g = r.group;
  if (g === null) return [];
  const plural = (x: number, word: string): string => `${n(x)} ${word}${x === 1 ? '' : 's'}`;
  const lines = [
    `group     ${g.group} (${g.assignor}), ${plural(g.members.length, 'member')}, generation ${g.generation}, ${plural(g.rebalances, 'rebalance')}, ` +
      `${plural(g.commits, 'commit')}${g.commitFailures > 0 ? ` (${n(g.commitFailures)} fenced)` : ''}, ` +
      `duplicates ${n(g.duplicateRecords)}${g.duplicateRecords > 0 ? ' (fetched again after a rebalance)' : ''}`,
    `group     consume rate ${n(g.recordsPerSecond)} records/s, ${n(g.MBps, 2)} MB/s record batches (${n(g.recordsFetched)} records in ` +
      `${n(g.durationMs / 1000, 3)} s, from the generation holding every member to the last end offset; the group formed in ${n(g.formationMs / 1000, 3)} s)`,
  ];
  g.members.forEach((m, i) => lines.push(`          member ${i} ${m.memberId}: partitions ${m.partitions.join(',') || '-'}, ${n(m.recordsFetched)} records, ` +
    `${plural(m.commits, 'commit')}, generations ${m.generations.join(',')}${m.joined === 'mid-run' ? ', joined mid-run' : ''}` +
    `${m.left === 'mid-run' ? ', left mid-run' : ''}`));
  return lines;
}

export function formatReport(r: LoadReport): string {
  const verdict = r.ok ? 'result    OK' : `result    FAILED (${r.integrityOk ? 'not every record was acknowledged' : 'integrity violations'})`;
  return [header(r), ...produceLines(r), cpuLine(r), ...consumeLines(r), ...groupLines(r), verdict].join('\n');
}
