// DescribeConfigs for topic and broker resources (Kafka's ConfigHelper
// .describeConfigs). A topic lists every config of topic-config-defs.ts (or
// the requested keys): an override with source TOPIC_CONFIG (1), else the
// broker's effective value, STATIC_BROKER_CONFIG (4) when a start-up option
// changed it from Kafka's default, else DEFAULT_CONFIG (5). An unknown topic
// is UNKNOWN_TOPIC_OR_PARTITION, an empty name INVALID_TOPIC_EXCEPTION. The
// broker resource "0" lists the broker's start-up settings under Kafka's
// names, read-only; "" (the cluster-wide dynamic defaults) lists none, as a
// Kafka cluster with no dynamic config does; another id is INVALID_REQUEST.
// Synonyms (v1+, when asked) name the override and the default; the
// documentation (v3+, when asked) is a one-line description.

import type { LogConfig, LogConfigValues } from '@seglog/log';
import type { DescribeConfigsRequest, DescribeConfigsResource, DescribeConfigsResourceResult, DescribeConfigsResponse, DescribeConfigsResult } from '@seglog/protocol';
import type { BrokerContext } from '../broker-context.js';
import { NODE_ID } from '../broker-context.js';
import { ApiError } from '../topic-configs/api-error.js';
import { CONFIG_TYPE_IDS, TOPIC_CONFIG_DEFS, kafkaString, logConfigKeyOf, topicConfigDef } from '../topic-configs/topic-config-defs.js';
import type { ConfigType } from '../topic-configs/topic-config-defs.js';
import { failure } from './alter-configs.js';
import { ConfigSource, ResourceType, checkBrokerName } from './config-resources.js';

interface Options {
  readonly synonyms: boolean;
  readonly documentation: boolean;
}

export function handleDescribeConfigs(ctx: BrokerContext, request: DescribeConfigsRequest): DescribeConfigsResponse {
  const options: Options = { synonyms: request.includeSynonyms, documentation: request.includeDocumentation };
  const results: DescribeConfigsResult[] = request.resources.map((resource) => {
    const { resourceType, resourceName } = resource;
    try {
      const configs = describeResource(ctx, resource, options)
        .filter((entry) => resource.configurationKeys === null || resource.configurationKeys.length === 0 || resource.configurationKeys.includes(entry.name));
      return { errorCode: 0, errorMessage: null, resourceType, resourceName, configs };
    } catch (error) {
      return { ...failure(error), resourceType, resourceName, configs: [] };
    }
  });
  return { throttleTimeMs: 0, results };
}

function describeResource(ctx: BrokerContext, resource: DescribeConfigsResource, options: Options): DescribeConfigsResourceResult[] {
  if (resource.resourceType === ResourceType.TOPIC) {
    const topic = resource.resourceName;
    if (topic === '') throw new ApiError('INVALID_TOPIC_EXCEPTION', 'Topic name is illegal, it can\'t be empty');
    if (!ctx.store.has(topic)) throw new ApiError('UNKNOWN_TOPIC_OR_PARTITION', `topic '${topic}' does not exist`);
    return describeTopic(ctx, topic, options);
  }
  if (resource.resourceType === ResourceType.BROKER) {
    checkBrokerName(resource.resourceName);
    return resource.resourceName === '' ? [] : describeBroker(ctx, options);
  }
  throw new ApiError('INVALID_REQUEST', `Unsupported resource type: ${resource.resourceType}`);
}

/** The broker's value of a topic config (no override): its LogConfig's, or Kafka's default for a stored-only config. */
export function effectiveValue(base: LogConfig, name: string): string {
  const key = logConfigKeyOf(name);
  if (key !== undefined) return kafkaString(base[key]);
  return topicConfigDef(name)?.defaultValue ?? '';
}

function describeTopic(ctx: BrokerContext, topic: string, options: Options): DescribeConfigsResourceResult[] {
  const overrides = ctx.store.configsOf(topic);
  const base = ctx.store.defaultConfig;
  return TOPIC_CONFIG_DEFS.map((def) => {
    const override = overrides[def.name];
    const brokerValue = effectiveValue(base, def.name);
    const source = override !== undefined ? ConfigSource.TOPIC_CONFIG
      : brokerValue !== def.defaultValue ? ConfigSource.STATIC_BROKER_CONFIG : ConfigSource.DEFAULT_CONFIG;
    const synonyms = [];
    if (override !== undefined) synonyms.push({ name: def.name, value: override, source: ConfigSource.TOPIC_CONFIG });
    if (brokerValue !== def.defaultValue) synonyms.push({ name: def.name, value: brokerValue, source: ConfigSource.STATIC_BROKER_CONFIG });
    synonyms.push({ name: def.name, value: def.defaultValue, source: ConfigSource.DEFAULT_CONFIG });
    return entry(def.name, override ?? brokerValue, { source, readOnly: false, type: def.type, doc: def.doc }, options, synonyms);
  });
}

interface EntryFacts {
  readonly source: number;
  readonly readOnly: boolean;
  readonly type: ConfigType;
  readonly doc: string;
}

function entry(name: string, value: string, facts: EntryFacts, options: Options, synonyms: DescribeConfigsResourceResult['synonyms']): DescribeConfigsResourceResult {
  return {
    name, value, readOnly: facts.readOnly, isDefault: facts.source === ConfigSource.DEFAULT_CONFIG, configSource: facts.source, isSensitive: false,
    synonyms: options.synonyms ? synonyms : [], configType: CONFIG_TYPE_IDS[facts.type], documentation: options.documentation ? facts.doc : null,
  };
}

/** The broker's settings under Kafka's broker config names (start-up options: read-only). */
function describeBroker(ctx: BrokerContext, options: Options): DescribeConfigsResourceResult[] {
  const o = ctx.options;
  const log: LogConfigValues = ctx.store.defaultConfig;
  const rows: [string, string, ConfigType, string][] = [
    ['broker.id', String(NODE_ID), 'INT', 'the node id (a single node: 0)'],
    ['node.id', String(NODE_ID), 'INT', 'the node id (a single node: 0)'],
    ['log.dirs', o.blackhole ? '' : o.dataDir, 'STRING', 'the data directory'],
    ['advertised.listeners', `PLAINTEXT://${ctx.advertised.host}:${ctx.advertised.port}`, 'STRING', 'the advertised address'],
    ['auto.create.topics.enable', String(o.autoCreatePartitions > 0), 'BOOLEAN', 'topics are created on first use'],
    ['num.partitions', String(Math.max(1, o.autoCreatePartitions)), 'INT', 'partitions of an auto-created topic'],
    ['default.replication.factor', '1', 'INT', 'a single node: 1'],
    ['message.max.bytes', kafkaString(log.maxMessageBytes), 'INT', 'largest record batch accepted'],
    ['log.segment.bytes', kafkaString(log.segmentBytes), 'INT', 'segment file size'],
    ['log.roll.ms', kafkaString(log.segmentMs), 'LONG', 'time after which a segment is rolled'],
    ['log.retention.ms', kafkaString(log.retentionMs), 'LONG', 'time retention'],
    ['log.retention.bytes', kafkaString(log.retentionBytes), 'LONG', 'size retention per partition'],
    ['log.flush.interval.ms', kafkaString(log.flushIntervalMs), 'LONG', 'fsync after this many milliseconds'],
    ['log.flush.interval.messages', kafkaString(log.flushIntervalMessages), 'LONG', 'fsync after this many messages'],
    ['log.preallocate', kafkaString(log.preallocate), 'BOOLEAN', 'preallocate segment files'],
    ['log.message.timestamp.type', log.messageTimestampType, 'STRING', 'CreateTime or LogAppendTime'],
    ['socket.request.max.bytes', String(o.maxRequestBytes), 'INT', 'largest request accepted'],
    ['queued.max.request.bytes', String(o.queuedMaxRequestBytes), 'LONG', 'request bytes held across connections'],
    ['connections.max.idle.ms', String(o.connectionsMaxIdleMs), 'LONG', 'idle connections are closed after this'],
    ['seglog.ack.mode', o.ackMode, 'STRING', 'acks=-1 waits for written or durable (sync) records'],
    ['seglog.write.mode', log.writeMode, 'STRING', 'buffered or direct (O_DIRECT) segment writes'],
  ];
  return rows.map(([name, value, type, doc]) => entry(name, value, { source: ConfigSource.STATIC_BROKER_CONFIG, readOnly: true, type, doc }, options,
    [{ name, value, source: ConfigSource.STATIC_BROKER_CONFIG }]));
}
