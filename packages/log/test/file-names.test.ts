import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FileNames } from '../src/file-names.js';
import { thrown } from './helpers.js';

describe('FileNames segment files', () => {
  it('pads base offsets to 20 digits (Kafka examples)', () => {
    expect(FileNames.segmentFileName(0, 'log')).toBe('00000000000000000000.log');
    expect(FileNames.segmentFileName(1234, 'index')).toBe('00000000000000001234.index');
    expect(FileNames.segmentFileName(1234, 'timeindex')).toBe('00000000000000001234.timeindex');
    expect(FileNames.segmentFileName(1234, 'txnindex')).toBe('00000000000000001234.txnindex');
    expect(FileNames.segmentFileName(1234, 'snapshot')).toBe('00000000000000001234.snapshot');
    expect(FileNames.segmentFileName(Number.MAX_SAFE_INTEGER, 'log')).toBe('00009007199254740991.log');
  });

  it('appends transient suffixes after the normal suffix', () => {
    expect(FileNames.segmentFileName(0, 'log', 'deleted')).toBe('00000000000000000000.log.deleted');
    expect(FileNames.segmentFileName(7, 'index', 'swap')).toBe('00000000000000000007.index.swap');
    expect(FileNames.segmentFileName(7, 'log', 'cleaned')).toBe('00000000000000000007.log.cleaned');
  });

  it('parses names back (round trip over every kind, transient suffix and safe offset)', () => {
    const kinds = ['log', 'index', 'timeindex', 'txnindex', 'snapshot'] as const;
    const transients = [null, 'deleted', 'cleaned', 'swap'] as const;
    fc.assert(
      fc.property(fc.maxSafeNat(), fc.constantFrom(...kinds), fc.constantFrom(...transients), (offset, kind, transient) => {
        const name = FileNames.segmentFileName(offset, kind, transient);
        expect(FileNames.parseSegmentFileName(name)).toEqual({ offset, kind, transient });
        expect(FileNames.offsetFromFileName(name)).toBe(offset);
      }),
    );
  });

  it('parses any number of digits, as Kafka does', () => {
    expect(FileNames.offsetFromFileName('5.log')).toBe(5);
    expect(FileNames.offsetFromFileName('0000000000000000000000000042.index')).toBe(42);
    expect(FileNames.parseSegmentFileName('5.log')).toEqual({ offset: 5, kind: 'log', transient: null });
  });

  it('returns null for names that are not segment files', () => {
    expect(FileNames.parseSegmentFileName('leader-epoch-checkpoint')).toBeNull();
    expect(FileNames.parseSegmentFileName('partition.metadata')).toBeNull();
    expect(FileNames.parseSegmentFileName('00000000000000000000.log.tmp')).toBeNull();
  });

  it('rejects offsets that are not safe non-negative integers with a typed error', () => {
    for (const name of ['abc.log', '-1.log', '+1.log', '.log', '1e3.index', '09223372036854775807.log', '9007199254740992.log']) {
      const error = thrown(() => FileNames.parseSegmentFileName(name));
      expect(error.code, name).toBe('SEGLOG_ERR_LOG_INVALID_FILE_NAME');
    }
    expect(thrown(() => FileNames.offsetFromFileName('x.log')).code).toBe('SEGLOG_ERR_LOG_INVALID_FILE_NAME');
    // 2^53 − 1 is the largest offset accepted.
    expect(FileNames.offsetFromFileName('09007199254740991.log')).toBe(Number.MAX_SAFE_INTEGER);
  });
});

describe('FileNames partition directories', () => {
  it('builds and parses <topic>-<partition>', () => {
    expect(FileNames.partitionDirName('orders', 0)).toBe('orders-0');
    expect(FileNames.parsePartitionDirName('orders-0')).toEqual({ topic: 'orders', partition: 0, state: 'live', uniqueId: null });
    expect(FileNames.parsePartitionDirName('my-topic-12')).toEqual({ topic: 'my-topic', partition: 12, state: 'live', uniqueId: null });
    expect(FileNames.parsePartitionDirName('a.b_c-2147483647').partition).toBe(2147483647);
  });

  it('parses -delete, -future and -stray directories', () => {
    const id = '0123456789abcdef0123456789abcdef';
    expect(FileNames.parsePartitionDirName(`orders-3.${id}-delete`)).toEqual({ topic: 'orders', partition: 3, state: 'delete', uniqueId: id });
    expect(FileNames.parsePartitionDirName(`a.b-1.${id}-future`)).toEqual({ topic: 'a.b', partition: 1, state: 'future', uniqueId: id });
    expect(FileNames.parsePartitionDirName(`t-0.${id}-stray`).state).toBe('stray');
  });

  it('round-trips legal topics and partitions', () => {
    const topic = fc.stringMatching(/^[a-zA-Z0-9._-]{1,249}$/).filter((t) => t !== '.' && t !== '..');
    fc.assert(
      fc.property(topic, fc.integer({ min: 0, max: 2147483647 }), (t, p) => {
        expect(FileNames.parsePartitionDirName(FileNames.partitionDirName(t, p))).toEqual({ topic: t, partition: p, state: 'live', uniqueId: null });
      }),
    );
  });

  it("rejects illegal topics with SEGLOG_ERR_LOG_INVALID_TOPIC (kafka INVALID_TOPIC_EXCEPTION)", () => {
    for (const topic of ['', '.', '..', 'a/b', 'a\\b', 'with space', 'ünicode', 'x'.repeat(250), 'a\0b']) {
      const error = thrown(() => FileNames.partitionDirName(topic, 0)) as { code?: string; kafka?: string };
      expect(error.code, JSON.stringify(topic)).toBe('SEGLOG_ERR_LOG_INVALID_TOPIC');
      expect(error.kafka).toBe('INVALID_TOPIC_EXCEPTION');
    }
    expect(FileNames.partitionDirName('x'.repeat(249), 0)).toBe(`${'x'.repeat(249)}-0`);
    expect(FileNames.partitionDirName('...', 0)).toBe('...-0');
  });

  it('rejects bad partitions and malformed names', () => {
    for (const p of [-1, 1.5, 2147483648, Number.NaN]) {
      expect(thrown(() => FileNames.partitionDirName('t', p)).code).toBe('SEGLOG_ERR_LOG_INVALID_PARTITION');
    }
    for (const name of ['orders', 'orders-', '-0', 'orders-x', 'orders-99999999999', 'orders-0.zz-delete', 'orders-0-delete', 'orders-+1']) {
      const code = thrown(() => FileNames.parsePartitionDirName(name)).code;
      expect(code, name).toMatch(/^SEGLOG_ERR_LOG_INVALID_(DIR_NAME|TOPIC|PARTITION)$/);
    }
    expect(thrown(() => FileNames.parsePartitionDirName('orders-2147483648')).code).toBe('SEGLOG_ERR_LOG_INVALID_PARTITION');
    expect(thrown(() => FileNames.parsePartitionDirName('bad topic-0')).code).toBe('SEGLOG_ERR_LOG_INVALID_TOPIC');
  });

  it('classifies data directory entries by one rule: a directory whose name parses is a partition, a leading dot included', () => {
    expect(FileNames.classifyDataDirEntry('.hidden-0', true)).toEqual({ kind: 'partition', partition: { topic: '.hidden', partition: 0, state: 'live', uniqueId: null } });
    expect(FileNames.classifyDataDirEntry('..a-3', true)).toMatchObject({ kind: 'partition', partition: { topic: '..a', partition: 3 } });
    expect(FileNames.classifyDataDirEntry('..-3', true)).toMatchObject({ kind: 'other' });
    expect(FileNames.classifyDataDirEntry('.x-1.0123456789abcdef0123456789abcdef-delete', true))
      .toMatchObject({ kind: 'partition', partition: { topic: '.x', partition: 1, state: 'delete' } });
    for (const own of ['.lock', '.kafka_cleanshutdown', 'recovery-point-offset-checkpoint', 'log-start-offset-checkpoint', 'recovery-point-offset-checkpoint.tmp',
      'cleaner-offset-checkpoint', 'cleaner-stats']) {
      expect(FileNames.classifyDataDirEntry(own, false), own).toEqual({ kind: 'own' });
    }
    expect(FileNames.classifyDataDirEntry('.hidden-0', false)).toEqual({ kind: 'other', reason: 'not a directory' });
    expect(FileNames.classifyDataDirEntry('.-0', true)).toMatchObject({ kind: 'other' });
    expect(FileNames.classifyDataDirEntry('.Trash', true)).toMatchObject({ kind: 'other' });
  });

  it("names -delete directories as Kafka does: the topic cut so the name fits in 255 bytes, and it still parses", () => {
    const id = '0123456789abcdef0123456789abcdef';
    expect(FileNames.deleteDirName('orders', 3, id)).toBe(`orders-3.${id}-delete`);
    for (const partition of [0, 2147483647]) {
      const name = FileNames.deleteDirName('t'.repeat(249), partition, id);
      expect(name.length).toBe(255);
      expect(FileNames.parsePartitionDirName(name)).toMatchObject({ partition, state: 'delete', uniqueId: id });
      expect(FileNames.classifyDataDirEntry(name, true).kind).toBe('partition');
    }
    expect(thrown(() => FileNames.deleteDirName('..', 0, id)).code).toBe('SEGLOG_ERR_LOG_INVALID_TOPIC');
  });
});
