// fast-check arbitraries of a message at one version, derived from the
// compiled plan: present fields get random values of their type (null where
// nullable), absent fields their default, tagged fields either their default
// or a random value. So every generated object is one the codec must
// round-trip exactly.

import fc from 'fast-check';
import { Op, Where, type Step, type StructPlan } from '../../src/internal/plan.js';

export function messageArbitrary(plan: StructPlan): fc.Arbitrary<Record<string, unknown>> {
  const fields: Record<string, fc.Arbitrary<unknown>> = {};
  for (const step of plan.steps) {
    if (step.where === Where.ABSENT) fields[step.name] = fc.constant(step.defaultValue);
    else if (step.where === Where.TAGGED) fields[step.name] = fc.oneof(fc.constant(step.defaultValue), valueArbitrary(step));
    else fields[step.name] = valueArbitrary(step);
  }
  return fc.record(fields);
}

const hex = '0123456789abcdef'.split('');

function valueArbitrary(step: Step): fc.Arbitrary<unknown> {
  const base = baseArbitrary(step);
  return step.nullable ? fc.option(base, { nil: null }) : base;
}

function baseArbitrary(step: Step): fc.Arbitrary<unknown> {
  switch (step.op) {
    case Op.INT8: return fc.integer({ min: -128, max: 127 });
    case Op.INT16: return fc.integer({ min: -32768, max: 32767 });
    case Op.UINT16: return fc.integer({ min: 0, max: 65535 });
    case Op.INT32: return fc.integer();
    case Op.INT64:
    case Op.INT64_SATURATED: return fc.oneof(fc.integer(), fc.maxSafeInteger(), fc.maxSafeInteger().map((n) => (n === 0 ? 0 : -n)), fc.constantFrom(-1, 0, 2 ** 32, -(2 ** 32)));
    case Op.FLOAT64: return fc.double({ noNaN: true });
    case Op.BOOL: return fc.boolean();
    case Op.UUID: return fc.array(fc.constantFrom(...hex), { minLength: 32, maxLength: 32 }).map((digits) => digits.join(''));
    case Op.STRING: return fc.string({ unit: 'grapheme', maxLength: 12 });
    case Op.BYTES:
    case Op.RECORDS: return fc.uint8Array({ maxLength: 24 }).map((bytes) => Buffer.from(bytes));
    case Op.ARRAY: return fc.array(valueArbitrary(step.element as Step), { maxLength: 3 });
    case Op.STRUCT: return messageArbitrary(step.child as StructPlan);
  }
}
