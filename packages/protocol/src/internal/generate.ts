// Generates a decode and an encode function per StructPlan (new Function),
// once, when a codec is built. The generated decoder builds each struct as
// one object literal (fields in declaration order, so one hidden class per
// struct and version) straight from ProtocolReader calls; the encoder is a
// straight line of ProtocolWriter calls. Arrays and nested structs get their
// own generated functions, bound once as constants of the enclosing one:
// nothing is allocated per message or field except the decoded values.
//
// Why generate: the plan walked by a loop and a switch (interpret.ts) ran at
// 0.53–0.79x the broker's former hand-written codecs (bench/protocol.bench.ts);
// the generated functions measured at parity within the machine's noise
// (0.89–1.27x over two runs of 5 and 9 rounds, shared 2-core machine; 0.93–
// 1.05x on 8b8945c, the last commit with the hand-written codecs). The bench
// now compares the interpreter with them: 0.62–0.74x.
// The interpreter stays as the reference the tests compare against, and
// handles the rare tagged-field sections for both.
//
// Only data from our own descriptions reaches the generated source: field
// names are checked to be identifiers, every other value is passed in as a
// bound constant, never printed into the code.

import { assert } from '@seglog/common';
import { malformed } from '../protocol-error.js';
import type { ProtocolReader } from '../protocol-reader.js';
import type { ProtocolWriter } from '../protocol-writer.js';
import { decodeTaggedFields, encodeTaggedFields } from './interpret.js';
import { Op, Where, type Step, type StructPlan } from './plan.js';

export type StructDecoder = (reader: ProtocolReader) => Record<string, unknown>;
export type StructEncoder = (writer: ProtocolWriter, value: Record<string, unknown>) => void;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Code, plus the constants it refers to as c0, c1, ... */
class Unit {
  readonly constants: unknown[] = [];

  constant(value: unknown): string {
    this.constants.push(value);
    return `c${this.constants.length - 1}`;
  }

  build<F>(body: string): F {
    const names = this.constants.map((_, i) => `c${i}`);
    const factory = new Function(...names, `'use strict';\n${body}`) as (...constants: unknown[]) => F;
    return factory(...this.constants);
  }
}

function failMissing(): never {
  assert(false, 'MessageCodec.write: a field present at this version is undefined or null');
}

function failNull(): never {
  assert(false, 'MessageCodec.write: null in a non-nullable field');
}

export function generateDecoder(plan: StructPlan): StructDecoder {
  const unit = new Unit();
  const properties = plan.steps.map((step) => {
    assert(IDENTIFIER.test(step.name), 'generateDecoder: a field name that is not an identifier');
    const value = step.where === Where.BODY ? decodeExpression(unit, step) : unit.constant(step.defaultValue);
    return `${step.name}: ${value}`;
  });
  const tags = plan.flexible ? `${unit.constant(decodeTaggedFields)}(r, ${unit.constant(plan)}, o);\n` : '';
  return unit.build<StructDecoder>(`return function decodeStruct(r) {\nconst o = { ${properties.join(', ')} };\n${tags}return o;\n};`);
}

function decodeExpression(unit: Unit, step: Step): string {
  const compact = String(step.compact);
  switch (step.op) {
    case Op.INT8: return 'r.int8()';
    case Op.INT16: return 'r.int16()';
    case Op.UINT16: return 'r.uint16()';
    case Op.INT32: return 'r.int32()';
    case Op.INT64: return 'r.int64()';
    case Op.INT64_SATURATED: return 'r.int64Saturated()';
    case Op.FLOAT64: return 'r.float64()';
    case Op.BOOL: return 'r.bool()';
    case Op.UUID: return 'r.uuid()';
    case Op.STRING: return step.nullable ? `r.nullableString(${compact})` : `r.string(${compact})`;
    case Op.BYTES:
    case Op.RECORDS: return step.nullable ? `r.nullableBytes(${compact})` : `r.bytes(${compact})`;
    case Op.ARRAY: return `${unit.constant(generateArrayDecoder(step))}(r)`;
    case Op.STRUCT: {
      const decode = unit.constant(generateDecoder(step.child as StructPlan));
      if (!step.nullable) return `${decode}(r)`;
      return `${unit.constant(decodeNullableStruct)}(r, ${decode})`;
    }
  }
}

function decodeNullableStruct(reader: ProtocolReader, decode: StructDecoder): Record<string, unknown> | null {
  const marker = reader.int8();
  if (marker === -1) return null;
  if (marker !== 1) throw malformed('bad nullable struct marker', reader.position - 1, { marker });
  return decode(reader);
}

function generateArrayDecoder(step: Step): (reader: ProtocolReader) => unknown[] | null {
  const unit = new Unit();
  const element = step.element as Step;
  const length = step.nullable ? 'nullableArrayLength' : 'arrayLength';
  const minBytes = String(element.minBytes);
  return unit.build(`return function decodeArray(r) {
const n = r.${length}(${String(step.compact)}, ${minBytes});
if (n === -1) return null;
const a = [];
for (let i = 0; i < n; i++) a.push(${decodeExpression(unit, element)});
return a;
};`);
}

export function generateEncoder(plan: StructPlan): StructEncoder {
  const unit = new Unit();
  const missing = unit.constant(failMissing);
  const statements: string[] = [];
  for (const step of plan.steps) {
    if (step.where !== Where.BODY) continue;
    assert(IDENTIFIER.test(step.name), 'generateEncoder: a field name that is not an identifier');
    statements.push(`x = v.${step.name};`);
    statements.push(step.nullable ? `if (x === undefined) ${missing}();` : `if (x === undefined || x === null) ${missing}();`);
    statements.push(encodeStatement(unit, step));
  }
  if (plan.flexible) statements.push(`${unit.constant(encodeTaggedFields)}(w, ${unit.constant(plan)}, v);`);
  return unit.build<StructEncoder>(`return function encodeStruct(w, v) {\nlet x;\n${statements.join('\n')}\n};`);
}

/** Writes `x` (checked: defined, and non-null unless nullable). */
function encodeStatement(unit: Unit, step: Step): string {
  const compact = String(step.compact);
  switch (step.op) {
    case Op.INT8: return 'w.int8(x);';
    case Op.INT16: return 'w.int16(x);';
    case Op.UINT16: return 'w.uint16(x);';
    case Op.INT32: return 'w.int32(x);';
    case Op.INT64:
    case Op.INT64_SATURATED: return 'w.int64(x);';
    case Op.FLOAT64: return 'w.float64(x);';
    case Op.BOOL: return 'w.bool(x);';
    case Op.UUID: return 'w.uuid(x);';
    case Op.STRING: return `w.nullableString(x, ${compact});`;
    case Op.BYTES: return `w.nullableBytes(x, ${compact});`;
    case Op.RECORDS: return `w.records(x, ${compact});`;
    case Op.ARRAY: return `${unit.constant(generateArrayEncoder(step))}(w, x);`;
    case Op.STRUCT: {
      const encode = unit.constant(generateEncoder(step.child as StructPlan));
      if (!step.nullable) return `${encode}(w, x);`;
      return `w.int8(x === null ? -1 : 1); if (x !== null) ${encode}(w, x);`;
    }
  }
}

function generateArrayEncoder(step: Step): (writer: ProtocolWriter, items: readonly unknown[] | null) => void {
  const unit = new Unit();
  const element = step.element as Step;
  const nullCase = step.nullable
    ? `if (a === null) { w.nullableArrayLength(null, ${String(step.compact)}); return; }`
    : '';
  const check = element.op === Op.STRUCT || element.op === Op.STRING || element.op === Op.BYTES || element.op === Op.RECORDS
    ? `if (x === undefined || x === null) ${unit.constant(failNull)}();`
    : `if (x === undefined) ${unit.constant(failMissing)}();`;
  return unit.build(`return function encodeArray(w, a) {
${nullCase}
w.arrayLength(a.length, ${String(step.compact)});
for (let i = 0; i < a.length; i++) {
const x = a[i];
${check}
${encodeStatement(unit, element)}
}
};`);
}
