// fast-check arbitraries for every request and response body, and the
// normalisation of a body to a version: fields the version does not carry
// take the value the decoder reports for them (the schema's default), so that
// decode(encode(normalize(v, body))) must equal normalize(v, body).

import fc from 'fast-check';
import type {
  ApiVersionsRequest, ApiVersionsResponse, CreateTopicsRequest, CreateTopicsResponse, DeleteRecordsRequest,
  DeleteRecordsResponse, FetchRequest, FetchResponse, InitProducerIdRequest, InitProducerIdResponse, ListOffsetsRequest,
  ListOffsetsResponse, MetadataRequest, MetadataResponse, ProduceRequest, ProduceResponse, RequestBodies, ResponseBodies,
} from '@seglog/protocol';
import { ADMIN_MESSAGE_CASES } from './admin-arbitraries.js';
import { ZERO_UUID, apiCodecsByName, inVersions, parseVersions } from '@seglog/protocol';
import type { ApiName, FieldDescription } from '@seglog/protocol';

const INT32_MIN = -2147483648;
export const int8 = fc.integer({ min: -128, max: 127 });
export const int16 = fc.integer({ min: -32768, max: 32767 });
export const int32 = fc.integer({ min: INT32_MIN, max: 2147483647 });
export const int64 = fc.maxSafeInteger();
export const str = fc.string({ unit: 'grapheme', maxLength: 12 });
export const nstr = fc.option(str, { nil: null });
export const uuid = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('hex'));
export const bytes = fc.uint8Array({ maxLength: 48 }).map((b) => Buffer.from(b));
export const nbytes = fc.option(bytes, { nil: null });
const arr = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T[]> => fc.array(a, { maxLength: 3 });
const narr = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T[] | null> => fc.option(arr(a), { nil: null });

type Api = keyof RequestBodies;
export interface MessageCase<N extends Api> {
  readonly request: fc.Arbitrary<RequestBodies[N]>;
  readonly normalizeRequest: (version: number, body: RequestBodies[N]) => RequestBodies[N];
  readonly response: fc.Arbitrary<ResponseBodies[N]>;
  readonly normalizeResponse: (version: number, body: ResponseBodies[N]) => ResponseBodies[N];
}

const apiVersions: MessageCase<'API_VERSIONS'> = {
  request: fc.record({ clientSoftwareName: str, clientSoftwareVersion: str }),
  normalizeRequest: (v, b): ApiVersionsRequest => (v >= 3 ? b : { clientSoftwareName: '', clientSoftwareVersion: '' }),
  response: fc.record({
    errorCode: int16, apiKeys: arr(fc.record({ apiKey: int16, minVersion: int16, maxVersion: int16 })), throttleTimeMs: int32,
  }),
  normalizeResponse: (v, b): ApiVersionsResponse => ({ ...b, throttleTimeMs: v >= 1 ? b.throttleTimeMs : 0 }),
};

const metadata: MessageCase<'METADATA'> = {
  request: fc.record({
    topics: narr(fc.record({ topicId: uuid, name: nstr })),
    allowAutoTopicCreation: fc.boolean(),
    includeClusterAuthorizedOperations: fc.boolean(),
    includeTopicAuthorizedOperations: fc.boolean(),
  }),
  normalizeRequest: (v, b): MetadataRequest => {
    let topics = b.topics === null ? null
      : b.topics.map((t) => ({ topicId: v >= 10 ? t.topicId : ZERO_UUID, name: v >= 10 ? t.name : (t.name ?? 'n') }));
    // v0 has no null list: "all topics" is the empty list there (the handler reads it so).
    if (v === 0 && topics === null) topics = [];
    return {
      topics,
      allowAutoTopicCreation: v >= 4 ? b.allowAutoTopicCreation : true,
      includeClusterAuthorizedOperations: v >= 8 && v <= 10 ? b.includeClusterAuthorizedOperations : false,
      includeTopicAuthorizedOperations: v >= 8 ? b.includeTopicAuthorizedOperations : false,
    };
  },
  response: fc.record({
    throttleTimeMs: int32,
    brokers: arr(fc.record({ nodeId: int32, host: str, port: int32, rack: nstr })),
    clusterId: nstr,
    controllerId: int32,
    topics: arr(fc.record({
      errorCode: int16, name: nstr, topicId: uuid, isInternal: fc.boolean(),
      partitions: arr(fc.record({
        errorCode: int16, partitionIndex: int32, leaderId: int32, leaderEpoch: int32,
        replicaNodes: arr(int32), isrNodes: arr(int32), offlineReplicas: arr(int32),
      })),
      topicAuthorizedOperations: int32,
    })),
    clusterAuthorizedOperations: int32,
  }),
  normalizeResponse: (v, b): MetadataResponse => ({
    throttleTimeMs: v >= 3 ? b.throttleTimeMs : 0,
    brokers: b.brokers.map((x) => ({ ...x, rack: v >= 1 ? x.rack : null })),
    clusterId: v >= 2 ? b.clusterId : null,
    controllerId: v >= 1 ? b.controllerId : -1,
    topics: b.topics.map((t) => ({
      errorCode: t.errorCode,
      name: v >= 12 ? t.name : (t.name ?? 'n'),
      topicId: v >= 10 ? t.topicId : ZERO_UUID,
      isInternal: v >= 1 ? t.isInternal : false,
      partitions: t.partitions.map((p) => ({
        ...p, leaderEpoch: v >= 7 ? p.leaderEpoch : -1, offlineReplicas: v >= 5 ? p.offlineReplicas : [],
      })),
      topicAuthorizedOperations: v >= 8 ? t.topicAuthorizedOperations : INT32_MIN,
    })),
    clusterAuthorizedOperations: v >= 8 && v <= 10 ? b.clusterAuthorizedOperations : INT32_MIN,
  }),
};

const produce: MessageCase<'PRODUCE'> = {
  request: fc.record({
    transactionalId: nstr, acks: int16, timeoutMs: int32,
    topicData: arr(fc.record({ name: str, partitionData: arr(fc.record({ index: int32, records: nbytes })) })),
  }),
  normalizeRequest: (_v, b): ProduceRequest => b,
  response: fc.record({
    responses: arr(fc.record({
      name: str,
      partitionResponses: arr(fc.record({
        index: int32, errorCode: int16, baseOffset: int64, logAppendTimeMs: int64, logStartOffset: int64,
        recordErrors: arr(fc.record({ batchIndex: int32, batchIndexErrorMessage: nstr })), errorMessage: nstr,
      })),
    })),
    throttleTimeMs: int32,
  }),
  normalizeResponse: (v, b): ProduceResponse => ({
    throttleTimeMs: b.throttleTimeMs,
    responses: b.responses.map((t) => ({
      name: t.name,
      partitionResponses: t.partitionResponses.map((p) => ({
        ...p,
        logStartOffset: v >= 5 ? p.logStartOffset : -1,
        recordErrors: v >= 8 ? p.recordErrors : [],
        errorMessage: v >= 8 ? p.errorMessage : null,
      })),
    })),
  }),
};

const fetch: MessageCase<'FETCH'> = {
  request: fc.record({
    clusterId: nstr, replicaId: int32, maxWaitMs: int32, minBytes: int32, maxBytes: int32, isolationLevel: int8,
    sessionId: int32, sessionEpoch: int32,
    topics: arr(fc.record({
      topic: str,
      partitions: arr(fc.record({
        partition: int32, currentLeaderEpoch: int32, fetchOffset: int64, lastFetchedEpoch: int32,
        logStartOffset: int64, partitionMaxBytes: int32,
      })),
    })),
    forgottenTopicsData: arr(fc.record({ topic: str, partitions: arr(int32) })),
    rackId: str,
  }),
  normalizeRequest: (v, b): FetchRequest => ({
    ...b,
    clusterId: v >= 12 ? b.clusterId : null,
    sessionId: v >= 7 ? b.sessionId : 0,
    sessionEpoch: v >= 7 ? b.sessionEpoch : -1,
    topics: b.topics.map((t) => ({
      topic: t.topic,
      partitions: t.partitions.map((p) => ({
        ...p,
        currentLeaderEpoch: v >= 9 ? p.currentLeaderEpoch : -1,
        lastFetchedEpoch: v >= 12 ? p.lastFetchedEpoch : -1,
        logStartOffset: v >= 5 ? p.logStartOffset : -1,
      })),
    })),
    forgottenTopicsData: v >= 7 ? b.forgottenTopicsData : [],
    rackId: v >= 11 ? b.rackId : '',
  }),
  response: fc.record({
    throttleTimeMs: int32, errorCode: int16, sessionId: int32,
    responses: arr(fc.record({
      topic: str,
      partitions: arr(fc.record({
        partitionIndex: int32, errorCode: int16, highWatermark: int64, lastStableOffset: int64, logStartOffset: int64,
        abortedTransactions: narr(fc.record({ producerId: int64, firstOffset: int64 })),
        preferredReadReplica: int32, records: nbytes,
      })),
    })),
  }),
  normalizeResponse: (v, b): FetchResponse => ({
    throttleTimeMs: b.throttleTimeMs,
    errorCode: v >= 7 ? b.errorCode : 0,
    sessionId: v >= 7 ? b.sessionId : 0,
    responses: b.responses.map((t) => ({
      topic: t.topic,
      partitions: t.partitions.map((p) => ({
        ...p,
        logStartOffset: v >= 5 ? p.logStartOffset : -1,
        preferredReadReplica: v >= 11 ? p.preferredReadReplica : -1,
      })),
    })),
  }),
};

const listOffsets: MessageCase<'LIST_OFFSETS'> = {
  request: fc.record({
    replicaId: int32, isolationLevel: int8,
    topics: arr(fc.record({
      name: str,
      partitions: arr(fc.record({ partitionIndex: int32, currentLeaderEpoch: int32, timestamp: int64, maxNumOffsets: int32 })),
    })),
  }),
  normalizeRequest: (v, b): ListOffsetsRequest => ({
    replicaId: b.replicaId,
    isolationLevel: v >= 2 ? b.isolationLevel : 0,
    topics: b.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({
        ...p, currentLeaderEpoch: v >= 4 ? p.currentLeaderEpoch : -1, maxNumOffsets: v === 0 ? p.maxNumOffsets : 1,
      })),
    })),
  }),
  response: fc.record({
    throttleTimeMs: int32,
    topics: arr(fc.record({
      name: str,
      partitions: arr(fc.record({
        partitionIndex: int32, errorCode: int16, oldStyleOffsets: arr(int64), timestamp: int64, offset: int64, leaderEpoch: int32,
      })),
    })),
  }),
  normalizeResponse: (v, b): ListOffsetsResponse => ({
    throttleTimeMs: v >= 2 ? b.throttleTimeMs : 0,
    topics: b.topics.map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({
        partitionIndex: p.partitionIndex,
        errorCode: p.errorCode,
        oldStyleOffsets: v === 0 ? p.oldStyleOffsets : [],
        timestamp: v >= 1 ? p.timestamp : -1,
        offset: v >= 1 ? p.offset : -1,
        leaderEpoch: v >= 4 ? p.leaderEpoch : -1,
      })),
    })),
  }),
};

const initProducerId: MessageCase<'INIT_PRODUCER_ID'> = {
  request: fc.record({ transactionalId: nstr, transactionTimeoutMs: int32, producerId: int64, producerEpoch: int16 }),
  normalizeRequest: (v, b): InitProducerIdRequest => (v >= 3 ? b : { ...b, producerId: -1, producerEpoch: -1 }),
  response: fc.record({ throttleTimeMs: int32, errorCode: int16, producerId: int64, producerEpoch: int16 }),
  normalizeResponse: (_v, b): InitProducerIdResponse => b,
};

const createTopics: MessageCase<'CREATE_TOPICS'> = {
  request: fc.record({
    topics: arr(fc.record({
      name: str, numPartitions: int32, replicationFactor: int16,
      assignments: arr(fc.record({ partitionIndex: int32, brokerIds: arr(int32) })),
      configs: arr(fc.record({ name: str, value: nstr })),
    })),
    timeoutMs: int32,
    validateOnly: fc.boolean(),
  }),
  normalizeRequest: (v, b): CreateTopicsRequest => ({ ...b, validateOnly: v >= 1 ? b.validateOnly : false }),
  response: fc.record({
    throttleTimeMs: int32,
    topics: arr(fc.record({
      name: str, topicId: uuid, errorCode: int16, errorMessage: nstr, numPartitions: int32, replicationFactor: int16,
      configs: narr(fc.record({ name: str, value: nstr, readOnly: fc.boolean(), configSource: int8, isSensitive: fc.boolean() })),
    })),
  }),
  normalizeResponse: (v, b): CreateTopicsResponse => ({
    throttleTimeMs: v >= 2 ? b.throttleTimeMs : 0,
    topics: b.topics.map((t) => ({
      name: t.name,
      topicId: v >= 7 ? t.topicId : ZERO_UUID,
      errorCode: t.errorCode,
      errorMessage: v >= 1 ? t.errorMessage : null,
      numPartitions: v >= 5 ? t.numPartitions : -1,
      replicationFactor: v >= 5 ? t.replicationFactor : -1,
      configs: v >= 5 ? t.configs : null,
    })),
  }),
};

const deleteRecords: MessageCase<'DELETE_RECORDS'> = {
  request: fc.record({
    topics: arr(fc.record({ name: str, partitions: arr(fc.record({ partitionIndex: int32, offset: int64 })) })),
    timeoutMs: int32,
  }),
  normalizeRequest: (_v, b): DeleteRecordsRequest => b,
  response: fc.record({
    throttleTimeMs: int32,
    topics: arr(fc.record({
      name: str, partitions: arr(fc.record({ partitionIndex: int32, lowWatermark: int64, errorCode: int16 })),
    })),
  }),
  normalizeResponse: (_v, b): DeleteRecordsResponse => b,
};

/**
 * The consumer-group APIs: a case derived from the description itself (not
 * from the codec's compiled plan): random values of each field's type over
 * every field, and a normaliser that gives a field absent at the version
 * Kafka's default (the declared one, else the implicit one of its type) and
 * a null the version cannot carry the same default. The codec is not
 * consulted, so a codec that drops, misplaces or mis-defaults a field fails.
 */
function describedCase<N extends Api>(api: N & ApiName): MessageCase<N> {
  const codecs = apiCodecsByName(api);
  return {
    request: structArbitrary(codecs.api.request.fields) as fc.Arbitrary<RequestBodies[N]>,
    normalizeRequest: (v, b) => normalizeStruct(codecs.api.request.fields, v, b as unknown as Record<string, unknown>) as unknown as RequestBodies[N],
    response: structArbitrary(codecs.api.response.fields) as fc.Arbitrary<ResponseBodies[N]>,
    normalizeResponse: (v, b) => normalizeStruct(codecs.api.response.fields, v, b as unknown as Record<string, unknown>) as unknown as ResponseBodies[N],
  };
}

function fieldArbitrary(field: FieldDescription): fc.Arbitrary<unknown> {
  const element = field.type.startsWith('[]') ? field.type.slice(2) : null;
  let base: fc.Arbitrary<unknown>;
  if (field.fields !== undefined) base = element !== null ? arr(structArbitrary(field.fields)) : structArbitrary(field.fields);
  else if (element !== null) base = arr(primitiveArbitrary(element));
  else base = primitiveArbitrary(field.type);
  return field.nullableVersions === undefined ? base : fc.option(base, { nil: null });
}

function primitiveArbitrary(type: string): fc.Arbitrary<unknown> {
  switch (type) {
    case 'int8': return int8;
    case 'int16': return int16;
    case 'int32': return int32;
    case 'int64': return int64;
    case 'bool': return fc.boolean();
    case 'string': return str;
    case 'bytes': return bytes;
    case 'uuid': return uuid;
    default: throw new Error(`describedCase: no arbitrary for ${type}`);
  }
}

function structArbitrary(fields: readonly FieldDescription[]): fc.Arbitrary<Record<string, unknown>> {
  return fc.record(Object.fromEntries(fields.map((field) => [field.name, fieldArbitrary(field)])));
}

function implicitDefault(field: FieldDescription): unknown {
  if (field.default !== undefined) return field.default;
  if (field.type.startsWith('[]')) return [];
  switch (field.type) {
    case 'bool': return false;
    case 'string': return '';
    case 'bytes': return Buffer.alloc(0);
    case 'uuid': return ZERO_UUID;
    default: return 0;
  }
}

function normalizeStruct(fields: readonly FieldDescription[], version: number, body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const value = body[field.name];
    if (!inVersions(parseVersions(field.versions), version)) out[field.name] = implicitDefault(field);
    else if (value === null) {
      out[field.name] = field.nullableVersions !== undefined && inVersions(parseVersions(field.nullableVersions), version) ? null : implicitDefault(field);
    } else if (field.fields !== undefined) {
      const sub = field.fields;
      out[field.name] = Array.isArray(value)
        ? value.map((item: Record<string, unknown>) => normalizeStruct(sub, version, item))
        : normalizeStruct(sub, version, value as Record<string, unknown>);
    } else out[field.name] = value;
  }
  return out;
}

/** The group and transaction coordinators' APIs, whose cases are derived from their descriptions. */
const GROUP_APIS = [
  'OFFSET_COMMIT', 'OFFSET_FETCH', 'FIND_COORDINATOR', 'JOIN_GROUP', 'HEARTBEAT', 'LEAVE_GROUP', 'SYNC_GROUP',
  'DESCRIBE_GROUPS', 'LIST_GROUPS', 'DELETE_GROUPS', 'OFFSET_DELETE',
  // The transaction coordinator's, derived the same way.
  'ADD_PARTITIONS_TO_TXN', 'ADD_OFFSETS_TO_TXN', 'END_TXN', 'TXN_OFFSET_COMMIT', 'DESCRIBE_TRANSACTIONS', 'LIST_TRANSACTIONS',
] as const;

export const MESSAGE_CASES: { readonly [N in Api]: MessageCase<N> } = {
  PRODUCE: produce,
  FETCH: fetch,
  LIST_OFFSETS: listOffsets,
  METADATA: metadata,
  API_VERSIONS: apiVersions,
  CREATE_TOPICS: createTopics,
  DELETE_RECORDS: deleteRecords,
  INIT_PRODUCER_ID: initProducerId,
  ...ADMIN_MESSAGE_CASES,
  ...(Object.fromEntries(GROUP_APIS.map((api) => [api, describedCase(api)])) as { readonly [N in (typeof GROUP_APIS)[number]]: MessageCase<N> }),
};

/** Concatenates a finished message's parts (tests only: they are all Buffers here). */
export function concatParts(parts: readonly (Buffer | { readonly totalBytes: number })[]): Buffer {
  return Buffer.concat(parts.map((part) => {
    if (!Buffer.isBuffer(part)) throw new Error('test frame holds a RecordsRef');
    return part;
  }));
}
