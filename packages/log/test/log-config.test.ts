import { describe, expect, it } from 'vitest';
import { LogConfig } from '../src/log-config.js';
import type { LogConfigValues } from '../src/log-config.js';
import { thrown } from './helpers.js';

describe('LogConfig', () => {
  it("has Kafka's defaults", () => {
    const c = new LogConfig();
    expect(c.segmentBytes).toBe(1073741824);
    expect(c.segmentMs).toBe(604800000);
    expect(c.segmentJitterMs).toBe(0);
    expect(c.indexIntervalBytes).toBe(4096);
    expect(c.segmentIndexBytes).toBe(10485760);
    expect(c.maxMessageBytes).toBe(1048588);
    expect(c.retentionBytes).toBe(-1);
    expect(c.retentionMs).toBe(604800000);
    expect(c.flushIntervalMessages).toBe(Number.MAX_SAFE_INTEGER);
    expect(c.flushIntervalMs).toBe(Number.MAX_SAFE_INTEGER);
    expect(c.fileDeleteDelayMs).toBe(60000);
    expect(c.preallocate).toBe(false);
    expect(c.messageTimestampType).toBe('CreateTime');
    expect(c.messageTimestampBeforeMaxMs).toBe(Number.MAX_SAFE_INTEGER);
    expect(c.messageTimestampAfterMaxMs).toBe(Number.MAX_SAFE_INTEGER);
    expect(c.producerIdExpirationMs).toBe(86400000);
    expect(c.writeMode).toBe('buffered');
    expect(c.minFreeBytes).toBeGreaterThan(0);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('applies overrides and keeps the rest', () => {
    const c = new LogConfig({ segmentBytes: 1024, preallocate: true, writeMode: 'direct' });
    expect(c.segmentBytes).toBe(1024);
    expect(c.preallocate).toBe(true);
    expect(c.writeMode).toBe('direct');
    expect(c.indexIntervalBytes).toBe(4096);
    const d = c.with({ indexIntervalBytes: 1 });
    expect(d.segmentBytes).toBe(1024);
    expect(d.indexIntervalBytes).toBe(1);
    expect(c.indexIntervalBytes).toBe(4096);
  });

  it("accepts Kafka's minimums exactly and rejects one below, naming the key", () => {
    const minimums: [keyof LogConfigValues, number, string][] = [
      ['segmentBytes', 14, 'segment.bytes'],
      ['segmentMs', 1, 'segment.ms'],
      ['segmentJitterMs', 0, 'segment.jitter.ms'],
      ['indexIntervalBytes', 0, 'index.interval.bytes'],
      ['segmentIndexBytes', 4, 'segment.index.bytes'],
      ['maxMessageBytes', 0, 'max.message.bytes'],
      ['retentionMs', -1, 'retention.ms'],
      ['flushIntervalMessages', 1, 'flush.messages'],
      ['flushIntervalMs', 0, 'flush.ms'],
      ['fileDeleteDelayMs', 0, 'file.delete.delay.ms'],
      ['messageTimestampBeforeMaxMs', 0, 'message.timestamp.before.max.ms'],
      ['messageTimestampAfterMaxMs', 0, 'message.timestamp.after.max.ms'],
      ['producerIdExpirationMs', 1, 'producer.id.expiration.ms'],
      ['minFreeBytes', 0, 'seglog.min.free.bytes'],
      ['indexWriteBackBytes', 0, 'seglog.index.write.back.bytes'],
    ];
    for (const [key, min, kafkaName] of minimums) {
      expect(new LogConfig({ [key]: min })[key]).toBe(min);
      const error = thrown(() => new LogConfig({ [key]: min - 1 }));
      expect(error.code, key).toBe('SEGLOG_ERR_LOG_INVALID_CONFIG');
      expect(error.context).toMatchObject({ key, kafkaName });
      expect(error.message).toContain(kafkaName);
    }
  });

  it('bounds INT keys by 2^31 − 1 and requires safe integers', () => {
    expect(new LogConfig({ segmentBytes: 2147483647 }).segmentBytes).toBe(2147483647);
    expect(thrown(() => new LogConfig({ segmentBytes: 2147483648 })).code).toBe('SEGLOG_ERR_LOG_INVALID_CONFIG');
    expect(thrown(() => new LogConfig({ segmentMs: 1.5 })).code).toBe('SEGLOG_ERR_LOG_INVALID_CONFIG');
    expect(thrown(() => new LogConfig({ retentionMs: Number.POSITIVE_INFINITY })).code).toBe('SEGLOG_ERR_LOG_INVALID_CONFIG');
    expect(thrown(() => new LogConfig({ retentionBytes: Number.NaN })).code).toBe('SEGLOG_ERR_LOG_INVALID_CONFIG');
    expect(new LogConfig({ retentionBytes: -5 }).retentionBytes).toBe(-5);
  });

  it('rejects bad enums, booleans and unknown keys', () => {
    expect(thrown(() => new LogConfig({ messageTimestampType: 'Whenever' as never })).context).toMatchObject({ key: 'messageTimestampType' });
    expect(thrown(() => new LogConfig({ writeMode: 'mmap' as never })).code).toBe('SEGLOG_ERR_LOG_INVALID_CONFIG');
    expect(thrown(() => new LogConfig({ preallocate: 1 as never })).code).toBe('SEGLOG_ERR_LOG_INVALID_CONFIG');
    expect(thrown(() => new LogConfig({ segmentByte: 1 } as never)).context).toMatchObject({ key: 'segmentByte', reason: 'unknown key' });
  });

  it('reads Kafka property strings, saturating Long.MAX to MAX_SAFE_INTEGER', () => {
    const c = LogConfig.fromKafkaProperties({
      'segment.bytes': '1048576',
      'flush.messages': '9223372036854775807',
      'message.timestamp.type': 'LogAppendTime',
      preallocate: 'TRUE',
      'retention.ms': '-1',
    });
    expect(c.segmentBytes).toBe(1048576);
    expect(c.flushIntervalMessages).toBe(Number.MAX_SAFE_INTEGER);
    expect(c.messageTimestampType).toBe('LogAppendTime');
    expect(c.preallocate).toBe(true);
    expect(c.retentionMs).toBe(-1);
    expect(LogConfig.kafkaName('segmentJitterMs')).toBe('segment.jitter.ms');
    expect(thrown(() => LogConfig.fromKafkaProperties({ 'segment.bytes': '9223372036854775807' })).code).toBe('SEGLOG_ERR_LOG_INVALID_CONFIG');
    expect(thrown(() => LogConfig.fromKafkaProperties({ 'flush.ms': '9223372036854775808' })).code).toBe('SEGLOG_ERR_LOG_INVALID_CONFIG');
    expect(thrown(() => LogConfig.fromKafkaProperties({ 'segment.ms': '1h' })).code).toBe('SEGLOG_ERR_LOG_INVALID_CONFIG');
    expect(thrown(() => LogConfig.fromKafkaProperties({ 'log.cleaner.threads': '1' })).context).toMatchObject({ key: 'log.cleaner.threads' });
  });
});
