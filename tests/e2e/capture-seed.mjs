// Fills a Redis with one real BullMQ queue in every state `leasetrace capture` reads, for the
// capture tests (tests/e2e/capture.rs), then exits with the Redis left as it is:
//
//   node capture-seed.mjs PORT QUEUE [MAX_LEN_EVENTS PAUSE_MS]
//
// Jobs completed (one with job logs), failed, delayed and waiting, a job scheduler (its hash, its
// `repeat` entry and its next delayed job), and one job left active by a worker process that
// exits without closing, so its lock stays held (lockDuration 10 min: it does not expire while
// the test reads). MAX_LEN_EVENTS sets the queue's `streams.events.maxLen` (a trimmed stream);
// then, after the first jobs finished, the seed waits PAUSE_MS and adds 8 more waiting jobs, whose
// entries push the earlier ones out of the stream: the first jobs' hashes are older than it.
// Prints one JSON line: the ids of what it made and the held lock's token.

import { Queue, Worker } from 'bullmq';

const [port, name, maxLen, pause] = process.argv.slice(2);
if (!port || !name) {
  process.stderr.write('usage: node capture-seed.mjs PORT QUEUE [MAX_LEN_EVENTS PAUSE_MS]\n');
  process.exit(2);
}
const connection = { host: '127.0.0.1', port: Number(port) };
const queue = new Queue(name, { connection, ...(maxLen ? { streams: { events: { maxLen: Number(maxLen) } } } : {}) });
await queue.waitUntilReady();

await queue.upsertJobScheduler('nightly', { every: 3_600_000 }, { name: 'nightly', data: {} });
const done = [];
for (let n = 1; n <= 4; n += 1) done.push(await queue.add('review', { pr: `PR-${4400 + n}`, fail: n === 4 }, { attempts: 1 }));

const finished = new Set();
const worker = new Worker(
  name,
  async (job) => {
    if (job.name === 'nightly') return 'skipped';
    await job.log(`reviewing ${job.data.pr}`);
    if (job.data.fail) throw new Error('the review API answered 502');
    return { posted: true };
  },
  { connection, concurrency: 1 },
);
const settled = new Promise((resolve) => {
  const note = (job) => {
    finished.add(job.id);
    if (done.every((j) => finished.has(j.id))) resolve();
  };
  worker.on('completed', note);
  worker.on('failed', note);
});
await settled;
await worker.close();

if (pause) await new Promise((resolve) => setTimeout(resolve, Number(pause)));
const delayed = await queue.add('review', { pr: 'PR-4499' }, { delay: 3_600_000 });
const taken = await queue.add('review', { pr: 'PR-4500' });
const waiting = await queue.add('review', { pr: 'PR-4501' });
if (pause) for (let n = 4502; n < 4510; n += 1) await queue.add('review', { pr: `PR-${n}` });

// One more job, taken by a worker that never finishes it and exits without closing: its lock
// stays, as a killed process leaves it. `taken` is first in line (FIFO) and the worker takes one
// job only, so `waiting` stays waiting.
const held = new Worker(
  name,
  async (job) => {
    const token = await queue.client.then((c) => c.get(`${queue.opts.prefix ?? 'bull'}:${name}:${job.id}:lock`));
    process.stdout.write(`${JSON.stringify({ completed: done.slice(0, 3).map((j) => j.id), failed: done[3].id, delayed: delayed.id, waiting: waiting.id, active: job.id, expected_active: taken.id, lock_token: token })}\n`);
    process.exit(0);
  },
  { connection, concurrency: 1, lockDuration: 600_000, autorun: false },
);
held.run();
