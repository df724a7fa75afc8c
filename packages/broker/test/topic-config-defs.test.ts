// The topic-config validation against a trivial reference of Kafka's
// ConfigDef rules (fast-check): an INT/LONG value is accepted exactly when it
// is a decimal integer within the type's range and at least the config's
// minimum; a DOUBLE exactly when it lies within its bounds; a LIST exactly
// when every item is allowed; a STRING enum exactly when it is one of its
// values; a BOOLEAN exactly when it is true or false (any case). An accepted
// value of a config LogConfig has reaches the returned LogConfig; refusals
// are ApiError INVALID_CONFIG and name the config.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LogConfig } from '@seglog/log';
import { ApiError } from '../src/internal/topic-configs/api-error.js';
import { TOPIC_CONFIG_DEFS, logConfigKeyOf, validateTopicConfigs } from '../src/internal/topic-configs/topic-config-defs.js';
import type { TopicConfigDef } from '../src/internal/topic-configs/topic-config-defs.js';

const BASE = new LogConfig();
const RANGE = { INT: [-(2n ** 31n), 2n ** 31n - 1n], LONG: [-(2n ** 63n), 2n ** 63n - 1n] } as const;

function reference(def: TopicConfigDef, value: string): boolean {
  const text = value.trim();
  switch (def.type) {
    case 'INT':
    case 'LONG': {
      if (!/^[+-]?\d+$/.test(text)) return false;
      const n = BigInt(text);
      const [lo, hi] = RANGE[def.type];
      return n >= lo && n <= hi && (def.min === undefined || n >= BigInt(def.min));
    }
    case 'DOUBLE': {
      const n = Number(text);
      return text !== '' && Number.isFinite(n) && n >= (def.min ?? -Infinity) && n <= (def.max ?? Infinity);
    }
    case 'LIST':
      return text === '' || text.split(/\s*,\s*/).every((item) => def.values?.includes(item) === true);
    case 'STRING':
      return def.values === undefined || def.values.includes(text);
    case 'BOOLEAN':
      return /^(true|false)$/i.test(text);
  }
}

function valueArb(def: TopicConfigDef): fc.Arbitrary<string> {
  const min = BigInt(def.min ?? 0);
  const numeric = fc.oneof(
    fc.bigInt({ min: min - 3n, max: min + 3n }),
    fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }),
    fc.constantFrom(2n ** 31n - 1n, 2n ** 31n, 2n ** 63n - 1n, 2n ** 63n, -1n, 0n),
  ).map(String);
  switch (def.type) {
    case 'INT':
    case 'LONG': return fc.oneof(numeric, fc.constantFrom('', 'x', '1.5', ' 12 ', '+7', '1e3'));
    case 'DOUBLE': return fc.oneof(fc.double({ min: -1, max: 2, noNaN: true }).map(String), fc.constantFrom('', 'NaN', 'abc', '0', '1', '1.0000001'));
    case 'LIST': return fc.array(fc.constantFrom('compact', 'delete', 'shred', ''), { maxLength: 3 }).map((items) => items.join(','));
    case 'STRING': return fc.constantFrom(...(def.values ?? []), 'createtime', '', 'X');
    case 'BOOLEAN': return fc.constantFrom('true', 'false', 'TRUE', 'False', 'yes', '1', '');
  }
}

describe('topic config validation', () => {
  for (const def of TOPIC_CONFIG_DEFS) {
    it(`${def.name} (${def.type}) accepts exactly what Kafka's validator accepts`, () => {
      fc.assert(fc.property(valueArb(def), (value) => {
        let accepted: LogConfig | null = null;
        try {
          accepted = validateTopicConfigs({ [def.name]: value }, BASE);
        } catch (error) {
          expect(error).toBeInstanceOf(ApiError);
          expect((error as ApiError).error).toBe('INVALID_CONFIG');
          expect((error as ApiError).message).toContain(def.name);
        }
        // LogConfig keeps safe integers only: a LONG beyond 2^53 that Kafka accepts is refused by LogConfig unless it saturates.
        const key = logConfigKeyOf(def.name);
        if (accepted === null) {
          if (reference(def, value) && key !== undefined && (def.type === 'LONG' || def.type === 'INT')) {
            expect(BigInt(value.trim()) < -(2n ** 53n)).toBe(true);
          } else {
            expect(reference(def, value)).toBe(false);
          }
          return;
        }
        expect(reference(def, value)).toBe(true);
        if (key === undefined) return;
        const got = accepted[key];
        if (def.type === 'INT' || def.type === 'LONG') {
          const want = BigInt(value.trim());
          expect(BigInt(got as number)).toBe(want > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : want);
        } else if (def.type === 'BOOLEAN') {
          expect(got).toBe(value.trim().toLowerCase() === 'true');
        } else if (def.type === 'DOUBLE') {
          expect(got).toBe(Number(value.trim()));
        } else if (def.type === 'LIST') {
          // One spelling per set of items (LogConfig's cleanupPolicy): sorted, deduplicated.
          expect(got).toBe([...new Set(value.split(',').map((item) => item.trim()).filter((item) => item !== ''))].sort().join(','));
        } else {
          expect(got).toBe(value.trim());
        }
      }), { numRuns: 200 });
    });
  }

  it('holds Kafka\'s types, defaults and minimums (LogConfig.java, apache/kafka 1eb7644)', () => {
    const facts = Object.fromEntries(TOPIC_CONFIG_DEFS.map((d) => [d.name, [d.type, d.defaultValue, d.min ?? null, d.max ?? null]]));
    const MAX = '9223372036854775807';
    expect(facts).toEqual({
      'cleanup.policy': ['LIST', 'delete', null, null], 'delete.retention.ms': ['LONG', '86400000', 0, null],
      'file.delete.delay.ms': ['LONG', '60000', 0, null], 'flush.messages': ['LONG', MAX, 1, null], 'flush.ms': ['LONG', MAX, 0, null],
      'index.interval.bytes': ['INT', '4096', 0, null], 'max.compaction.lag.ms': ['LONG', MAX, 1, null],
      'max.message.bytes': ['INT', '1048588', 0, null], 'message.timestamp.after.max.ms': ['LONG', MAX, 0, null],
      'message.timestamp.before.max.ms': ['LONG', MAX, 0, null], 'message.timestamp.type': ['STRING', 'CreateTime', null, null],
      'min.cleanable.dirty.ratio': ['DOUBLE', '0.5', 0, 1], 'min.compaction.lag.ms': ['LONG', '0', 0, null],
      'preallocate': ['BOOLEAN', 'false', null, null], 'retention.bytes': ['LONG', '-1', null, null],
      'retention.ms': ['LONG', '604800000', -1, null], 'segment.bytes': ['INT', '1073741824', 14, null],
      'segment.index.bytes': ['INT', '10485760', 4, null], 'segment.jitter.ms': ['LONG', '0', 0, null],
      'segment.ms': ['LONG', '604800000', 1, null],
    });
    // Where LogConfig has the key, its default is Kafka's default.
    for (const def of TOPIC_CONFIG_DEFS) {
      const key = logConfigKeyOf(def.name);
      if (key === undefined) continue;
      const value = LogConfig.DEFAULTS[key];
      expect(value === Number.MAX_SAFE_INTEGER ? '9223372036854775807' : String(value)).toBe(def.defaultValue);
    }
  });

  it('refuses unknown names, and min.compaction.lag.ms above max.compaction.lag.ms', () => {
    expect(() => validateTopicConfigs({ 'compression.type': 'zstd' }, BASE)).toThrow('Unknown topic config name: compression.type');
    expect(() => validateTopicConfigs({ 'min.compaction.lag.ms': '10', 'max.compaction.lag.ms': '9' }, BASE)).toThrow(/conflict/);
    expect(validateTopicConfigs({ 'min.compaction.lag.ms': '9', 'max.compaction.lag.ms': '9' }, BASE)).toBeInstanceOf(LogConfig);
  });
});
