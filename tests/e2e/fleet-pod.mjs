// One pod of the fleet's app: a Node process running a real BullMQ worker on each of the app's
// queues (fleet-app.mjs has the job types), started by tests/e2e/fleet.mjs, which SIGKILLs,
// SIGSTOPs, SIGTERMs and replaces it as its seeded fault plan says. Not meant to be run by hand:
//
//   node fleet-pod.mjs '<json config>'      (stdio: stdout = the pod's log, fd 3 = reports)
//
// What it writes is what a real pod leaves behind:
// - its log: pino's own JSON lines on stdout (the orchestrator stamps each line as the container
//   runtime does and keeps it as `kubectl logs --timestamps` gives it), with `active`,
//   `completed`, `failed` and `error` listeners on every worker, and a `stalled` listener only on
//   the queues fleet-app.mjs names (STALLED_LOGGED);
// - the shared KST text log (no offset on the line), appended by every pod across restarts:
//   server start, job active and job completed lines, and HTTP-ish noise;
// - its rows in the shared PostgreSQL ledger table (the database's clock);
// - its effects, POSTed to the orchestrator's receiver, with an idempotency key for the job types
//   that have one.
// At startup it marks the runs its pod's previous container left running as failed
// (`<prefix>.reaped`): a replaced pod (a new name) has nobody to do that for it.
//
// It reports to the orchestrator, one JSON object per line on fd 3, what it did and when (epoch
// ms): start, ready (with its workers' ids, the prefix of their lock tokens), active, enter and
// exit (the processor), completed, failed, stalled (with whether it logged it), error (BullMQ's
// refusals included), closed. These reports are the harness's ground truth; the logs are evidence.

import { appendFileSync, writeSync } from 'node:fs';

import { CONCURRENCY, DATABASE, JOB_TYPES, LOCK, QUEUES, STALLED_LOGGED, TABLE, kst } from './fleet-app.mjs';

const startedAt = Date.now();
const config = JSON.parse(process.argv[2] ?? '{}');
const { pod, redisPort, pgPort, receiverUrl, kstLog, bullmq = 'bullmq', appVersion = '4.2.0' } = config;
if (!pod || !redisPort || !pgPort || !receiverUrl || !kstLog) {
  process.stderr.write('fleet-pod.mjs: config needs pod, redisPort, pgPort, receiverUrl and kstLog\n');
  process.exit(2);
}
const pid = process.pid;
const workerName = `${pod}/${pid}`;

// A pod outlives nothing: if the orchestrator that started it is gone, stop at once. Set before
// anything that could wait (the database, Redis), so that a pod stuck starting goes too.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.kill(process.pid, 'SIGKILL');
}, 500).unref();

/** One report to the orchestrator; a full pipe is waited out, never dropped. A closed one means
 * the orchestrator is gone: so is the pod. */
function report(ev, fields = {}) {
  const line = Buffer.from(`${JSON.stringify({ ev, pod, pid, at: Date.now(), ...fields })}\n`);
  let offset = 0;
  while (offset < line.length) {
    try {
      offset += writeSync(3, line, offset);
    } catch (error) {
      if (error.code === 'EPIPE') process.kill(process.pid, 'SIGKILL');
      if (error.code !== 'EAGAIN') throw error;
    }
  }
}

function kstLine(ms, level, component, message) {
  appendFileSync(kstLog, `${kst(ms)} ${level.padEnd(5)} [${component}] ${message}\n`);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

kstLine(startedAt, 'INFO', 'main', `server starting pid=${pid} pod=${pod} node=${process.version} version=${appVersion}`);
report('start', { at: startedAt });

const { default: pino } = await import('pino');
// pino's own output, as the app configures it in production: the pod name as hostname.
const logger = pino({ base: { pid, hostname: pod } });
logger.info({ version: appVersion, node: process.version }, 'server starting');

const { Worker } = await import(bullmq);
const { default: IORedis } = await import('ioredis');
const { default: pg } = await import('pg');

const connection = { host: '127.0.0.1', port: redisPort, maxRetriesPerRequest: null };
const app = new IORedis(connection);
app.on('error', (error) => logger.error({ err: error }, 'redis error'));
const pool = new pg.Pool({ host: '127.0.0.1', port: pgPort, user: 'postgres', database: DATABASE, max: 3 });
pool.on('error', (error) => logger.error({ err: error }, 'postgres error'));

/** One ledger row, committed; resolves with the database's time for it (epoch ms, µs fraction). */
async function row(run, step, { item = null, key = null, final = null, details = null } = {}) {
  const { rows } = await pool.query(
    `insert into ${TABLE} (queue_name, bull_job_id, run_ref, lifecycle, final_state, item_ref, idem_key, worker_node, details)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     returning (extract(epoch from logged_at) * 1000000)::int8 as at_us`,
    [run.queue, run.jobId, run.runId, `${run.prefix}.${step}`, final, item, key, workerName, details],
  );
  return Number(rows[0].at_us) / 1000;
}

// ---------------------------------------------------------------- runs the previous container left

{
  const { rows } = await pool.query(
    `select run_ref, queue_name, bull_job_id, split_part(lifecycle, '.', 1) as prefix
       from ${TABLE}
      where worker_node like $1 and worker_node <> $2
      group by run_ref, queue_name, bull_job_id, split_part(lifecycle, '.', 1)
     having count(*) filter (where lifecycle like '%.end' or lifecycle like '%.reaped') = 0`,
    [`${pod}/%`, workerName],
  );
  for (const r of rows) {
    const run = { queue: r.queue_name, jobId: r.bull_job_id, runId: r.run_ref, prefix: r.prefix };
    const at = await row(run, 'reaped', { final: 'failed', details: 'marked failed at startup: container restarted' });
    report('reaped', { runId: run.runId, queue: run.queue, jobId: run.jobId, rowAt: at });
  }
  if (rows.length > 0) {
    logger.warn({ runs: rows.map((r) => r.run_ref) }, `marked ${rows.length} running run(s) failed after restart`);
    kstLine(Date.now(), 'WARN', 'RunLedger', `marked ${rows.length} running run(s) FAILED after restart pid=${pid}`);
  }
}

// ---------------------------------------------------------------- the work

function letter(job) {
  return String.fromCharCode(96 + Math.max(1, Math.min(26, job.attemptsStarted || 1)));
}

function slotOf(job) {
  const match = /:(\d{10,})$/.exec(job.id);
  return match ? Number(match[1]) : job.timestamp;
}

function runOf(job, queue) {
  const type = JOB_TYPES[job.name];
  const runId = type.scheduled
    ? `${type.prefix}-${kst(slotOf(job)).slice(11, 19).replace(/:/g, '')}-${letter(job)}`
    : `${type.prefix}-${job.id}-${letter(job)}`;
  return { queue, jobId: job.id, runId, prefix: type.prefix, type };
}

/** POSTs one effect to the receiver; resolves with its answer ({status, request_id}). */
async function deliver(run, item, key) {
  const response = await fetch(receiverUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-job-id': run.jobId,
      'x-sender': pod,
      ...(key ? { 'idempotency-key': key } : {}),
    },
    body: JSON.stringify({ item, key, queue: run.queue, job_id: run.jobId, run_id: run.runId, pod, pid, type: run.prefix }),
  });
  if (!response.ok) throw new Error(`receiver answered ${response.status}`);
  return response.json();
}

async function effect(run, item, key = null) {
  const answer = await deliver(run, item, key);
  logger.info({ runId: run.runId, item, status: answer.status }, 'effect sent');
  return row(run, 'send', { item, key });
}

const WORK = {
  async 'pr-sweep'(job, run) {
    const { scanMs, reviewMs, picks } = run.type;
    await row(run, 'begin');
    await sleep(scanMs);
    const [candidates, reviewed] = await Promise.all([app.lrange('app:prs', 0, -1), app.smembers('app:reviewed')]);
    const done = new Set(reviewed);
    const chosen = candidates.filter((pr) => !done.has(pr)).slice(0, picks);
    for (const item of chosen) {
      const at = await row(run, 'pick', { item });
      report('selected', { runId: run.runId, queue: run.queue, jobId: run.jobId, item, rowAt: at });
    }
    for (const item of chosen) {
      await sleep(reviewMs);
      await effect(run, item);
      await app.sadd('app:reviewed', item);
    }
    await row(run, 'end', { final: 'done', details: chosen.length ? null : 'nothing to review' });
    return { runId: run.runId, reviewed: chosen };
  },
  async digest(job, run) {
    await row(run, 'begin');
    await sleep(run.type.workMs);
    const slot = slotOf(job);
    await effect(run, `digest-${kst(slot).slice(11, 16).replace(':', '')}`, `digest:${slot}`);
    await row(run, 'end', { final: 'done' });
    return { runId: run.runId };
  },
  async 'review-pr'(job, run) {
    const { pr, workMs, fail = [] } = job.data;
    await row(run, 'begin');
    await sleep(workMs);
    const tryNo = job.attemptsMade + 1;
    if (fail.includes(tryNo)) {
      const error = new Error('HTTP 502 Bad Gateway from review-api');
      await row(run, 'end', { item: pr, final: 'failed', details: error.message });
      throw error;
    }
    await effect(run, pr);
    await row(run, 'end', { item: pr, final: 'done' });
    return { runId: run.runId };
  },
  async 'notify-user'(job, run) {
    const { user, workMs, failAfterSend = [], invalid = false } = job.data;
    const key = `notify:${job.id}:${user}`;
    await row(run, 'begin');
    await sleep(workMs);
    if (invalid) {
      const error = new Error('400 Bad Request: invalid recipient address');
      await row(run, 'end', { item: user, final: 'failed', details: error.message });
      throw error;
    }
    await effect(run, user, key);
    if (failAfterSend.includes(job.attemptsMade + 1)) {
      const error = new Error('timeout waiting for delivery ack after 800 ms');
      await row(run, 'end', { item: user, final: 'failed', details: error.message });
      throw error;
    }
    await row(run, 'end', { item: user, final: 'done' });
    return { runId: run.runId };
  },
  async backfill(job, run) {
    await row(run, 'begin');
    const until = Date.now() + job.data.workMs;
    while (Date.now() < until) await sleep(Math.min(500, until - Date.now()));
    await row(run, 'end', { final: 'done' });
    return { runId: run.runId };
  },
};

function processorFor(queue) {
  return async (job, token) => {
    const run = runOf(job, queue);
    report('enter', { queue, jobId: job.id, name: job.name, attempt: job.attemptsStarted, attemptsMade: job.attemptsMade, runId: run.runId, token, processedOn: job.processedOn });
    try {
      const result = await WORK[job.name](job, run);
      report('exit', { queue, jobId: job.id, runId: run.runId, how: 'returned' });
      return result;
    } catch (error) {
      report('exit', { queue, jobId: job.id, runId: run.runId, how: 'threw', error: error.message });
      throw error;
    }
  };
}

// ---------------------------------------------------------------- the workers and their listeners

const workers = QUEUES.map((queue) => {
  const worker = new Worker(queue, processorFor(queue), { connection, concurrency: CONCURRENCY[queue], ...LOCK, autorun: false });
  worker.on('active', (job) => {
    const at = Date.now();
    logger.info({ queue, jobId: job.id, jobName: job.name }, 'job active');
    kstLine(at, 'INFO', 'BullWorker', `job active queue=${queue} name=${job.name} id=${job.id} pid=${pid}`);
    report('active', { at, queue, jobId: job.id, name: job.name, processedOn: job.processedOn, attemptsStarted: job.attemptsStarted });
  });
  worker.on('completed', (job) => {
    const at = Date.now();
    logger.info({ queue, jobId: job.id, jobName: job.name, durationMs: at - job.processedOn }, 'job completed');
    kstLine(at, 'INFO', 'BullWorker', `job completed queue=${queue} name=${job.name} id=${job.id} pid=${pid}`);
    report('completed', { at, queue, jobId: job.id, finishedOn: job.finishedOn });
  });
  worker.on('failed', (job, error) => {
    const at = Date.now();
    logger.warn({ queue, jobId: job?.id, jobName: job?.name, attemptsMade: job?.attemptsMade, err: error }, 'job failed');
    report('failed', { at, queue, jobId: job?.id, reason: error?.message, attemptsMade: job?.attemptsMade, finishedOn: job?.finishedOn ?? null });
  });
  worker.on('stalled', (jobId, prev) => {
    const at = Date.now();
    const logged = STALLED_LOGGED.includes(queue);
    if (logged) logger.warn({ queue, jobId, prev }, `stalled job ${jobId}`);
    report('stalled', { at, queue, jobId, prev, logged });
  });
  worker.on('error', (error) => {
    const at = Date.now();
    logger.error({ err: error, queue }, 'worker error');
    report('error', { at, queue, message: error?.message ?? String(error) });
  });
  return { queue, worker };
});

// ---------------------------------------------------------------- noise

const ROUTES = ['/healthz', '/metrics', '/api/jobs/active', '/api/reviews?state=open'];
let tick = 0;
const noise = setInterval(() => {
  tick += 1;
  const url = ROUTES[tick % ROUTES.length];
  logger.info({ req: { method: 'GET', url }, res: { statusCode: 200 }, responseTime: (tick % 7) + 0.5 }, 'request completed');
  if (tick % 3 === 0) kstLine(Date.now(), 'INFO', 'HTTP', `GET ${url} 200 ${(tick % 9) + 0.4}ms pid=${pid}`);
}, 700);

// ---------------------------------------------------------------- graceful shutdown (SIGTERM)

let closing = false;
process.on('SIGTERM', async () => {
  if (closing) return;
  closing = true;
  clearInterval(noise);
  logger.info('shutting down on SIGTERM');
  kstLine(Date.now(), 'INFO', 'main', `shutting down on SIGTERM pid=${pid}`);
  try {
    await Promise.all(workers.map(({ worker }) => worker.close()));
    await app.quit();
    await pool.end();
  } finally {
    report('closed');
    logger.flush?.();
    setTimeout(() => process.exit(0), 50);
  }
});

for (const { queue, worker } of workers) {
  worker.run().catch((error) => {
    logger.error({ err: error, queue }, 'worker.run failed');
    report('error', { queue, message: `worker.run failed: ${error?.message ?? error}` });
  });
}
await Promise.all(workers.map(({ worker }) => worker.waitUntilReady()));
for (const { queue } of workers) {
  logger.info({ queue, opts: { concurrency: CONCURRENCY[queue], ...LOCK } }, 'worker started');
}
kstLine(Date.now(), 'INFO', 'BullWorker', `workers ready queues=${QUEUES.join(',')} pid=${pid} pod=${pod}`);
report('ready', { workerIds: Object.fromEntries(workers.map(({ queue, worker }) => [queue, worker.id])) });
