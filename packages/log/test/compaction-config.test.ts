// cleanup.policy and the compaction keys of LogConfig (Kafka's names,
// defaults and validators), and the compacted-topic key rule on append.
import { buildBatch } from '@seglog/records';
import { describe, expect, it } from 'vitest';
import { LogConfig } from '../src/log-config.js';
import { thrown, rejected } from './helpers.js';
import { config, newIo, openLog, readAll } from './log-helpers.js';

describe('LogConfig compaction keys', () => {
  it("has Kafka's defaults", () => {
    const c = new LogConfig();
    expect(c.cleanupPolicy).toBe('delete');
    expect(c.minCleanableDirtyRatio).toBe(0.5);
    expect(c.minCompactionLagMs).toBe(0);
    expect(c.maxCompactionLagMs).toBe(Number.MAX_SAFE_INTEGER);
    expect(c.deleteRetentionMs).toBe(86_400_000);
    expect(c.compacted).toBe(false);
    expect(c.deletes).toBe(true);
  });

  it('reads the Kafka property strings, cleanup.policy as a list in any order', () => {
    const c = LogConfig.fromKafkaProperties({
      'cleanup.policy': 'delete, compact', 'min.cleanable.dirty.ratio': '0.01', 'min.compaction.lag.ms': '5',
      'max.compaction.lag.ms': '9223372036854775807', 'delete.retention.ms': '100',
    });
    expect(c.cleanupPolicy).toBe('compact,delete');
    expect(c.compacted && c.deletes).toBe(true);
    expect(c.minCleanableDirtyRatio).toBe(0.01);
    expect(c.minCompactionLagMs).toBe(5);
    expect(c.maxCompactionLagMs).toBe(Number.MAX_SAFE_INTEGER);
    expect(c.deleteRetentionMs).toBe(100);
    const compactOnly = LogConfig.fromKafkaProperties({ 'cleanup.policy': 'compact' });
    expect(compactOnly.compacted).toBe(true);
    expect(compactOnly.deletes).toBe(false);
  });

  it('rejects bad values with SEGLOG_ERR_LOG_INVALID_CONFIG naming the key', () => {
    const bad: Array<() => unknown> = [
      () => new LogConfig({ cleanupPolicy: 'compaction' as never }),
      () => new LogConfig({ minCleanableDirtyRatio: 1.5 }),
      () => new LogConfig({ minCleanableDirtyRatio: -0.1 }),
      () => new LogConfig({ minCleanableDirtyRatio: Number.NaN }),
      () => new LogConfig({ minCompactionLagMs: -1 }),
      () => new LogConfig({ maxCompactionLagMs: 0 }),
      () => new LogConfig({ deleteRetentionMs: -1 }),
      () => new LogConfig({ minCompactionLagMs: 10, maxCompactionLagMs: 5 }),
      () => LogConfig.fromKafkaProperties({ 'min.cleanable.dirty.ratio': 'half' }),
      () => LogConfig.fromKafkaProperties({ 'cleanup.policy': 'compact,shred' }),
    ];
    for (const make of bad) {
      const error = thrown(make);
      expect(error.code).toBe('SEGLOG_ERR_LOG_INVALID_CONFIG');
      expect(error.context?.['kafkaName']).toMatch(/cleanup|compaction|dirty|retention/);
    }
    expect(new LogConfig({ minCleanableDirtyRatio: 0 }).minCleanableDirtyRatio).toBe(0);
    expect(new LogConfig({ minCleanableDirtyRatio: 1 }).minCleanableDirtyRatio).toBe(1);
  });
});

describe('compacted log: the key rule', () => {
  it('rejects a batch with a null-key record (INVALID_RECORD, its index) and writes nothing', async () => {
    const io = await newIo();
    const log = await openLog(io, config({ cleanupPolicy: 'compact' }));
    await log.appendAsLeader(buildBatch({ records: [{ key: 'a', value: '1', timestamp: 1 }] }));
    const before = log.logEndOffset;
    const error = await rejected(log.appendAsLeader(buildBatch({
      records: [{ key: 'a', value: '2', timestamp: 1 }, { key: 'b', value: '3', timestamp: 1 }, { value: 'no key', timestamp: 1 }],
    })));
    expect(error.code).toBe('SEGLOG_ERR_RECORDS_INVALID_RECORD');
    expect(error.context?.['recordIndex']).toBe(2);
    expect(log.logEndOffset).toBe(before);
    await log.written(log.logEndOffset - 1);
    expect((await readAll(log)).length).toBe(1);
    await log.close();
  });

  it('a delete-policy log accepts null keys', async () => {
    const io = await newIo();
    const log = await openLog(io, config());
    await log.appendAsLeader(buildBatch({ records: [{ value: 'no key', timestamp: 1 }] }));
    expect(log.logEndOffset).toBe(1);
    await log.close();
  });
});

describe('cleanup.policy and retention', () => {
  for (const [policy, deletes] of [['compact', false], ['compact,delete', true], ['delete', true], ['', false]] as const) {
    it(`policy '${policy}': retention by time ${deletes ? 'deletes' : 'keeps'} old segments`, async () => {
      const io = await newIo();
      const log = await openLog(io, config({ cleanupPolicy: policy, retentionMs: 1000 }));
      for (let i = 0; i < 3; i++) {
        await log.appendAsLeader(buildBatch({ records: [{ key: `k${i}`, value: 'v', timestamp: 10 }] }));
        await log.forceRoll();
      }
      log.updateHighWatermark(log.logEndOffset);
      const deleted = await log.deleteOldSegments(1_000_000);
      expect(deleted > 0).toBe(deletes);
      await log.close();
    });
  }
});
