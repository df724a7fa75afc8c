// The one table of APIs and versions the broker implements. It drives the
// ApiVersions response (advertised ranges), the dispatch check in
// decodeRequest, and the choice of header versions. Why these ranges: see
// packages/broker/README.md ("Supported APIs").

export const ApiKey = {
  PRODUCE: 0,
  FETCH: 1,
  LIST_OFFSETS: 2,
  METADATA: 3,
  API_VERSIONS: 18,
  CREATE_TOPICS: 19,
  DELETE_RECORDS: 21,
  INIT_PRODUCER_ID: 22,
} as const;

export type ApiKeyId = (typeof ApiKey)[keyof typeof ApiKey];
export type ApiName = keyof typeof ApiKey;

export interface SupportedApi {
  readonly apiKey: ApiKeyId;
  readonly name: ApiName;
  readonly minVersion: number;
  readonly maxVersion: number;
  /** First flexible version of this API in Kafka's schema (compact types, tagged fields, header v2/v1). */
  readonly flexibleFrom: number;
}

/** Sorted by apiKey. */
export const SUPPORTED_APIS: readonly SupportedApi[] = [
  { apiKey: ApiKey.PRODUCE, name: 'PRODUCE', minVersion: 3, maxVersion: 9, flexibleFrom: 9 },
  { apiKey: ApiKey.FETCH, name: 'FETCH', minVersion: 4, maxVersion: 12, flexibleFrom: 12 },
  { apiKey: ApiKey.LIST_OFFSETS, name: 'LIST_OFFSETS', minVersion: 0, maxVersion: 7, flexibleFrom: 6 },
  { apiKey: ApiKey.METADATA, name: 'METADATA', minVersion: 0, maxVersion: 12, flexibleFrom: 9 },
  { apiKey: ApiKey.API_VERSIONS, name: 'API_VERSIONS', minVersion: 0, maxVersion: 3, flexibleFrom: 3 },
  { apiKey: ApiKey.CREATE_TOPICS, name: 'CREATE_TOPICS', minVersion: 0, maxVersion: 7, flexibleFrom: 5 },
  { apiKey: ApiKey.DELETE_RECORDS, name: 'DELETE_RECORDS', minVersion: 0, maxVersion: 2, flexibleFrom: 2 },
  { apiKey: ApiKey.INIT_PRODUCER_ID, name: 'INIT_PRODUCER_ID', minVersion: 0, maxVersion: 4, flexibleFrom: 2 },
];

const byKey = new Map<number, SupportedApi>(SUPPORTED_APIS.map((api) => [api.apiKey, api]));

export function supportedApi(apiKey: number): SupportedApi | undefined {
  return byKey.get(apiKey);
}

export function isVersionSupported(apiKey: number, version: number): boolean {
  const api = byKey.get(apiKey);
  return api !== undefined && version >= api.minVersion && version <= api.maxVersion;
}

/** Whether `version` of a known API uses the flexible encoding (also beyond our max, for the header). */
export function isFlexibleVersion(apiKey: number, version: number): boolean {
  const api = byKey.get(apiKey);
  return api !== undefined && version >= api.flexibleFrom;
}

/**
 * Request header version: 2 for flexible API versions, else 1 (version 0 is
 * only ControlledShutdown v0, which we do not implement). Unknown APIs are
 * read as header v1: the connection is closed after them anyway.
 */
export function requestHeaderVersion(apiKey: number, version: number): 1 | 2 {
  return isFlexibleVersion(apiKey, version) ? 2 : 1;
}

/**
 * Response header version: 1 (with tagged fields) for flexible versions,
 * except ApiVersions, whose response always uses header v0 so that a client
 * can read it before it knows which versions the broker speaks.
 */
export function responseHeaderVersion(apiKey: number, version: number): 0 | 1 {
  if (apiKey === ApiKey.API_VERSIONS) return 0;
  return isFlexibleVersion(apiKey, version) ? 1 : 0;
}
