// Static JS types of decoded (and encodable) messages, derived from a
// description declared `as const satisfies MessageDescription`:
//
//   type ProduceRequest = MessageOf<typeof PRODUCE_REQUEST>;
//
// A field is `T | null` when it has nullableVersions (in any version: the
// static type cannot depend on the version); records are `Buffer |
// RecordsRef` in responses (a response may carry a RecordsRef such as a
// fetch plan) and `Buffer` in requests and headers (decoded as slices of the
// frame). Every described field is present in every version.

import type { FieldDescription, MessageDescription } from './description.js';
import type { RecordsRef } from './protocol-writer.js';

interface PrimitiveJs<R> {
  readonly int8: number;
  readonly int16: number;
  readonly uint16: number;
  readonly int32: number;
  readonly int64: number;
  readonly float64: number;
  readonly bool: boolean;
  readonly string: string;
  readonly bytes: Buffer;
  readonly records: R;
  readonly uuid: string;
}

type ValueOf<F extends FieldDescription, R> =
  F extends { readonly fields: infer Fs extends readonly FieldDescription[] }
    ? F['type'] extends `[]${string}` ? readonly StructOf<Fs, R>[] : StructOf<Fs, R>
    : F['type'] extends `[]${infer E extends keyof PrimitiveJs<R>}` ? readonly PrimitiveJs<R>[E][]
      : F['type'] extends keyof PrimitiveJs<R> ? PrimitiveJs<R>[F['type']] : never;

type FieldOf<F extends FieldDescription, R> = F extends { readonly nullableVersions: string } ? ValueOf<F, R> | null : ValueOf<F, R>;

/** The JS object of a struct's fields; R is the type of a records field. */
export type StructOf<Fs extends readonly FieldDescription[], R = Buffer> = {
  readonly [F in Fs[number] as F['name']]: FieldOf<F, R>;
};

export type MessageOf<D extends MessageDescription> = StructOf<D['fields'], D['kind'] extends 'response' ? Buffer | RecordsRef : Buffer>;
