// The report's top: headline ratios and sentences generated from the numbers.
import { appendKey } from './appends.js';
import { num, type Report, type Table } from './model.js';

const KiB = 1024;
const MiB = 1024 * KiB;

export function headline(r: Report): { table: Table; interpretation: string[] } {
  const rows: string[][] = [];
  const lines: string[] = [];
  const m = (k: string): number => r.med(k);
  const x = (a: number, b: number): string => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${(a / b).toFixed(2)}x` : 'n/a');
  const p = (a: number, b: number): string => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? `${((100 * a) / b).toFixed(0)}%` : 'n/a');
  const row = (what: string, value: string, reference: string, ratioText: string): void => { rows.push([what, value, reference, ratioText]); };

  const diskDirect = m('disk.directWrite.MBps');
  const diskBuffered = m('disk.bufferedWrite.MBps');
  const direct1M = m(`${appendKey('direct', 1024, MiB, 1)}.MBps`);
  const buffered1M = m(`${appendKey('buffered', 1024, MiB, 1)}.MBps`);
  const plain1M = m(`${appendKey('plain', 1024, MiB, 1)}.MBps`);
  if (Number.isFinite(direct1M)) {
    row('direct appends, 1 KiB records, 1 MiB batches, 1 partition', `${num(direct1M)} MB/s`, `disk O_DIRECT 1 MiB writes ${num(diskDirect)} MB/s`, p(direct1M, diskDirect));
    row('buffered appends, same', `${num(buffered1M)} MB/s`, `plain fs writes ${num(plain1M)} MB/s`, x(buffered1M, plain1M));
    const share = direct1M / diskDirect;
    lines.push(`Direct appends at 1 MiB batches reach ${p(direct1M, diskDirect)} of the disk's O_DIRECT bandwidth (${num(direct1M)} of ${num(diskDirect)} MB/s)` +
      (share < 0.5 ? ' — far below it; bench/README.md ("Where a figure is far from its reference") has the profile and what would remove the cost.' : share < 0.8 ? '.' : ', close to the device.'));
    lines.push(`Buffered appends at 1 MiB batches run at ${x(buffered1M, plain1M)} the speed of plain fs.writeSync + fdatasync of the same bytes` +
      ` (the disk's buffered 1 MiB writes: ${num(diskBuffered)} MB/s).`);
  }
  const small = `${appendKey('direct', 100, 16 * KiB, 16)}`;
  const smallRec = m(`${small}.recps`);
  if (Number.isFinite(smallRec)) {
    const smallPlain = m(`${appendKey('plain', 100, 16 * KiB, 1)}.MBps`);
    const smallMBps = m(`${small}.MBps`);
    const cpu = m(`${small}.cpuSecPerGB`);
    const bufferedRec = m(`${appendKey('buffered', 100, 16 * KiB, 16)}.recps`);
    row('direct appends, 100 B records, 16 KiB batches, 16 partitions', `${num(smallRec)} records/s`, `plain fs ${num(smallPlain)} MB/s`, x(smallMBps, smallPlain));
    lines.push(`Small records (100 B in 16 KiB batches, 16 partitions): ${num(smallRec)} records/s direct, ${num(bufferedRec)} buffered, at ${cpu.toFixed(2)} CPU-s per GB; ` +
      `${x(smallMBps, smallPlain)} plain fs of the same bytes` +
      (smallMBps / smallPlain < 0.5 ? ' — per-record validation and the tail-cache copy on the event loop, see bench/README.md ("Where a figure is far from its reference").' : '.'));
  }
  for (const mode of ['buffered', 'direct'] as const) {
    const one = m(`durable.${mode}.p1.recps`);
    const sixteen = m(`durable.${mode}.p16.recps`);
    if (!Number.isFinite(one)) continue;
    const perFsync = m(`durable.${mode}.p16.batchesPerFsync`);
    row(`durable appends (${mode}), 16 producers vs 1`, `${num(sixteen)} records/s`, `1 producer ${num(one)} records/s`, x(sixteen, one));
    if (mode === 'buffered') {
      const p50 = m('durable.buffered.p1.p50us');
      const fs = m('disk.fsyncAppend.p50us');
      row('durable append p50, 1 producer (buffered)', `${num(p50)} µs`, `disk fdatasync after append p50 ${num(fs)} µs`, x(p50, fs));
      lines.push(`Durable appends: one producer waits ${num(p50)} µs per batch (${x(p50, fs)} the disk's own fdatasync); 16 producers share ` +
        `${perFsync.toFixed(1)} batches per fsync (group commit) and reach ${x(sixteen, one)} the records/s of one.`);
    }
  }
  const callerTail = m('read.caughtUpTail.callerShare');
  const cache = m('read.cache.MBps');
  if (Number.isFinite(cache)) {
    const page = m('read.pagecache.MBps');
    const disk = m('read.disk.MBps');
    const dread = m('disk.directRead.MBps');
    const cacheCaller = m('read.cache.callerShare');
    row('caught-up reads (tail cache) vs page-cache reads', `${num(cache)} MB/s`, `page cache ${num(page)} MB/s`, x(cache, page));
    row('catch-up reads from disk', `${num(disk)} MB/s`, `disk O_DIRECT 1 MiB reads ${num(dread)} MB/s`, p(disk, dread));
    row('caught-up consumer reads served on the caller', p(callerTail, 1), 'all reads', '-');
    lines.push(`Reads: a caught-up consumer is served ${p(callerTail, 1)} on the caller while the appends run (${p(cacheCaller, 1)} when reading the cached tail afterwards)` +
      (callerTail < 0.5 ? ' — mostly on the pool: see the placement reasons in report.json (raw.reads).' : '.') +
      ` Tail-cache reads run at ${x(cache, page)} page-cache reads; catch-up reads from disk reach ${p(disk, dread)} of O_DIRECT sequential reads` +
      (disk / dread < 0.5 ? ' — far below: one buffered pread in flight, see bench/README.md ("Where a figure is far from its reference").' : '.'));
  }
  const implied = r.raw['fetch.implied'] as Record<string, string> | undefined;
  if (implied !== undefined) {
    row('fetch: sendfile beats pread from fragment size', implied['impliedSendfileMinBytes'] ?? 'n/a', 'coalesce beats writev up to (total bytes)', implied['coalesceWinsUpToTotalBytes'] ?? 'n/a');
    lines.push(`Fetch: pread wins up to ${implied['preadWinsUpToFragmentBytes']} B fragments, so sendfile pays from ${implied['impliedSendfileMinBytes']} B; ` +
      `coalescing inline fragments wins up to ${implied['coalesceWinsUpToTotalBytes']} B per response.`);
  }
  for (const producers of [1, 3]) {
    const st = m(`e2e.storage.p${producers}.recps`);
    const bh = m(`e2e.blackhole.p${producers}.recps`);
    if (!Number.isFinite(st)) continue;
    const cpuSt = m(`e2e.storage.p${producers}.brokerCpuUsPerRecord`);
    const cpuBh = m(`e2e.blackhole.p${producers}.brokerCpuUsPerRecord`);
    row(`end to end, ${producers} producer(s), storing vs blackhole broker`, `${num(st)} records/s`, `blackhole ${num(bh)} records/s`, x(st, bh));
    if (producers === 3) {
      row('broker CPU per record, 3 producers, storing vs blackhole', `${cpuSt.toFixed(2)} µs`, `blackhole ${cpuBh.toFixed(2)} µs`, x(cpuSt, cpuBh));
      const p99 = m('e2e.storage.p3.publishP99ms');
      const p99bh = m('e2e.blackhole.p3.publishP99ms');
      lines.push(`End to end (100 B records, 16 partitions, 3 producers, acks=all, idempotent): the storing broker completes ${num(st)} records/s, ` +
        `${p(st, bh)} of the blackhole broker; storage adds ${(cpuSt - cpuBh).toFixed(2)} µs of broker CPU per record ` +
        `(${p(cpuSt - cpuBh, cpuSt)} of the broker's ${cpuSt.toFixed(2)} µs); publish p99 ${p99.toFixed(1)} ms vs ${p99bh.toFixed(1)} ms.`);
    }
  }
  return { table: { caption: '', header: ['figure', 'value (median)', 'reference (same run)', 'ratio'], rows }, interpretation: lines };
}
