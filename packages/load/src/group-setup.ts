// Setup of the load client's consumer-group mode: the group API versions a
// member's connection speaks (ApiVersions, the highest version both sides
// speak, as load-setup.ts does for the produce and fetch APIs) and the
// group's coordinator (FindCoordinator, key type 0 = group; v4+ batched).

import { ApiKey, KAFKA_ERROR_CODES, SUPPORTED_APIS } from '@seglog/protocol';
import type { KafkaConnection } from './kafka-connection.js';
import { kafkaErrorName } from './load-consumer.js';
import { LoadErrorCode, loadError } from './load-error.js';

export interface GroupVersions {
  readonly findCoordinator: number;
  readonly joinGroup: number;
  readonly syncGroup: number;
  readonly heartbeat: number;
  readonly leaveGroup: number;
  readonly offsetCommit: number;
  readonly offsetFetch: number;
}

export async function negotiateGroupVersions(connection: KafkaConnection): Promise<GroupVersions> {
  const response = await connection.request('API_VERSIONS', 3, { clientSoftwareName: 'seglog-load', clientSoftwareVersion: '0.1.0' });
  if (response.errorCode !== 0) throw loadError(LoadErrorCode.SETUP, `ApiVersions failed: ${kafkaErrorName(response.errorCode)}`);
  const pick = (apiKey: number, name: string): number => {
    const ours = SUPPORTED_APIS.find((a) => a.apiKey === apiKey);
    const theirs = response.apiKeys.find((a) => a.apiKey === apiKey);
    if (ours === undefined || theirs === undefined) throw loadError(LoadErrorCode.SETUP, `the broker does not offer ${name} (API ${apiKey}), which --group needs`, { apiKey });
    const version = Math.min(ours.maxVersion, theirs.maxVersion);
    if (version < Math.max(ours.minVersion, theirs.minVersion)) throw loadError(LoadErrorCode.SETUP, `no common version of ${name}`, { apiKey });
    return version;
  };
  return {
    findCoordinator: pick(ApiKey.FIND_COORDINATOR, 'FindCoordinator'), joinGroup: pick(ApiKey.JOIN_GROUP, 'JoinGroup'),
    syncGroup: pick(ApiKey.SYNC_GROUP, 'SyncGroup'), heartbeat: pick(ApiKey.HEARTBEAT, 'Heartbeat'),
    leaveGroup: pick(ApiKey.LEAVE_GROUP, 'LeaveGroup'), offsetCommit: pick(ApiKey.OFFSET_COMMIT, 'OffsetCommit'),
    offsetFetch: pick(ApiKey.OFFSET_FETCH, 'OffsetFetch'),
  };
}

export interface Coordinator {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
}

const COORDINATOR_ATTEMPTS_MAX = 50;
const COORDINATOR_RETRY_MS = 100;

/** The group's coordinator (FindCoordinator key type 0); COORDINATOR_NOT_AVAILABLE and LOAD_IN_PROGRESS are retried, bounded. */
export async function findCoordinator(connection: KafkaConnection, versions: GroupVersions, group: string): Promise<Coordinator> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await findCoordinatorOnce(connection, versions, group);
    } catch (error) {
      const code = (error as { context?: { errorCode?: number } }).context?.errorCode;
      const retriable = code === KAFKA_ERROR_CODES.COORDINATOR_NOT_AVAILABLE || code === KAFKA_ERROR_CODES.COORDINATOR_LOAD_IN_PROGRESS;
      if (!retriable || attempt >= COORDINATOR_ATTEMPTS_MAX) throw error;
      await new Promise((resolve) => setTimeout(resolve, COORDINATOR_RETRY_MS));
    }
  }
}

async function findCoordinatorOnce(connection: KafkaConnection, versions: GroupVersions, group: string): Promise<Coordinator> {
  const r = await connection.request('FIND_COORDINATOR', versions.findCoordinator, { key: group, keyType: 0, coordinatorKeys: [group] });
  const one = versions.findCoordinator >= 4
    ? r.coordinators.find((c) => c.key === group)
    : { nodeId: r.nodeId, host: r.host, port: r.port, errorCode: r.errorCode };
  if (one === undefined) throw loadError(LoadErrorCode.GROUP, `FindCoordinator answered no coordinator for group ${group}`, { group });
  if (one.errorCode !== 0) {
    throw loadError(LoadErrorCode.GROUP, `FindCoordinator for group ${group} failed: ${kafkaErrorName(one.errorCode)}`, { group, errorCode: one.errorCode });
  }
  return { nodeId: one.nodeId, host: one.host, port: one.port };
}
