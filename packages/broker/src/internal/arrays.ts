// Array helpers shared by the message codecs: one closure per array, none per item.

import type { ProtocolReader } from '../protocol/protocol-reader.js';
import type { ProtocolWriter } from '../protocol/protocol-writer.js';

export function readArray<T>(reader: ProtocolReader, flexible: boolean, minItemBytes: number, readItem: (reader: ProtocolReader) => T): T[] {
  const count = reader.arrayLength(flexible, minItemBytes);
  const items: T[] = [];
  for (let i = 0; i < count; i++) items.push(readItem(reader));
  return items;
}

export function readNullableArray<T>(
  reader: ProtocolReader, flexible: boolean, minItemBytes: number, readItem: (reader: ProtocolReader) => T,
): T[] | null {
  const count = reader.nullableArrayLength(flexible, minItemBytes);
  if (count === -1) return null;
  const items: T[] = [];
  for (let i = 0; i < count; i++) items.push(readItem(reader));
  return items;
}

export function readInt32Array(reader: ProtocolReader, flexible: boolean): number[] {
  return readArray(reader, flexible, 4, (r) => r.int32());
}

export function writeArray<T>(writer: ProtocolWriter, flexible: boolean, items: readonly T[], writeItem: (writer: ProtocolWriter, item: T) => void): void {
  writer.arrayLength(items.length, flexible);
  for (const item of items) writeItem(writer, item);
}

export function writeNullableArray<T>(
  writer: ProtocolWriter, flexible: boolean, items: readonly T[] | null, writeItem: (writer: ProtocolWriter, item: T) => void,
): void {
  writer.nullableArrayLength(items === null ? null : items.length, flexible);
  if (items !== null) for (const item of items) writeItem(writer, item);
}

export function writeInt32Array(writer: ProtocolWriter, flexible: boolean, items: readonly number[]): void {
  writeArray(writer, flexible, items, (w, item) => w.int32(item));
}

/** Smallest encodings, for bounding array counts: a string, an array, a tag section. */
export function minSizes(flexible: boolean): { readonly str: number; readonly arr: number; readonly tags: number } {
  return flexible ? FLEXIBLE_MIN : CLASSIC_MIN;
}
const FLEXIBLE_MIN = { str: 1, arr: 1, tags: 1 } as const;
const CLASSIC_MIN = { str: 2, arr: 4, tags: 0 } as const;
