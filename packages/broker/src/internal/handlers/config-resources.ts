// What DescribeConfigs, AlterConfigs and IncrementalAlterConfigs share:
// Kafka's resource types and config sources, the request checks Kafka's
// ConfigAdminManager.preprocess makes before anything else (a resource listed
// twice: INVALID_REQUEST for each; a key listed twice in one resource:
// INVALID_REQUEST; a null value where one is needed: INVALID_REQUEST; a
// broker resource named neither "" nor this node's id: INVALID_REQUEST; an
// unsupported resource type: INVALID_REQUEST), and the final step of both
// alters on a topic: the complete new set of overrides is validated
// (INVALID_CONFIG), then the topic must exist (UNKNOWN_TOPIC_OR_PARTITION),
// in that order as Kafka's ConfigurationControlManager.validateAlterConfig.
// Broker configs are read-only here (they are start-up options): any change
// to one is INVALID_REQUEST, as Kafka answers a config it cannot update
// dynamically.

import type { BrokerContext } from '../broker-context.js';
import { NODE_ID } from '../broker-context.js';
import { ApiError } from '../topic-configs/api-error.js';
import { validateTopicConfigs } from '../topic-configs/topic-config-defs.js';

/** Kafka's ConfigResource.Type ids. */
export const ResourceType = { TOPIC: 2, BROKER: 4 } as const;

/** Kafka's DescribeConfigsResponse ConfigSource ids. */
export const ConfigSource = { TOPIC_CONFIG: 1, STATIC_BROKER_CONFIG: 4, DEFAULT_CONFIG: 5 } as const;

export interface ResourceKey {
  readonly resourceType: number;
  readonly resourceName: string;
}

/** The resources that appear more than once (Kafka: each of them is INVALID_REQUEST). */
export function duplicateResources(resources: readonly ResourceKey[]): Set<string> {
  const seen = new Set<string>();
  const duplicates = new Set<string>();
  for (const resource of resources) {
    const key = resourceKey(resource);
    if (seen.has(key)) duplicates.add(key);
    seen.add(key);
  }
  return duplicates;
}

export function resourceKey(resource: ResourceKey): string {
  return `${resource.resourceType}:${resource.resourceName}`;
}

/** Kafka's preprocess checks of one alter resource; throws ApiError INVALID_REQUEST. */
export function checkAlterResource(resource: ResourceKey, configs: readonly { readonly name: string; readonly value: string | null }[], nullAllowed: (index: number) => boolean): void {
  const names = configs.map((config) => config.name);
  if (new Set(names).size !== names.length) throw new ApiError('INVALID_REQUEST', 'Error due to duplicate config keys');
  const nulls = configs.filter((config, index) => config.value === null && !nullAllowed(index)).map((config) => config.name);
  if (nulls.length > 0) throw new ApiError('INVALID_REQUEST', `Null value not supported for : ${nulls.join(', ')}`);
  if (resource.resourceType === ResourceType.BROKER) {
    checkBrokerName(resource.resourceName);
    if (configs.length > 0) {
      throw new ApiError('INVALID_REQUEST', `Cannot update these configs dynamically: ${names.join(', ')} (broker settings are start-up options on this broker)`);
    }
    return;
  }
  if (resource.resourceType !== ResourceType.TOPIC) throw new ApiError('INVALID_REQUEST', `Unknown resource type ${resource.resourceType}`);
  if (resource.resourceName === '') throw new ApiError('INVALID_REQUEST', 'Default topic resources are not allowed.');
}

/** A broker resource must be "" (cluster default) or this node's id. */
export function checkBrokerName(name: string): void {
  if (name === '') return;
  if (!/^-?\d+$/.test(name)) throw new ApiError('INVALID_REQUEST', 'Unable to parse broker name as a base 10 number.');
  if (Number(name) !== NODE_ID) throw new ApiError('INVALID_REQUEST', `Unexpected broker id, expected ${NODE_ID} or empty string, but received ${name}`);
}

/**
 * Validates the topic's complete new overrides, checks that it exists, and
 * unless validateOnly stores and applies them (parked fetches on reopened
 * partitions are woken). Throws ApiError.
 */
export async function replaceTopicConfigs(ctx: BrokerContext, topic: string, configs: Readonly<Record<string, string>>, validateOnly: boolean): Promise<void> {
  validateTopicConfigs(configs, ctx.store.defaultConfig);
  await ctx.store.settled(topic);
  if (!ctx.store.has(topic)) throw new ApiError('UNKNOWN_TOPIC_OR_PARTITION', `topic '${topic}' does not exist`);
  if (validateOnly) return;
  const replaced = await ctx.store.setConfigs(topic, configs);
  if (replaced === null) throw new ApiError('UNKNOWN_TOPIC_OR_PARTITION', `topic '${topic}' does not exist`);
  for (const log of replaced) ctx.waiters.notify(log);
}
