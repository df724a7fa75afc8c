// IncrementalAlterConfigs: per topic resource, each listed operation changes
// the current overrides (Kafka's ConfigurationControlManager
// .incrementalAlterConfigResource): SET (0) sets the value; DELETE (1)
// removes the override (the value may be null); APPEND (2) / SUBTRACT (3),
// only for LIST configs (else INVALID_CONFIG "Can't APPEND to key ... because
// its type is not LIST."), add the comma-separated items not yet present /
// remove them, starting from the override or else the effective default.
// Any other operation is INVALID_REQUEST. The result is then validated and
// applied as a whole (config-resources.ts), so one bad entry changes nothing.

import type { IncrementalAlterConfigsRequest, IncrementalAlterConfigsResource, IncrementalAlterConfigsResponse } from '@seglog/protocol';
import type { AlterConfigsResourceResponse } from '@seglog/protocol';
import type { BrokerContext } from '../broker-context.js';
import { ApiError } from '../topic-configs/api-error.js';
import { listItems, topicConfigDef } from '../topic-configs/topic-config-defs.js';
import { failure } from './alter-configs.js';
import { ResourceType, checkAlterResource, duplicateResources, replaceTopicConfigs, resourceKey } from './config-resources.js';
import { effectiveValue } from './describe-configs.js';

const SET = 0;
const DELETE = 1;
const APPEND = 2;
const SUBTRACT = 3;
const OP_NAMES = ['SET', 'DELETE', 'APPEND', 'SUBTRACT'];

export async function handleIncrementalAlterConfigs(ctx: BrokerContext, request: IncrementalAlterConfigsRequest): Promise<IncrementalAlterConfigsResponse> {
  const duplicates = duplicateResources(request.resources);
  const responses: AlterConfigsResourceResponse[] = [];
  for (const resource of request.resources) {
    const { resourceType, resourceName } = resource;
    try {
      if (duplicates.has(resourceKey(resource))) throw new ApiError('INVALID_REQUEST', 'Each resource must appear at most once.');
      checkAlterResource(resource, resource.configs, (index) => resource.configs[index]?.configOperation === DELETE);
      if (resourceType === ResourceType.TOPIC) {
        await replaceTopicConfigs(ctx, resourceName, applyOperations(ctx, resource), request.validateOnly);
      }
      responses.push({ errorCode: 0, errorMessage: null, resourceType, resourceName });
    } catch (error) {
      responses.push({ ...failure(error), resourceType, resourceName });
    }
  }
  return { throttleTimeMs: 0, responses };
}

/** The topic's overrides after the resource's operations (not yet validated). */
function applyOperations(ctx: BrokerContext, resource: IncrementalAlterConfigsResource): Record<string, string> {
  const configs: Record<string, string> = { ...ctx.store.configsOf(resource.resourceName) };
  for (const { name, configOperation, value } of resource.configs) {
    switch (configOperation) {
      case SET:
        configs[name] = value as string;
        break;
      case DELETE:
        delete configs[name];
        break;
      case APPEND:
      case SUBTRACT: {
        if (topicConfigDef(name)?.type !== 'LIST') {
          throw new ApiError('INVALID_CONFIG', `Can't ${OP_NAMES[configOperation]} to key ${name} because its type is not LIST.`);
        }
        const items = listItems(configs[name] ?? effectiveValue(ctx.store.defaultConfig, name));
        const operands = (value as string).split(',');
        const next = configOperation === APPEND
          ? [...items, ...operands.filter((item, index) => !items.includes(item) && operands.indexOf(item) === index)]
          : items.filter((item) => !operands.includes(item));
        configs[name] = next.join(',');
        break;
      }
      default:
        throw new ApiError('INVALID_REQUEST', `Unknown operation type ${configOperation}`);
    }
  }
  return configs;
}
