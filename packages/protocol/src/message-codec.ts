// MessageCodec: the one generic encoder/decoder. It compiles a description
// once per valid version into a plan (internal/plan.ts), and each plan into a
// generated decode and encode function (internal/generate.ts, the default)
// or runs the plan through the reference interpreter (internal/interpret.ts,
// { mode: 'interpreted' }); both give the same bytes and objects.
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
// the described fields (the same shape as the broker's former hand-written codecs),
// and the broker never forwards a message it has decoded. A description that
// needs a tag adds the field. Tagged fields are written only when their value
// differs from the default (as Kafka does), in increasing tag order.
//
// Encoding, like the former hand-written codecs, skips fields absent at the version
// (Kafka's generated code would throw for a non-ignorable one holding a
// non-default value; the broker builds one response object for every version).

import { assert } from '@seglog/common';
import { inVersions, parseVersions, type MessageDescription, type VersionRange } from './description.js';
import { generateDecoder, generateEncoder, type StructDecoder, type StructEncoder } from './internal/generate.js';
import { decodeStruct, encodeStruct } from './internal/interpret.js';
import { compileMessage, type StructPlan } from './internal/plan.js';
import type { ProtocolReader } from './protocol-reader.js';
import type { ProtocolWriter } from './protocol-writer.js';

type Struct = Record<string, unknown>;

export interface MessageCodecOptions {
  /** 'generated' (default): generated functions; 'interpreted': the reference loop over the plan. */
  readonly mode?: 'generated' | 'interpreted';
}

interface VersionCodec {
  readonly plan: StructPlan;
  readonly decode: StructDecoder;
  readonly encode: StructEncoder;
}

export class MessageCodec<T extends object = Struct> {
  readonly description: MessageDescription;
  readonly versions: VersionRange;
  readonly mode: 'generated' | 'interpreted';
  private readonly byVersion: readonly VersionCodec[];

  constructor(description: MessageDescription, options: MessageCodecOptions = {}) {
    this.description = description;
    this.versions = parseVersions(description.validVersions);
    this.mode = options.mode ?? 'generated';
    assert(this.versions.min <= this.versions.max, 'MessageCodec: empty validVersions');
    const byVersion: VersionCodec[] = [];
    for (let version = this.versions.min; version <= this.versions.max; version++) {
      const plan = compileMessage(description, version);
      byVersion.push(this.mode === 'generated'
        ? { plan, decode: generateDecoder(plan), encode: generateEncoder(plan) }
        : { plan, decode: (reader) => decodeStruct(reader, plan), encode: (writer, value) => encodeStruct(writer, plan, value) });
    }
    this.byVersion = byVersion;
  }

  supports(version: number): boolean {
    return Number.isInteger(version) && inVersions(this.versions, version);
  }

  isFlexible(version: number): boolean {
    return this.at(version).plan.flexible;
  }

  /** The compiled plan of `version` (tests and tools). */
  plan(version: number): StructPlan {
    return this.at(version).plan;
  }

  /** Reads one message at the reader's position (the caller checks for trailing bytes). */
  decode(reader: ProtocolReader, version: number): T {
    return this.at(version).decode(reader) as T;
  }

  write(writer: ProtocolWriter, version: number, value: T): void {
    this.at(version).encode(writer, value as Struct);
  }

  private at(version: number): VersionCodec {
    const codec = this.byVersion[version - this.versions.min];
    assert(codec !== undefined && Number.isInteger(version), 'MessageCodec: version outside validVersions');
    return codec;
  }
}
