// Byte layout of a Kafka record batch v2 (magic 2). All integers big-endian.
//
//   0  baseOffset int64          8  batchLength int32 (bytes after this field)
//  12  partitionLeaderEpoch int32 (outside the CRC)
//  16  magic int8 (= 2)         17  crc uint32: CRC-32C over [21, end)
//  21  attributes int16         23  lastOffsetDelta int32
//  27  baseTimestamp int64      35  maxTimestamp int64
//  43  producerId int64         51  producerEpoch int16
//  53  baseSequence int32       57  recordsCount int32
//  61  records (uncompressed) or one compressed stream of them
//
// sizeInBytes = batchLength + LOG_OVERHEAD. See reference/kafka-storage.md §2.

export const BASE_OFFSET_OFFSET = 0;
export const BATCH_LENGTH_OFFSET = 8;
export const PARTITION_LEADER_EPOCH_OFFSET = 12;
export const MAGIC_OFFSET = 16;
export const CRC_OFFSET = 17;
export const ATTRIBUTES_OFFSET = 21;
export const LAST_OFFSET_DELTA_OFFSET = 23;
export const BASE_TIMESTAMP_OFFSET = 27;
export const MAX_TIMESTAMP_OFFSET = 35;
export const PRODUCER_ID_OFFSET = 43;
export const PRODUCER_EPOCH_OFFSET = 51;
export const BASE_SEQUENCE_OFFSET = 53;
export const RECORDS_COUNT_OFFSET = 57;
export const RECORDS_OFFSET = 61;

/** baseOffset + batchLength: the bytes in front of what batchLength counts. */
export const LOG_OVERHEAD = 12;
/** The 61-byte v2 header: the smallest valid batch. */
export const RECORD_BATCH_OVERHEAD = 61;
/** baseOffset + batchLength + partitionLeaderEpoch + magic. */
export const HEADER_SIZE_UP_TO_MAGIC = 17;
/** Legacy (v0) minimum record overhead: any batchLength below it is corrupt framing. */
export const MIN_BATCH_LENGTH = 14;
/** The smallest encoded record: a 1-byte length plus six 1-byte fields. */
export const MIN_RECORD_BYTES = 7;

export const MAGIC_V2 = 2;

export const COMPRESSION_CODEC_MASK = 0x07;
export const TIMESTAMP_TYPE_MASK = 0x08;
export const TRANSACTIONAL_FLAG_MASK = 0x10;
export const CONTROL_FLAG_MASK = 0x20;
export const DELETE_HORIZON_FLAG_MASK = 0x40;
/** Every attribute bit Kafka defines; the others (7..15) must be written as 0. */
export const KNOWN_ATTRIBUTES_MASK = 0x7f;

export const INT32_MAX = 0x7fffffff;
export const INT32_MIN = -0x80000000;
export const INT16_MAX = 0x7fff;
export const INT16_MIN = -0x8000;

export const NO_PRODUCER_ID = -1;
export const NO_PRODUCER_EPOCH = -1;
export const NO_SEQUENCE = -1;
export const NO_PARTITION_LEADER_EPOCH = -1;
export const NO_TIMESTAMP = -1;
