// fast-check arbitraries and version normalisation for the admin APIs
// (DeleteTopics, CreatePartitions, DescribeCluster, DescribeConfigs,
// AlterConfigs, IncrementalAlterConfigs), joined into MESSAGE_CASES by
// arbitraries.ts. Same contract: decode(encode(normalize(v, body))) equals
// normalize(v, body); a field a version lacks takes its decoded default.

import fc from 'fast-check';
import type {
  AlterConfigsRequest, AlterConfigsResponse, CreatePartitionsRequest, CreatePartitionsResponse, DeleteTopicsRequest,
  DeleteTopicsResponse, DescribeClusterRequest, DescribeClusterResponse, DescribeConfigsRequest, DescribeConfigsResponse,
  IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse, RequestBodies, ResponseBodies,
} from '@seglog/protocol';
import { ZERO_UUID } from '@seglog/protocol';

type Api = keyof RequestBodies;
interface Case<N extends Api> {
  readonly request: fc.Arbitrary<RequestBodies[N]>;
  readonly normalizeRequest: (version: number, body: RequestBodies[N]) => RequestBodies[N];
  readonly response: fc.Arbitrary<ResponseBodies[N]>;
  readonly normalizeResponse: (version: number, body: ResponseBodies[N]) => ResponseBodies[N];
}

const int8 = fc.integer({ min: -128, max: 127 });
const int16 = fc.integer({ min: -32768, max: 32767 });
const int32 = fc.integer({ min: -2147483648, max: 2147483647 });
const str = fc.string({ unit: 'grapheme', maxLength: 12 });
const nstr = fc.option(str, { nil: null });
const uuid = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('hex'));
const arr = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T[]> => fc.array(a, { maxLength: 3 });
const narr = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T[] | null> => fc.option(arr(a), { nil: null });

const deleteTopics: Case<'DELETE_TOPICS'> = {
  request: fc.record({ topics: arr(fc.record({ name: nstr, topicId: uuid })), topicNames: arr(str), timeoutMs: int32 }),
  normalizeRequest: (v, b): DeleteTopicsRequest => ({ topics: v >= 6 ? b.topics : [], topicNames: v <= 5 ? b.topicNames : [], timeoutMs: b.timeoutMs }),
  response: fc.record({
    throttleTimeMs: int32,
    responses: arr(fc.record({ name: nstr, topicId: uuid, errorCode: int16, errorMessage: nstr })),
  }),
  normalizeResponse: (v, b): DeleteTopicsResponse => ({
    throttleTimeMs: v >= 1 ? b.throttleTimeMs : 0,
    responses: b.responses.map((r) => ({
      name: v >= 6 ? r.name : (r.name ?? 'n'), topicId: v >= 6 ? r.topicId : ZERO_UUID, errorCode: r.errorCode,
      errorMessage: v >= 5 ? r.errorMessage : null,
    })),
  }),
};

const createPartitions: Case<'CREATE_PARTITIONS'> = {
  request: fc.record({
    topics: arr(fc.record({ name: str, count: int32, assignments: narr(fc.record({ brokerIds: arr(int32) })) })),
    timeoutMs: int32, validateOnly: fc.boolean(),
  }),
  normalizeRequest: (_v, b): CreatePartitionsRequest => b,
  response: fc.record({ throttleTimeMs: int32, results: arr(fc.record({ name: str, errorCode: int16, errorMessage: nstr })) }),
  normalizeResponse: (_v, b): CreatePartitionsResponse => b,
};

const describeCluster: Case<'DESCRIBE_CLUSTER'> = {
  request: fc.record({ includeClusterAuthorizedOperations: fc.boolean(), endpointType: int8 }),
  normalizeRequest: (v, b): DescribeClusterRequest => ({ ...b, endpointType: v >= 1 ? b.endpointType : 1 }),
  response: fc.record({
    throttleTimeMs: int32, errorCode: int16, errorMessage: nstr, endpointType: int8, clusterId: str, controllerId: int32,
    brokers: arr(fc.record({ brokerId: int32, host: str, port: int32, rack: nstr })), clusterAuthorizedOperations: int32,
  }),
  normalizeResponse: (v, b): DescribeClusterResponse => ({ ...b, endpointType: v >= 1 ? b.endpointType : 1 }),
};

const describeConfigs: Case<'DESCRIBE_CONFIGS'> = {
  request: fc.record({
    resources: arr(fc.record({ resourceType: int8, resourceName: str, configurationKeys: narr(str) })),
    includeSynonyms: fc.boolean(), includeDocumentation: fc.boolean(),
  }),
  normalizeRequest: (v, b): DescribeConfigsRequest => ({
    ...b, includeSynonyms: v >= 1 ? b.includeSynonyms : false, includeDocumentation: v >= 3 ? b.includeDocumentation : false,
  }),
  response: fc.record({
    throttleTimeMs: int32,
    results: arr(fc.record({
      errorCode: int16, errorMessage: nstr, resourceType: int8, resourceName: str,
      configs: arr(fc.record({
        name: str, value: nstr, readOnly: fc.boolean(), isDefault: fc.boolean(), configSource: int8, isSensitive: fc.boolean(),
        synonyms: arr(fc.record({ name: str, value: nstr, source: int8 })), configType: int8, documentation: nstr,
      })),
    })),
  }),
  normalizeResponse: (v, b): DescribeConfigsResponse => ({
    throttleTimeMs: b.throttleTimeMs,
    results: b.results.map((r) => ({
      ...r,
      configs: r.configs.map((c) => ({
        ...c, isDefault: v === 0 ? c.isDefault : false, configSource: v >= 1 ? c.configSource : -1, synonyms: v >= 1 ? c.synonyms : [],
        configType: v >= 3 ? c.configType : 0, documentation: v >= 3 ? c.documentation : '',
      })),
    })),
  }),
};

const alterResponse = fc.record({
  throttleTimeMs: int32,
  responses: arr(fc.record({ errorCode: int16, errorMessage: nstr, resourceType: int8, resourceName: str })),
});

const alterConfigs: Case<'ALTER_CONFIGS'> = {
  request: fc.record({
    resources: arr(fc.record({ resourceType: int8, resourceName: str, configs: arr(fc.record({ name: str, value: nstr })) })),
    validateOnly: fc.boolean(),
  }),
  normalizeRequest: (_v, b): AlterConfigsRequest => b,
  response: alterResponse,
  normalizeResponse: (_v, b): AlterConfigsResponse => b,
};

const incrementalAlterConfigs: Case<'INCREMENTAL_ALTER_CONFIGS'> = {
  request: fc.record({
    resources: arr(fc.record({
      resourceType: int8, resourceName: str, configs: arr(fc.record({ name: str, configOperation: int8, value: nstr })),
    })),
    validateOnly: fc.boolean(),
  }),
  normalizeRequest: (_v, b): IncrementalAlterConfigsRequest => b,
  response: alterResponse,
  normalizeResponse: (_v, b): IncrementalAlterConfigsResponse => b,
};

export const ADMIN_MESSAGE_CASES = {
  DELETE_TOPICS: deleteTopics,
  CREATE_PARTITIONS: createPartitions,
  DESCRIBE_CLUSTER: describeCluster,
  DESCRIBE_CONFIGS: describeConfigs,
  ALTER_CONFIGS: alterConfigs,
  INCREMENTAL_ALTER_CONFIGS: incrementalAlterConfigs,
} as const;
