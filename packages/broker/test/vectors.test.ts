// Byte vectors built by hand from Kafka's message JSON schemas (not by our
// encoder), checked against the decoder and encoder.

import { describe, expect, it } from 'vitest';
import { ProtocolWriter, decodeRequest, decodeResponse, encodeResponse } from '@seglog/protocol';
import { SUPPORTED_APIS, apiVersionsFallback, apiVersionsResponse } from '../src/index.js';
import { concatParts } from './arbitraries.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const ascii = (s: string): string => Buffer.from(s, 'latin1').toString('hex');

describe('request vectors', () => {
  it('ApiVersions v3 as librdkafka sends it (header v2, client id "rdkafka")', () => {
    const frame = hex([
      '0012 0003 00000001', // api_key 18, version 3, correlation id 1
      `0007 ${ascii('rdkafka')}`, // client_id keeps its int16 length in header v2
      '00', // header tagged fields
      `0b ${ascii('librdkafka')}`, // compact string: uvarint(length + 1)
      `06 ${ascii('2.3.0')}`,
      '00', // body tagged fields
    ].join(''));
    const decoded = decodeRequest(frame);
    expect(decoded.api).toBe('API_VERSIONS');
    expect(decoded.header).toEqual({ apiKey: 18, apiVersion: 3, correlationId: 1, clientId: 'rdkafka', headerVersion: 2 });
    expect(decoded.body).toEqual({ clientSoftwareName: 'librdkafka', clientSoftwareVersion: '2.3.0' });
  });

  it('Metadata v0 for topic "t" (header v1, non-flexible)', () => {
    const decoded = decodeRequest(hex(`0003 0000 0000002a 0002 ${ascii('me')} 00000001 0001 74`));
    expect(decoded.api).toBe('METADATA');
    expect(decoded.body).toEqual({
      topics: [{ topicId: '0'.repeat(32), name: 't' }], allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false,
    });
  });

  it('Fetch v12 with the tagged cluster id (tag 0) and an unknown tag 7', () => {
    const frame = hex(`
      0001 000c 00000003 ffff 00
      ffffffff 000001f4 00000001 00100000 01 00000000 ffffffff
      02 02 74 02 00000000 ffffffff 0000000000000005 ffffffff ffffffffffffffff 00100000 00 00
      01
      01
      02
      00 02 02 63   07 01 ff`);
    const decoded = decodeRequest(frame);
    expect(decoded.api).toBe('FETCH');
    if (decoded.api !== 'FETCH') return;
    expect(decoded.body.clusterId).toBe('c');
    expect(decoded.body.isolationLevel).toBe(1);
    expect(decoded.body.rackId).toBe('');
    expect(decoded.body.topics).toEqual([{ topic: 't', partitions: [{
      partition: 0, currentLeaderEpoch: -1, fetchOffset: 5, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: 1048576,
    }] }]);
  });

  it('Produce v3 keeps the records bytes verbatim', () => {
    const decoded = decodeRequest(hex(`0000 0003 00000007 ffff  ffff ffff 00001388 00000001 0001 74 00000001 00000000 00000003 aabbcc`));
    expect(decoded.api).toBe('PRODUCE');
    if (decoded.api !== 'PRODUCE') return;
    expect(decoded.body).toMatchObject({ transactionalId: null, acks: -1, timeoutMs: 5000 });
    expect(decoded.body.topicData[0]?.partitionData[0]?.records?.toString('hex')).toBe('aabbcc');
  });
});

describe('response vectors', () => {
  it('ApiVersions fallback: UNSUPPORTED_VERSION, header v0, v0 body, all our ranges', () => {
    const frame = concatParts(apiVersionsFallback(new ProtocolWriter(), 77).parts);
    const entries = SUPPORTED_APIS.map((a) => [a.apiKey, a.minVersion, a.maxVersion]
      .map((n) => n.toString(16).padStart(4, '0')).join('')).join('');
    const body = `0000004d 0023 ${SUPPORTED_APIS.length.toString(16).padStart(8, '0')} ${entries}`;
    expect(frame.toString('hex')).toBe(hex(`${(hex(body).length).toString(16).padStart(8, '0')} ${body}`).toString('hex'));
    expect(decodeResponse(frame.subarray(4), 'API_VERSIONS', 0).body.errorCode).toBe(35);
  });

  it('ApiVersions v3 response: header v0 (no tag byte), compact array, throttle, tags', () => {
    const frame = concatParts(encodeResponse(new ProtocolWriter(), { api: 'API_VERSIONS', apiVersion: 3, correlationId: 1 }, {
      errorCode: 0, apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 3 }], throttleTimeMs: 0,
    }).parts);
    expect(frame.toString('hex')).toBe(hex('00000013 00000001 0000 02 0012 0000 0003 00 00000000 00').toString('hex'));
  });

  it('advertises exactly SUPPORTED_APIS', () => {
    expect(apiVersionsResponse().apiKeys).toEqual(SUPPORTED_APIS.map((a) => ({ apiKey: a.apiKey, minVersion: a.minVersion, maxVersion: a.maxVersion })));
  });

  it('Produce v9 response: header v1 (tag byte), compact fields', () => {
    const frame = concatParts(encodeResponse(new ProtocolWriter(), { api: 'PRODUCE', apiVersion: 9, correlationId: 2 }, {
      throttleTimeMs: 0,
      responses: [{ name: 't', partitionResponses: [{
        index: 0, errorCode: 0, baseOffset: 5, logAppendTimeMs: -1, logStartOffset: 0, recordErrors: [], errorMessage: null,
      }] }],
    }).parts);
    const body = `00000002 00  02 02 74  02 00000000 0000 0000000000000005 ffffffffffffffff 0000000000000000 01 00 00  00  00000000 00`;
    expect(frame.subarray(4).toString('hex')).toBe(hex(body).toString('hex'));
  });

  it('Fetch v4 response: non-flexible, null aborted transactions, int32 records length', () => {
    const frame = concatParts(encodeResponse(new ProtocolWriter(), { api: 'FETCH', apiVersion: 4, correlationId: 3 }, {
      throttleTimeMs: 0, errorCode: 0, sessionId: 0,
      responses: [{ topic: 't', partitions: [{
        partitionIndex: 1, errorCode: 1, highWatermark: 9, lastStableOffset: 9, logStartOffset: 0,
        abortedTransactions: null, preferredReadReplica: -1, records: Buffer.from('aa', 'hex'),
      }] }],
    }).parts);
    const body = `00000003 00000000 00000001 0001 74 00000001 00000001 0001 0000000000000009 0000000000000009 ffffffff 00000001 aa`;
    expect(frame.subarray(4).toString('hex')).toBe(hex(body).toString('hex'));
  });
});
