// Compiles a MessageDescription at one version into a StructPlan: a flat
// array of steps, one per described field in declaration order, that the
// codec walks with a loop and a switch (no closures, nothing allocated per
// message beyond the decoded objects themselves). Compiling resolves, once,
// everything that depends on the version: whether a field is present, in the
// body or tagged, nullable, compact, its default, and the minimum encoded size
// of every struct (for the bound-before-allocate check on array counts).

import { assert } from '@seglog/common';
import {
  ZERO_UUID, arrayElementType, inVersions, isPrimitiveType, parseVersions,
  type FieldDescription, type FieldValue, type MessageDescription, type PrimitiveType,
} from '../description.js';

export const Op = {
  INT8: 1, INT16: 2, UINT16: 3, INT32: 4, INT64: 5, FLOAT64: 6, BOOL: 7,
  STRING: 8, BYTES: 9, RECORDS: 10, UUID: 11, ARRAY: 12, STRUCT: 13,
  /** int64 with `saturate`: decoded clamped to ±(2^53 − 1), written as INT64. */
  INT64_SATURATED: 14,
} as const;
export type OpCode = (typeof Op)[keyof typeof Op];

/** Where a field lives at the compiled version. */
export const Where = { ABSENT: 0, BODY: 1, TAGGED: 2 } as const;
export type WhereCode = (typeof Where)[keyof typeof Where];

export interface Step {
  readonly name: string;
  readonly op: OpCode;
  readonly where: WhereCode;
  /** Null allowed (−1 / 0 length, or the −1 marker of a struct). */
  readonly nullable: boolean;
  /** Compact (uvarint-prefixed) string/bytes/array encoding. */
  readonly compact: boolean;
  /** ARRAY: the element (a step with where = BODY and name ''). */
  readonly element: Step | null;
  /** STRUCT (and ARRAY of structs via element): the nested plan. */
  readonly child: StructPlan | null;
  /** Smallest encoding of this value (for array-count bounds). */
  readonly minBytes: number;
  readonly defaultValue: FieldValue;
  /** −1 unless where = TAGGED. */
  readonly tag: number;
}

export interface StructPlan {
  readonly flexible: boolean;
  readonly steps: readonly Step[];
  /** The TAGGED steps, sorted by tag. */
  readonly tagged: readonly Step[];
  /** Smallest encoding of one struct: its body steps and, if flexible, an empty tag section. */
  readonly minBytes: number;
}

const PRIMITIVE_OPS: Readonly<Record<PrimitiveType, OpCode>> = {
  int8: Op.INT8, int16: Op.INT16, uint16: Op.UINT16, int32: Op.INT32, int64: Op.INT64, float64: Op.FLOAT64,
  bool: Op.BOOL, string: Op.STRING, bytes: Op.BYTES, records: Op.RECORDS, uuid: Op.UUID,
};

const FIXED_BYTES: Readonly<Partial<Record<OpCode, number>>> = {
  [Op.INT8]: 1, [Op.INT16]: 2, [Op.UINT16]: 2, [Op.INT32]: 4, [Op.INT64]: 8, [Op.INT64_SATURATED]: 8, [Op.FLOAT64]: 8, [Op.BOOL]: 1, [Op.UUID]: 16,
};

const EMPTY_ARRAY: readonly never[] = Object.freeze([]);

export function compileMessage(description: MessageDescription, version: number): StructPlan {
  assert(inVersions(parseVersions(description.validVersions), version), 'compileMessage: version outside validVersions');
  const flexible = inVersions(parseVersions(description.flexibleVersions), version);
  return compileStruct(description.fields, version, flexible);
}

function compileStruct(fields: readonly FieldDescription[], version: number, flexible: boolean): StructPlan {
  const steps = fields.map((field) => compileField(field, version, flexible));
  const names = new Set(steps.map((step) => step.name));
  assert(names.size === steps.length, 'compileStruct: two fields with one name');
  const tagged = steps.filter((step) => step.where === Where.TAGGED).sort((a, b) => a.tag - b.tag);
  for (let i = 1; i < tagged.length; i++) {
    assert((tagged[i] as Step).tag !== (tagged[i - 1] as Step).tag, 'compileStruct: two tagged fields with one tag');
  }
  let minBytes = flexible ? 1 : 0;
  for (const step of steps) if (step.where === Where.BODY) minBytes += step.minBytes;
  return { flexible, steps, tagged, minBytes };
}

function compileField(field: FieldDescription, version: number, flexible: boolean): Step {
  const present = inVersions(parseVersions(field.versions), version);
  const isTagged = field.taggedVersions !== undefined;
  assert(!isTagged || field.tag !== undefined, 'compileField: taggedVersions without tag');
  const taggedNow = isTagged && flexible && inVersions(parseVersions(field.taggedVersions ?? 'none'), version);
  const where: WhereCode = !present ? Where.ABSENT : isTagged ? (taggedNow ? Where.TAGGED : Where.ABSENT) : Where.BODY;
  const fieldFlexible = field.flexibleVersions === undefined || inVersions(parseVersions(field.flexibleVersions), version);
  // Tagged field values always use the compact forms (they exist only in flexible versions).
  const compact = where === Where.TAGGED || (flexible && fieldFlexible);
  const nullable = field.nullableVersions !== undefined && inVersions(parseVersions(field.nullableVersions), version);
  assert(field.saturate !== true || field.type === 'int64', 'compileField: saturate on a field that is not int64');
  const shape = saturated(compileType(field, version, flexible, compact), field.saturate === true);
  const defaultValue = field.default !== undefined ? field.default : implicitDefault(shape.op, shape.child);
  return {
    name: field.name, op: shape.op, where, nullable, compact, element: shape.element, child: shape.child,
    minBytes: shape.op === Op.STRUCT && nullable ? 1 : shape.minBytes, defaultValue, tag: isTagged ? (field.tag as number) : -1,
  };
}

interface Shape {
  readonly op: OpCode;
  readonly element: Step | null;
  readonly child: StructPlan | null;
  readonly minBytes: number;
}

function compileType(field: FieldDescription, version: number, flexible: boolean, compact: boolean): Shape {
  const elementType = arrayElementType(field.type);
  if (elementType !== null) {
    const element = isPrimitiveType(elementType)
      ? primitiveStep(elementType, compact)
      : structStep(field, version, flexible);
    return { op: Op.ARRAY, element, child: null, minBytes: compact ? 1 : 4 };
  }
  if (isPrimitiveType(field.type)) {
    const step = primitiveStep(field.type, compact);
    return { op: step.op, element: null, child: null, minBytes: step.minBytes };
  }
  const step = structStep(field, version, flexible);
  return { op: Op.STRUCT, element: null, child: step.child, minBytes: step.minBytes };
}

function saturated(shape: Shape, saturate: boolean): Shape {
  return saturate ? { ...shape, op: Op.INT64_SATURATED } : shape;
}

function primitiveStep(type: PrimitiveType, compact: boolean): Step {
  const op = PRIMITIVE_OPS[type];
  const fixed = FIXED_BYTES[op];
  const minBytes = fixed !== undefined ? fixed : op === Op.STRING ? (compact ? 1 : 2) : (compact ? 1 : 4);
  return {
    name: '', op, where: Where.BODY, nullable: false, compact, element: null, child: null, minBytes,
    defaultValue: implicitDefault(op, null), tag: -1,
  };
}

function structStep(field: FieldDescription, version: number, flexible: boolean): Step {
  assert(field.fields !== undefined, 'compileType: a struct type without fields');
  const child = compileStruct(field.fields, version, flexible);
  return {
    name: '', op: Op.STRUCT, where: Where.BODY, nullable: false, compact: flexible, element: null, child,
    minBytes: child.minBytes, defaultValue: null, tag: -1,
  };
}

/** Kafka's implicit defaults: 0, false, "", empty bytes/array, zero uuid, null records, a default struct. */
function implicitDefault(op: OpCode, child: StructPlan | null): FieldValue {
  switch (op) {
    case Op.BOOL: return false;
    case Op.STRING: return '';
    case Op.BYTES: return EMPTY_BYTES;
    case Op.RECORDS: return null;
    case Op.UUID: return ZERO_UUID;
    case Op.ARRAY: return EMPTY_ARRAY;
    case Op.STRUCT: return child === null ? null : defaultStruct(child);
    default: return 0;
  }
}

const EMPTY_BYTES = Buffer.alloc(0);

function defaultStruct(plan: StructPlan): Readonly<Record<string, FieldValue>> {
  const value: Record<string, FieldValue> = {};
  for (const step of plan.steps) value[step.name] = step.defaultValue;
  return Object.freeze(value);
}
