// The consumer protocol's bytes inside JoinGroup (a member's subscription,
// the protocol metadata of "range" or "roundrobin") and SyncGroup (a member's
// assignment): an int16 version, then the ConsumerProtocolSubscription or
// ConsumerProtocolAssignment struct at that version, through the generic
// codec (messages/consumer-protocol.ts). As Kafka's ConsumerProtocol does, a
// version newer than the described ones is read with the newest described
// layout (new versions only append fields) and its trailing bytes ignored;
// an older or negative version outside the description is malformed.

import { MessageCodec } from './message-codec.js';
import {
  CONSUMER_PROTOCOL_ASSIGNMENT, CONSUMER_PROTOCOL_SUBSCRIPTION,
  type ConsumerProtocolAssignment, type ConsumerProtocolSubscription,
} from './messages/consumer-protocol.js';
import { malformed } from './protocol-error.js';
import { ProtocolReader } from './protocol-reader.js';
import { ProtocolWriter } from './protocol-writer.js';

const SUBSCRIPTION_CODEC = new MessageCodec<ConsumerProtocolSubscription>(CONSUMER_PROTOCOL_SUBSCRIPTION);
const ASSIGNMENT_CODEC = new MessageCodec<ConsumerProtocolAssignment>(CONSUMER_PROTOCOL_ASSIGNMENT);

function encodeVersioned<T extends object>(codec: MessageCodec<T>, version: number, value: T): Buffer {
  const writer = new ProtocolWriter(256);
  writer.int16(version);
  codec.write(writer, version, value);
  const parts = writer.finish().parts as readonly Buffer[];
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
}

function decodeVersioned<T extends object>(codec: MessageCodec<T>, bytes: Buffer, what: string): { readonly version: number; readonly value: T } {
  const reader = new ProtocolReader(bytes);
  const version = reader.int16();
  if (version < codec.versions.min) throw malformed(`${what}: version ${version} is not a consumer protocol version`, 0, { version });
  const value = codec.decode(reader, Math.min(version, codec.versions.max));
  if (version <= codec.versions.max) reader.expectEnd(what);
  return { version, value };
}

/** A member's subscription as JoinGroup protocol metadata, at `version` (0–3). */
export function encodeConsumerSubscription(version: number, value: ConsumerProtocolSubscription): Buffer {
  return encodeVersioned(SUBSCRIPTION_CODEC, version, value);
}

export function decodeConsumerSubscription(bytes: Buffer): { readonly version: number; readonly value: ConsumerProtocolSubscription } {
  return decodeVersioned(SUBSCRIPTION_CODEC, bytes, 'ConsumerProtocolSubscription');
}

/** A member's assignment as SyncGroup bytes, at `version` (0–3). */
export function encodeConsumerAssignment(version: number, value: ConsumerProtocolAssignment): Buffer {
  return encodeVersioned(ASSIGNMENT_CODEC, version, value);
}

export function decodeConsumerAssignment(bytes: Buffer): { readonly version: number; readonly value: ConsumerProtocolAssignment } {
  return decodeVersioned(ASSIGNMENT_CODEC, bytes, 'ConsumerProtocolAssignment');
}
