// (c) Every description agrees with the facts of Kafka's definition
// (fixtures/kafka-messages.json, see fixtures/README.md), and the checker
// catches a description that disagrees: each mutation below must be reported.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ALL_DESCRIPTIONS, FETCH_REQUEST, METADATA_RESPONSE, checkDescription,
  type FieldDescription, type KafkaFacts, type MessageDescription,
} from '../src/index.js';

const facts = JSON.parse(readFileSync(new URL('./fixtures/kafka-messages.json', import.meta.url), 'utf8')) as KafkaFacts;

/** A copy of `description` with `change` applied to the field at `path` (names from the top). */
function mutateField(description: MessageDescription, path: readonly string[], change: (field: FieldDescription) => FieldDescription | null): MessageDescription {
  const walk = (fields: readonly FieldDescription[], rest: readonly string[]): FieldDescription[] => fields.flatMap((field) => {
    if (field.name !== rest[0]) return [field];
    if (rest.length === 1) {
      const changed = change(field);
      return changed === null ? [] : [changed];
    }
    return [{ ...field, fields: walk(field.fields ?? [], rest.slice(1)) }];
  });
  return { ...description, fields: walk(description.fields, path) };
}

describe('descriptions agree with Kafka\'s definitions', () => {
  it('the fixture covers every description', () => {
    expect(ALL_DESCRIPTIONS.map((description) => description.name).filter((name) => facts.messages[name] === undefined)).toEqual([]);
  });

  for (const description of ALL_DESCRIPTIONS) {
    it(description.name, () => {
      expect(checkDescription(description, facts)).toEqual([]);
    });
  }
});

describe('the checker catches a wrong description', () => {
  const path = ['topics', 'partitions', 'currentLeaderEpoch'];

  it('a field in the wrong versions', () => {
    const wrong = mutateField(FETCH_REQUEST, path, (field) => ({ ...field, versions: '8+' }));
    expect(checkDescription(wrong, facts)).toEqual(['FetchRequest.topics.partitions.currentLeaderEpoch: versions 8+, Kafka 9+']);
  });

  it('a missing body field, and a field Kafka does not have', () => {
    const missing = mutateField(FETCH_REQUEST, path, () => null);
    expect(checkDescription(missing, facts).join('\n')).toMatch(/FetchRequest\.topics\.partitions: body fields .* Kafka/);
    const extra = mutateField(FETCH_REQUEST, path, (field) => ({ ...field, name: 'leaderEpoch' }));
    expect(checkDescription(extra, facts)).toContain('FetchRequest.topics.partitions.leaderEpoch: not a field of Kafka\'s struct');
  });

  it('fields in the wrong order', () => {
    const [first, second, ...rest] = METADATA_RESPONSE.fields;
    const swapped = { ...METADATA_RESPONSE, fields: [second as FieldDescription, first as FieldDescription, ...rest] };
    expect(checkDescription(swapped, facts).join('\n')).toMatch(/MetadataResponse: body fields \[brokers, throttleTimeMs/);
  });

  it('wrong type, nullability, tag, default, saturate, flexible and valid versions', () => {
    const problems = (description: MessageDescription): string => checkDescription(description, facts).join('\n');
    expect(problems(mutateField(FETCH_REQUEST, ['maxWaitMs'], (f) => ({ ...f, type: 'int64' })))).toContain('maxWaitMs: type int64, Kafka int32');
    expect(problems(mutateField(METADATA_RESPONSE, ['brokers', 'rack'], (f) => ({ ...f, nullableVersions: '2+' })))).toContain('rack: nullableVersions 2+, Kafka 1+');
    expect(problems(mutateField(FETCH_REQUEST, ['clusterId'], (f) => ({ ...f, tag: 1 })))).toContain('clusterId: tag 1, Kafka 0');
    expect(problems(mutateField(FETCH_REQUEST, ['sessionEpoch'], (f) => ({ ...f, default: 0 })))).toContain('sessionEpoch: default 0, Kafka "-1"');
    expect(problems(mutateField(FETCH_REQUEST, ['maxWaitMs'], (f) => ({ ...f, saturate: true })))).toContain('maxWaitMs: saturate on Kafka type int32, only int64');
    expect(problems({ ...FETCH_REQUEST, flexibleVersions: '11+' })).toContain('flexibleVersions 11+, Kafka 12+');
    expect(problems({ ...FETCH_REQUEST, validVersions: '4-18' })).toContain('validVersions 4-18 not within Kafka\'s 0-17');
  });
});
