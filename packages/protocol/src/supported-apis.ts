// The one table of APIs and versions seglog speaks, derived from
// API_DESCRIPTIONS (a description's validVersions are the versions the broker
// supports), so that what the broker's ApiVersions advertises is exactly what
// decodeRequest accepts, and the load client negotiates against the same
// table. Why these ranges: see packages/broker/README.md ("Supported APIs").

import { assert } from '@seglog/common';
import { API_DESCRIPTIONS, type ApiName } from './apis.js';
import { parseVersions } from './description.js';

export const ApiKey = {
  PRODUCE: 0,
  FETCH: 1,
  LIST_OFFSETS: 2,
  METADATA: 3,
  OFFSET_COMMIT: 8,
  OFFSET_FETCH: 9,
  FIND_COORDINATOR: 10,
  JOIN_GROUP: 11,
  HEARTBEAT: 12,
  LEAVE_GROUP: 13,
  SYNC_GROUP: 14,
  DESCRIBE_GROUPS: 15,
  LIST_GROUPS: 16,
  API_VERSIONS: 18,
  CREATE_TOPICS: 19,
  DELETE_RECORDS: 21,
  INIT_PRODUCER_ID: 22,
  DELETE_TOPICS: 20,
  DESCRIBE_CONFIGS: 32,
  ALTER_CONFIGS: 33,
  CREATE_PARTITIONS: 37,
  INCREMENTAL_ALTER_CONFIGS: 44,
  DESCRIBE_CLUSTER: 60,
  DELETE_GROUPS: 42,
  OFFSET_DELETE: 47,
  ADD_PARTITIONS_TO_TXN: 24,
  ADD_OFFSETS_TO_TXN: 25,
  END_TXN: 26,
  TXN_OFFSET_COMMIT: 28,
  DESCRIBE_TRANSACTIONS: 65,
  LIST_TRANSACTIONS: 66,
} as const satisfies Readonly<Record<ApiName, number>>;

export type ApiKeyId = (typeof ApiKey)[keyof typeof ApiKey];

export interface SupportedApi {
  readonly apiKey: ApiKeyId;
  readonly name: ApiName;
  readonly minVersion: number;
  readonly maxVersion: number;
  /** First flexible version of this API in Kafka's schema (compact types, tagged fields, header v2/v1). */
  readonly flexibleFrom: number;
}

/** Sorted by apiKey (as API_DESCRIPTIONS). */
export const SUPPORTED_APIS: readonly SupportedApi[] = API_DESCRIPTIONS.map((api) => {
  assert(ApiKey[api.name] === api.apiKey, 'SUPPORTED_APIS: ApiKey disagrees with API_DESCRIPTIONS');
  const versions = parseVersions(api.request.validVersions);
  const response = parseVersions(api.response.validVersions);
  assert(versions.min === response.min && versions.max === response.max, 'SUPPORTED_APIS: request and response versions differ');
  return {
    apiKey: ApiKey[api.name], name: api.name, minVersion: versions.min, maxVersion: versions.max,
    flexibleFrom: parseVersions(api.request.flexibleVersions).min,
  };
});
assert(SUPPORTED_APIS.length === Object.keys(ApiKey).length, 'SUPPORTED_APIS: an ApiKey without a description');

const byKey = new Map<number, SupportedApi>(SUPPORTED_APIS.map((api) => [api.apiKey, api]));

export function supportedApi(apiKey: number): SupportedApi | undefined {
  return byKey.get(apiKey);
}

export function isVersionSupported(apiKey: number, version: number): boolean {
  const api = byKey.get(apiKey);
  return api !== undefined && version >= api.minVersion && version <= api.maxVersion;
}
