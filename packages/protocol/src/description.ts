// The declarative description of one Kafka message (a request, a response, a
// header or a data message carried inside another's bytes), mirroring the
// semantics of Kafka's message JSON definitions (apache/kafka
// clients/src/main/resources/common/message/*.json):
//
//   validVersions     "0-12": the versions this description is read and written at
//                     (a sub-range of Kafka's: the versions we support)
//   flexibleVersions  "9+" or "none": versions with compact strings/bytes/arrays,
//                     a tagged-field section after every struct, and header v2/v1
//   field.name        the JS property (Kafka's name with a lower-case first letter:
//                     ThrottleTimeMs → throttleTimeMs)
//   field.type        int8 int16 uint16 int32 int64 float64 bool string bytes records
//                     uuid, "[]<primitive>", "[]<StructName>" (with `fields`), or
//                     "<StructName>" (a single struct, with `fields`)
//   field.versions    versions in which the field is present ("0+", "3-9", "5", "none")
//   nullableVersions  versions in which a string/bytes/records/array/struct may be null
//   taggedVersions + tag   a tagged field (flexible versions only), written only when
//                     its value differs from its default
//   default           the value decoded when the field is absent (JS value, not
//                     Kafka's string form); Kafka's implicit defaults otherwise
//   flexibleVersions (field)  "none" keeps a string non-compact in flexible versions
//                     (RequestHeader.ClientId)
//   saturate          ours, not Kafka's (int64 only): decode values beyond ±(2^53 − 1)
//                     clamped to ±(2^53 − 1) instead of failing the frame with
//                     UNSAFE_INTEGER. For request offsets and timestamps that a
//                     client may send beyond any the log can hold (Fetch at 2^62:
//                     Kafka answers OFFSET_OUT_OF_RANGE); on the wire still Kafka's int64.
//   ignorable         Kafka's flag, kept as a fact for the checker; the codec, like
//                     the broker's former hand-written codecs, silently skips any field absent
//                     at the version being written.
//
// A description is data: the codec compiles it once per version into a plan.

import { assert } from '@seglog/common';

export type PrimitiveType =
  | 'int8' | 'int16' | 'uint16' | 'int32' | 'int64' | 'float64' | 'bool'
  | 'string' | 'bytes' | 'records' | 'uuid';

export const PRIMITIVE_TYPES: readonly PrimitiveType[] = [
  'int8', 'int16', 'uint16', 'int32', 'int64', 'float64', 'bool', 'string', 'bytes', 'records', 'uuid',
];

export type FieldValue = unknown;

export interface FieldDescription {
  readonly name: string;
  /** A primitive, "[]primitive", "[]Struct" or "Struct" (the latter two with `fields`). */
  readonly type: string;
  readonly versions: string;
  readonly nullableVersions?: string;
  readonly taggedVersions?: string;
  readonly tag?: number;
  readonly flexibleVersions?: string;
  readonly default?: FieldValue;
  readonly ignorable?: boolean;
  /** int64 only: decode clamped to ±(2^53 − 1) instead of failing (see the header). */
  readonly saturate?: boolean;
  readonly fields?: readonly FieldDescription[];
}

/** 'data': a message carried inside another's bytes (Kafka's "type": "data", e.g. the consumer protocol). */
export type MessageKind = 'request' | 'response' | 'header' | 'data';

export interface MessageDescription {
  /** Kafka's message name: ProduceRequest, RequestHeader, ... */
  readonly name: string;
  readonly kind: MessageKind;
  /** −1 for headers and data messages. */
  readonly apiKey: number;
  readonly validVersions: string;
  readonly flexibleVersions: string;
  readonly fields: readonly FieldDescription[];
}

/** Inclusive range; `none` is {min: 1, max: 0} (empty). */
export interface VersionRange {
  readonly min: number;
  readonly max: number;
}

export const NO_VERSIONS: VersionRange = { min: 1, max: 0 };
const MAX_VERSION = 32767;

/** Parses Kafka's version-range syntax: "N", "N+", "N-M", "none". */
export function parseVersions(text: string): VersionRange {
  if (text === 'none') return NO_VERSIONS;
  const plus = /^(\d+)\+$/.exec(text);
  if (plus !== null) return { min: Number(plus[1]), max: MAX_VERSION };
  const range = /^(\d+)-(\d+)$/.exec(text);
  if (range !== null) return { min: Number(range[1]), max: Number(range[2]) };
  assert(/^\d+$/.test(text), 'parseVersions: not N, N+, N-M or none');
  return { min: Number(text), max: Number(text) };
}

export function inVersions(range: VersionRange, version: number): boolean {
  return version >= range.min && version <= range.max;
}

export function isEmptyRange(range: VersionRange): boolean {
  return range.min > range.max;
}

/** The element type of an array type ("[]int32" → "int32"), or null. */
export function arrayElementType(type: string): string | null {
  return type.startsWith('[]') ? type.slice(2) : null;
}

export function isPrimitiveType(type: string): type is PrimitiveType {
  return (PRIMITIVE_TYPES as readonly string[]).includes(type);
}

export const ZERO_UUID = '00000000000000000000000000000000';
