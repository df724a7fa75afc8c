// The static types derived from the descriptions (MessageOf) fit the broker's
// interfaces the way the switch-over uses them: a decoded request is
// assignable to the broker's request type (handlers take it), and the
// broker's response objects are assignable to our response type (the
// encoder takes them). Checked by tsc -p tsconfig.tests.json; the runtime
// part only keeps vitest reporting the file.

import { describe, expect, it } from 'vitest';
import type * as ours from '../src/index.js';
import type * as broker from '../../broker/src/protocol/index.js';

type Assignable<From, To> = [From] extends [To] ? true : false;

const requestsFit: [
  Assignable<ours.ProduceRequest, broker.ProduceRequest>,
  Assignable<ours.FetchRequest, broker.FetchRequest>,
  Assignable<ours.ListOffsetsRequest, broker.ListOffsetsRequest>,
  Assignable<ours.MetadataRequest, broker.MetadataRequest>,
  Assignable<ours.ApiVersionsRequest, broker.ApiVersionsRequest>,
  Assignable<ours.CreateTopicsRequest, broker.CreateTopicsRequest>,
  Assignable<ours.DeleteRecordsRequest, broker.DeleteRecordsRequest>,
  Assignable<ours.InitProducerIdRequest, broker.InitProducerIdRequest>,
] = [true, true, true, true, true, true, true, true];

const responsesFit: [
  Assignable<broker.ProduceResponse, ours.ProduceResponse>,
  Assignable<broker.FetchResponse, ours.FetchResponse>,
  Assignable<broker.ListOffsetsResponse, ours.ListOffsetsResponse>,
  Assignable<broker.MetadataResponse, ours.MetadataResponse>,
  Assignable<broker.ApiVersionsResponse, ours.ApiVersionsResponse>,
  Assignable<broker.CreateTopicsResponse, ours.CreateTopicsResponse>,
  Assignable<broker.DeleteRecordsResponse, ours.DeleteRecordsResponse>,
  Assignable<broker.InitProducerIdResponse, ours.InitProducerIdResponse>,
] = [true, true, true, true, true, true, true, true];

// And both ways where the records type does not differ (no records field).
const sameShape: [
  Assignable<broker.MetadataRequest, ours.MetadataRequest>,
  Assignable<ours.MetadataResponse, broker.MetadataResponse>,
  Assignable<broker.CreateTopicsRequest, ours.CreateTopicsRequest>,
  Assignable<ours.CreateTopicsResponse, broker.CreateTopicsResponse>,
  // Controls: a derived type that collapsed to never or any would make these true.
  Assignable<ours.ProduceRequest, { readonly acks: string }>,
  Assignable<ours.FetchResponse, { readonly responses: null }>,
] = [true, true, true, true, false, false];

describe('message types', () => {
  it('fit the broker\'s interfaces (checked by tsc)', () => {
    expect([...requestsFit, ...responsesFit, ...sameShape].filter((fit) => !fit)).toHaveLength(2);
  });
});
