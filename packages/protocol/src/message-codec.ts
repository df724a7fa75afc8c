// MessageCodec: the one generic encoder/decoder. It compiles a description
// once per valid version (internal/plan.ts) and then reads or writes any
// message by walking the plan's steps with a loop and a switch.
//
// Decoding keeps the ProtocolReader's invariants: every read is bounds-checked,
// every array count is bounded by count × (smallest element) ≤ remaining bytes
// before anything is allocated, bytes/records are zero-copy slices of the
// frame, and every failure is a typed SeglogError (SEGLOG_ERR_PROTOCOL_*).
//
// Decoded objects carry every described field, in declaration order (one
// object shape per struct and version): fields absent at the version hold
// their default; tagged fields hold their default unless the tag is present.
//
// Unknown tagged fields are skipped and DROPPED: a decoded object has exactly
// the described fields (the same shape as the broker's hand-written codecs),
// and the broker never forwards a message it has decoded. A description that
// needs a tag adds the field. Tagged fields are written only when their value
// differs from the default (as Kafka does), in increasing tag order.
//
// Encoding, like the hand-written codecs, skips fields absent at the version
// (Kafka's generated code would throw for a non-ignorable one holding a
// non-default value; the broker builds one response object for every version).

import { assert } from '@seglog/common';
import { inVersions, parseVersions, type MessageDescription, type VersionRange } from './description.js';
import { Op, Where, compileMessage, type Step, type StructPlan } from './internal/plan.js';
import { malformed } from './protocol-error.js';
import type { ProtocolReader } from './protocol-reader.js';
import { ProtocolWriter, type RecordsRef } from './protocol-writer.js';

type Struct = Record<string, unknown>;

export class MessageCodec<T extends object = Struct> {
  readonly description: MessageDescription;
  readonly versions: VersionRange;
  private readonly plans: readonly StructPlan[];

  constructor(description: MessageDescription) {
    this.description = description;
    this.versions = parseVersions(description.validVersions);
    assert(this.versions.min <= this.versions.max, 'MessageCodec: empty validVersions');
    const plans: StructPlan[] = [];
    for (let version = this.versions.min; version <= this.versions.max; version++) {
      plans.push(compileMessage(description, version));
    }
    this.plans = plans;
  }

  supports(version: number): boolean {
    return Number.isInteger(version) && inVersions(this.versions, version);
  }

  isFlexible(version: number): boolean {
    return this.plan(version).flexible;
  }

  /** The compiled plan of `version` (tests and tools). */
  plan(version: number): StructPlan {
    assert(this.supports(version), 'MessageCodec: version outside validVersions');
    return this.plans[version - this.versions.min] as StructPlan;
  }

  /** Reads one message at the reader's position (the caller checks for trailing bytes). */
  decode(reader: ProtocolReader, version: number): T {
    return decodeStruct(reader, this.plan(version)) as T;
  }

  write(writer: ProtocolWriter, version: number, value: T): void {
    encodeStruct(writer, this.plan(version), value as Struct);
  }
}

function decodeStruct(reader: ProtocolReader, plan: StructPlan): Struct {
  const out: Struct = {};
  const steps = plan.steps;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as Step;
    out[step.name] = step.where === Where.BODY ? decodeValue(reader, step) : step.defaultValue;
  }
  if (plan.flexible) decodeTaggedFields(reader, plan, out);
  return out;
}

function decodeValue(reader: ProtocolReader, step: Step): unknown {
  switch (step.op) {
    case Op.INT8: return reader.int8();
    case Op.INT16: return reader.int16();
    case Op.UINT16: return reader.uint16();
    case Op.INT32: return reader.int32();
    case Op.INT64: return reader.int64();
    case Op.FLOAT64: return reader.float64();
    case Op.BOOL: return reader.bool();
    case Op.UUID: return reader.uuid();
    case Op.STRING: return step.nullable ? reader.nullableString(step.compact) : reader.string(step.compact);
    case Op.BYTES:
    case Op.RECORDS: return step.nullable ? reader.nullableBytes(step.compact) : reader.bytes(step.compact);
    case Op.ARRAY: return decodeArray(reader, step);
    case Op.STRUCT: return decodeNullableStruct(reader, step);
  }
}

function decodeArray(reader: ProtocolReader, step: Step): unknown[] | null {
  const element = step.element as Step;
  const count = step.nullable
    ? reader.nullableArrayLength(step.compact, element.minBytes)
    : reader.arrayLength(step.compact, element.minBytes);
  if (count === -1) return null;
  const items: unknown[] = [];
  for (let i = 0; i < count; i++) items.push(decodeValue(reader, element));
  return items;
}

function decodeNullableStruct(reader: ProtocolReader, step: Step): Struct | null {
  if (step.nullable) {
    const start = reader.position;
    const marker = reader.int8();
    if (marker === -1) return null;
    if (marker !== 1) throw malformed('bad nullable struct marker', start, { marker });
  }
  return decodeStruct(reader, step.child as StructPlan);
}

/** The tag section: known tags decoded within their size, unknown tags skipped (dropped). */
function decodeTaggedFields(reader: ProtocolReader, plan: StructPlan, out: Struct): void {
  const start = reader.position;
  const count = reader.uvarint();
  if (count * 2 > reader.end - reader.position) throw malformed('tagged field count exceeds the frame', start, { count });
  let previousTag = -1;
  for (let i = 0; i < count; i++) {
    const tagPosition = reader.position;
    const tag = reader.uvarint();
    if (tag <= previousTag) throw malformed('tagged fields out of order or repeated', tagPosition, { tag, previousTag });
    previousTag = tag;
    const size = reader.uvarint();
    if (size > reader.end - reader.position) throw malformed('tagged field size exceeds the frame', tagPosition, { tag, size });
    const fieldEnd = reader.position + size;
    const step = findTag(plan.tagged, tag);
    if (step === null) {
      reader.position = fieldEnd;
      continue;
    }
    const outerEnd = reader.end;
    reader.end = fieldEnd;
    try {
      out[step.name] = decodeValue(reader, step);
    } finally {
      reader.end = outerEnd;
    }
    if (reader.position !== fieldEnd) throw malformed('tagged field not consumed exactly', tagPosition, { tag, size });
  }
}

function findTag(tagged: readonly Step[], tag: number): Step | null {
  for (let i = 0; i < tagged.length; i++) {
    const step = tagged[i] as Step;
    if (step.tag === tag) return step;
  }
  return null;
}

function encodeStruct(writer: ProtocolWriter, plan: StructPlan, value: Struct): void {
  const steps = plan.steps;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as Step;
    if (step.where === Where.BODY) encodeValue(writer, step, value[step.name]);
  }
  if (plan.flexible) encodeTaggedFields(writer, plan, value);
}

function encodeValue(writer: ProtocolWriter, step: Step, value: unknown): void {
  assert(value !== undefined, 'MessageCodec.write: a field present at this version is undefined');
  assert(value !== null || step.nullable, 'MessageCodec.write: null in a non-nullable field');
  switch (step.op) {
    case Op.INT8: return writer.int8(value as number);
    case Op.INT16: return writer.int16(value as number);
    case Op.UINT16: return writer.uint16(value as number);
    case Op.INT32: return writer.int32(value as number);
    case Op.INT64: return writer.int64(value as number);
    case Op.FLOAT64: return writer.float64(value as number);
    case Op.BOOL: return writer.bool(value as boolean);
    case Op.UUID: return writer.uuid(value as string);
    case Op.STRING: return writer.nullableString(value as string | null, step.compact);
    case Op.BYTES: return writer.nullableBytes(value as Buffer | null, step.compact);
    case Op.RECORDS: return writer.records(value as Buffer | RecordsRef | null, step.compact);
    case Op.ARRAY: return encodeArray(writer, step, value as readonly unknown[] | null);
    case Op.STRUCT: return encodeNullableStruct(writer, step, value as Struct | null);
  }
}

function encodeArray(writer: ProtocolWriter, step: Step, items: readonly unknown[] | null): void {
  if (items === null) {
    writer.nullableArrayLength(null, step.compact);
    return;
  }
  writer.arrayLength(items.length, step.compact);
  const element = step.element as Step;
  for (let i = 0; i < items.length; i++) encodeValue(writer, element, items[i]);
}

function encodeNullableStruct(writer: ProtocolWriter, step: Step, value: Struct | null): void {
  if (step.nullable) {
    writer.int8(value === null ? -1 : 1);
    if (value === null) return;
  }
  encodeStruct(writer, step.child as StructPlan, value as Struct);
}

function encodeTaggedFields(writer: ProtocolWriter, plan: StructPlan, value: Struct): void {
  const tagged = plan.tagged;
  let count = 0;
  for (let i = 0; i < tagged.length; i++) if (!isDefault(tagged[i] as Step, value[(tagged[i] as Step).name])) count++;
  writer.uvarint(count);
  if (count === 0) return;
  for (let i = 0; i < tagged.length; i++) {
    const step = tagged[i] as Step;
    const fieldValue = value[step.name];
    if (isDefault(step, fieldValue)) continue;
    // Rare (not on the hot path): the value is encoded aside to learn its size.
    const scratch = new ProtocolWriter(64);
    encodeValue(scratch, step, fieldValue);
    const finished = scratch.finish();
    writer.uvarint(step.tag);
    writer.uvarint(finished.totalBytes);
    for (const part of finished.parts) {
      assert(Buffer.isBuffer(part), 'MessageCodec.write: a records reference in a tagged field');
      writer.raw(part);
    }
  }
}

function isDefault(step: Step, value: unknown): boolean {
  if (value === undefined || value === step.defaultValue) return true;
  const fallback = step.defaultValue;
  if (Array.isArray(value) && Array.isArray(fallback)) return value.length === 0 && fallback.length === 0;
  return false;
}
