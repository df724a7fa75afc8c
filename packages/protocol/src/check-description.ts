// The checker: compares a MessageDescription with the facts of Kafka's
// message JSON definition (transcribed into KafkaMessageFacts; the package's
// test fixture holds them for every described message) and returns every
// disagreement as a readable line ('' problems = the description agrees).
//
// Rules (a description may cover fewer versions and fewer tagged fields than
// Kafka, never differ on a fact):
//   - name, kind and apiKey match; validVersions is a sub-range of Kafka's;
//     flexibleVersions is the same range.
//   - every described field exists in Kafka's struct (Kafka name with a
//     lower-case first letter) with the same type, versions, nullableVersions,
//     taggedVersions, tag and field flexibleVersions; a default Kafka declares
//     is the description's default (a description may add a default Kafka leaves
//     implicit, to match the broker's objects).
//   - the body (untagged) fields present in any of our versions are exactly
//     Kafka's, in Kafka's order: the wire layout cannot differ. Tagged fields
//     may be left out (the codec skips unknown tags).
//   - `saturate` (ours: decode clamped to ±(2^53 − 1)) only on a Kafka int64.
//   - nested struct fields are checked by the same rules.

import {
  isEmptyRange, parseVersions, type FieldDescription, type MessageDescription, type VersionRange,
} from './description.js';

export interface KafkaFieldFacts {
  readonly name: string;
  readonly type: string;
  readonly versions: string;
  readonly nullableVersions?: string;
  readonly taggedVersions?: string;
  readonly tag?: number;
  readonly flexibleVersions?: string;
  /** Kafka's default in its string form ("-1", "true", "null", "" ...). */
  readonly default?: string;
  readonly fields?: readonly KafkaFieldFacts[];
}

export interface KafkaMessageFacts {
  readonly apiKey: number | null;
  readonly type: string;
  readonly validVersions: string;
  readonly flexibleVersions: string;
  readonly fields: readonly KafkaFieldFacts[];
}

export interface KafkaFacts {
  readonly source: string;
  readonly messages: Readonly<Record<string, KafkaMessageFacts>>;
}

export function checkDescription(description: MessageDescription, facts: KafkaFacts): string[] {
  const problems: string[] = [];
  const kafka = facts.messages[description.name];
  if (kafka === undefined) return [`${description.name}: no Kafka definition of that name`];
  if (kafka.type !== description.kind) problems.push(`${description.name}: kind ${description.kind}, Kafka type ${kafka.type}`);
  if ((kafka.apiKey ?? -1) !== description.apiKey) {
    problems.push(`${description.name}: apiKey ${description.apiKey}, Kafka ${String(kafka.apiKey)}`);
  }
  const ours = parseVersions(description.validVersions);
  const theirs = parseVersions(kafka.validVersions);
  if (isEmptyRange(ours) || ours.min < theirs.min || ours.max > theirs.max) {
    problems.push(`${description.name}: validVersions ${description.validVersions} not within Kafka's ${kafka.validVersions}`);
  }
  if (!sameRange(description.flexibleVersions, kafka.flexibleVersions)) {
    problems.push(`${description.name}: flexibleVersions ${description.flexibleVersions}, Kafka ${kafka.flexibleVersions}`);
  }
  checkFields(description.name, description.fields, kafka.fields, ours, problems);
  return problems;
}

function checkFields(
  path: string, ours: readonly FieldDescription[], theirs: readonly KafkaFieldFacts[], range: VersionRange, problems: string[],
): void {
  for (const field of ours) {
    const kafka = theirs.find((candidate) => jsName(candidate.name) === field.name);
    if (kafka === undefined) {
      problems.push(`${path}.${field.name}: not a field of Kafka's struct`);
      continue;
    }
    checkField(`${path}.${field.name}`, field, kafka, range, problems);
  }
  const ourBody = ours.filter((field) => field.taggedVersions === undefined && meets(field.versions, range)).map((field) => field.name);
  const kafkaBody = theirs
    .filter((field) => field.taggedVersions === undefined && meets(field.versions, range))
    .map((field) => jsName(field.name));
  if (ourBody.join(',') !== kafkaBody.join(',')) {
    problems.push(`${path}: body fields [${ourBody.join(', ')}], Kafka (in our versions) [${kafkaBody.join(', ')}]`);
  }
}

function checkField(path: string, field: FieldDescription, kafka: KafkaFieldFacts, range: VersionRange, problems: string[]): void {
  if (field.type !== kafka.type) problems.push(`${path}: type ${field.type}, Kafka ${kafka.type}`);
  const pairs: readonly [string, string | undefined, string | undefined][] = [
    ['versions', field.versions, kafka.versions],
    ['nullableVersions', field.nullableVersions, kafka.nullableVersions],
    ['taggedVersions', field.taggedVersions, kafka.taggedVersions],
    ['flexibleVersions', field.flexibleVersions, kafka.flexibleVersions],
  ];
  for (const [what, mine, kafkas] of pairs) {
    if (!sameRange(mine, kafkas, what === 'flexibleVersions' ? '0+' : 'none')) {
      problems.push(`${path}: ${what} ${mine ?? '(none)'}, Kafka ${kafkas ?? '(none)'}`);
    }
  }
  // `saturate` is ours (a decode rule, not a wire fact): the wire type stays Kafka's int64.
  if (field.saturate === true && kafka.type !== 'int64') problems.push(`${path}: saturate on Kafka type ${kafka.type}, only int64`);
  if (field.tag !== kafka.tag) problems.push(`${path}: tag ${String(field.tag)}, Kafka ${String(kafka.tag)}`);
  if (kafka.default !== undefined && !sameDefault(field, kafka.default)) {
    problems.push(`${path}: default ${JSON.stringify(field.default)}, Kafka "${kafka.default}"`);
  }
  if (field.fields !== undefined || kafka.fields !== undefined) {
    checkFields(path, field.fields ?? [], kafka.fields ?? [], range, problems);
  }
}

function sameDefault(field: FieldDescription, kafka: string): boolean {
  if (field.default === undefined) return false;
  if (kafka === 'null') return field.default === null;
  if (field.type === 'bool') return String(field.default) === kafka;
  if (field.type === 'string') return field.default === kafka;
  return typeof field.default === 'number' && field.default === Number(kafka);
}

function sameRange(ours: string | undefined, theirs: string | undefined, absent = 'none'): boolean {
  const a = parseVersions(ours ?? absent);
  const b = parseVersions(theirs ?? absent);
  if (isEmptyRange(a) || isEmptyRange(b)) return isEmptyRange(a) && isEmptyRange(b);
  return a.min === b.min && a.max === b.max;
}

function meets(versions: string, range: VersionRange): boolean {
  const field = parseVersions(versions);
  return !isEmptyRange(field) && field.min <= range.max && field.max >= range.min;
}

export function jsName(kafkaName: string): string {
  return kafkaName.charAt(0).toLowerCase() + kafkaName.slice(1);
}
