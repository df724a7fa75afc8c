// AlterConfigs (the legacy form): a topic resource's listed configs become
// its complete set of overrides (every override not listed is removed, as in
// Kafka). Checks and order: config-resources.ts. Broker resources accept
// only an empty change (their settings are start-up options).

import { kafkaErrorCode } from '../../protocol/index.js';
import type { AlterConfigsRequest, AlterConfigsResourceResponse, AlterConfigsResponse } from '@seglog/protocol';
import type { BrokerContext } from '../broker-context.js';
import { errorCodeOf, errorMessageOf } from '../errors.js';
import { ApiError, isApiError } from '../topic-configs/api-error.js';
import { ResourceType, checkAlterResource, duplicateResources, replaceTopicConfigs, resourceKey } from './config-resources.js';

export async function handleAlterConfigs(ctx: BrokerContext, request: AlterConfigsRequest): Promise<AlterConfigsResponse> {
  const duplicates = duplicateResources(request.resources);
  const responses: AlterConfigsResourceResponse[] = [];
  for (const resource of request.resources) {
    const { resourceType, resourceName } = resource;
    try {
      if (duplicates.has(resourceKey(resource))) throw new ApiError('INVALID_REQUEST', 'Each resource must appear at most once.');
      checkAlterResource(resource, resource.configs, () => false);
      if (resourceType === ResourceType.TOPIC) {
        const configs: Record<string, string> = {};
        for (const config of resource.configs) configs[config.name] = config.value as string;
        await replaceTopicConfigs(ctx, resourceName, configs, request.validateOnly);
      }
      responses.push({ errorCode: 0, errorMessage: null, resourceType, resourceName });
    } catch (error) {
      responses.push({ ...failure(error), resourceType, resourceName });
    }
  }
  return { throttleTimeMs: 0, responses };
}

export function failure(error: unknown): { errorCode: number; errorMessage: string } {
  if (isApiError(error)) return { errorCode: kafkaErrorCode(error.error), errorMessage: error.message };
  return { errorCode: errorCodeOf(error), errorMessage: errorMessageOf(error) };
}
