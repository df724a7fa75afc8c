// The reference interpreter of a StructPlan: a loop over the steps and a
// switch per step. MessageCodec can run on it ({ mode: 'interpreted' }); the
// tests compare it with the generated functions (generate.ts), which also
// call its tagged-field readers and writers (rare, off the hot path).

import { assert } from '@seglog/common';
import { malformed } from '../protocol-error.js';
import type { ProtocolReader } from '../protocol-reader.js';
import { ProtocolWriter, type RecordsRef } from '../protocol-writer.js';
import { Op, Where, type Step, type StructPlan } from './plan.js';

type Struct = Record<string, unknown>;

export function decodeStruct(reader: ProtocolReader, plan: StructPlan): Struct {
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
    case Op.INT64_SATURATED: return reader.int64Saturated();
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
export function decodeTaggedFields(reader: ProtocolReader, plan: StructPlan, out: Struct): void {
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

export function encodeStruct(writer: ProtocolWriter, plan: StructPlan, value: Struct): void {
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
    case Op.INT64:
    case Op.INT64_SATURATED: return writer.int64(value as number);
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

export function encodeTaggedFields(writer: ProtocolWriter, plan: StructPlan, value: Struct): void {
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
