// A merge worker's thread (merge-pool.ts): runs each MergeJob it is sent and
// posts the MergeResult back. The records arrive as bytes; nothing else is
// shared with the producer's thread.
import { parentPort } from 'node:worker_threads';
import type { MergeJob } from './merge-job.js';
import { runMergeJob } from './merge-job.js';

const port = parentPort;
if (port === null) throw new Error('merge-worker.ts runs only as a worker thread');
port.on('message', (job: MergeJob) => {
  if (job.fault === 'exit') process.exit(3); // test hook: a worker that dies mid-merge
  if (job.fault === 'hang') return; // test hook: a worker that never answers (the pool's deadline ends it)
  port.postMessage(runMergeJob(job));
});
port.postMessage('ready');
