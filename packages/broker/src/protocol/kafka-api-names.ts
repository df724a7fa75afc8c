// Kafka's API names by key (org.apache.kafka.common.protocol.ApiKeys, from the
// request definitions of apache/kafka 1eb7644), for notices that name an API
// the broker does not implement. Not a list of what the broker supports:
// that is SUPPORTED_APIS.

export const KAFKA_API_NAMES: Readonly<Record<number, string>> = {
  0: 'Produce', 1: 'Fetch', 2: 'ListOffsets', 3: 'Metadata', 4: 'LeaderAndIsr', 5: 'StopReplica', 6: 'UpdateMetadata',
  7: 'ControlledShutdown', 8: 'OffsetCommit', 9: 'OffsetFetch', 10: 'FindCoordinator', 11: 'JoinGroup', 12: 'Heartbeat',
  13: 'LeaveGroup', 14: 'SyncGroup', 15: 'DescribeGroups', 16: 'ListGroups', 17: 'SaslHandshake', 18: 'ApiVersions',
  19: 'CreateTopics', 20: 'DeleteTopics', 21: 'DeleteRecords', 22: 'InitProducerId', 23: 'OffsetForLeaderEpoch',
  24: 'AddPartitionsToTxn', 25: 'AddOffsetsToTxn', 26: 'EndTxn', 27: 'WriteTxnMarkers', 28: 'TxnOffsetCommit',
  29: 'DescribeAcls', 30: 'CreateAcls', 31: 'DeleteAcls', 32: 'DescribeConfigs', 33: 'AlterConfigs', 34: 'AlterReplicaLogDirs',
  35: 'DescribeLogDirs', 36: 'SaslAuthenticate', 37: 'CreatePartitions', 38: 'CreateDelegationToken', 39: 'RenewDelegationToken',
  40: 'ExpireDelegationToken', 41: 'DescribeDelegationToken', 42: 'DeleteGroups', 43: 'ElectLeaders',
  44: 'IncrementalAlterConfigs', 45: 'AlterPartitionReassignments', 46: 'ListPartitionReassignments', 47: 'OffsetDelete',
  48: 'DescribeClientQuotas', 49: 'AlterClientQuotas', 50: 'DescribeUserScramCredentials', 51: 'AlterUserScramCredentials',
  52: 'Vote', 53: 'BeginQuorumEpoch', 54: 'EndQuorumEpoch', 55: 'DescribeQuorum', 56: 'AlterPartition', 57: 'UpdateFeatures',
  58: 'Envelope', 59: 'FetchSnapshot', 60: 'DescribeCluster', 61: 'DescribeProducers', 62: 'BrokerRegistration',
  63: 'BrokerHeartbeat', 64: 'UnregisterBroker', 65: 'DescribeTransactions', 66: 'ListTransactions', 67: 'AllocateProducerIds',
  68: 'ConsumerGroupHeartbeat', 69: 'ConsumerGroupDescribe', 70: 'ControllerRegistration', 71: 'GetTelemetrySubscriptions',
  72: 'PushTelemetry', 73: 'AssignReplicasToDirs', 74: 'ListClientMetricsResources', 75: 'DescribeTopicPartitions',
  76: 'ShareGroupHeartbeat', 77: 'ShareGroupDescribe', 78: 'ShareFetch', 79: 'ShareAcknowledge', 80: 'AddRaftVoter',
  81: 'RemoveRaftVoter', 82: 'UpdateRaftVoter', 83: 'InitializeShareGroupState', 84: 'ReadShareGroupState',
  85: 'WriteShareGroupState', 86: 'DeleteShareGroupState', 87: 'ReadShareGroupStateSummary',
};

/** "DescribeConfigs" for 32; "unknown" for a key Kafka does not define. */
export function kafkaApiName(apiKey: number): string {
  return KAFKA_API_NAMES[apiKey] ?? 'unknown';
}
