// The application under test: one server process running a real BullMQ worker for the PR-review
// sweep, written the way the app of the 2026-10-07 incident was.
//
//   node worker.mjs '<json config>'
//
// It writes the evidence an incident would leave behind:
// - the run ledger: ledger.csv (UTC, one row per round event, appended by every process), or, with
//   `ledger: {kind: "postgres", ...}` in the config, rows INSERTed into the app's PostgreSQL table
//   (pg-ledger.mjs: the app's own column names and step words, the database's clock);
// - the server log (server.log, KST wall-clock time without an offset, HTTP-ish noise included),
//   with `active` and `completed` listeners only: like the incident's app it has no `stalled` and
//   no `failed` listener (unless `logStalled`, the seed's fix: a `stalled` listener that logs);
// - the effect: reviews "posted" into Redis (app:reviews).
// At startup it marks the rounds that dead processes left `running` as failed in the ledger.
//
// Its lock settings come from the config, or, with `configFile`, from the app's own nested config
// file (`queues.<queue>.worker`), as an app that keeps all its settings in one document has them.
// `bullmq` names the module to import (`bullmq`, or an npm alias such as `bullmq6`).
//
// It also reports to the harness, one JSON object per line on stdout, what it did and when
// (epoch ms): start, ready, active, stalled (with `logStalled`), processor (the processor was
// called), row (a ledger row was written: the file append or the committed INSERT, with the row's
// own time), selected, posted, finished, completed, marked-failed, closed. Nothing else goes to
// stdout.
//
// Only Node built-ins are imported statically: the `server starting` line is written before BullMQ
// loads, as a real server logs its start before wiring its modules.

import { appendFileSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

const startedAt = Date.now();
const config = JSON.parse(process.argv[2] ?? '{}');
const { port, queue: queueName, outdir, scanMs = 500, reviewMs = 1000, noiseMs = 400, bullmq = 'bullmq', ledger: ledgerConfig, configFile, logStalled = false } = config;
if (!port || !queueName || !outdir) {
  process.stderr.write('worker.mjs: config needs port, queue and outdir\n');
  process.exit(2);
}
// The app's own config file, when it has one: the worker options of this queue, nested in it.
const workerOptions = configFile ? JSON.parse(readFileSync(configFile, 'utf8')).queues?.[queueName]?.worker : config;
if (!workerOptions) {
  process.stderr.write(`worker.mjs: ${configFile} has no queues.${queueName}.worker\n`);
  process.exit(2);
}
const { lockDuration, stalledInterval, maxStalledCount, concurrency = 2 } = workerOptions;

const pid = process.pid;
const host = hostname();
const workerName = `${host}/${pid}`;
const ledgerPath = join(outdir, 'ledger.csv');
const logPath = join(outdir, 'server.log');

/** Seoul has had no daylight saving since 1988: KST is UTC+9 all year. */
function kst(ms) {
  return new Date(ms + 9 * 3600 * 1000).toISOString().replace('T', ' ').replace('Z', '');
}

function log(ms, level, component, message) {
  appendFileSync(logPath, `${kst(ms)} ${level.padEnd(5)} [${component}] ${message}\n`);
}

function report(event, fields) {
  process.stdout.write(`${JSON.stringify({ ev: event, pid, ...fields })}\n`);
}

function csv(value) {
  const text = value === undefined || value === null ? '' : String(value);
  return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV ledger row: at,run_id,job_id,slot,sweep,event,item,worker,status,detail (UTC). */
function csvRow(ms, row) {
  const cells = [new Date(ms).toISOString(), row.runId, row.jobId, new Date(row.slot).toISOString(), row.sweep, row.event, row.item, row.worker, row.status, row.detail];
  appendFileSync(ledgerPath, `${cells.map(csv).join(',')}\n`);
  return ms;
}

/** The PostgreSQL ledger, opened once BullMQ is loaded (null: the CSV file). */
let pgLedger = null;

/** Records one round event in the ledger and tells the harness when it is there; resolves with the
 * row's own time (`ms` for the CSV file, the database's clock for PostgreSQL). */
async function ledger(ms, run, event, { item = '', status = '', detail = '', meta = null } = {}) {
  const row = { runId: run.runId, jobId: run.jobId, slot: run.slot, sweep: run.sweep, event, item, worker: run.worker ?? workerName, status, detail, meta };
  const at = pgLedger ? await pgLedger.write(row) : csvRow(ms, row);
  report('row', { at, runId: run.runId, jobId: run.jobId, event });
  return at;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

log(startedAt, 'INFO', 'main', `server starting pid=${pid} node=${process.version} env=e2e version=3.18.2`);
report('start', { at: startedAt });
// A multi-line payload: its second line has no timestamp (a continuation line).
appendFileSync(
  logPath,
  `${kst(Date.now())} DEBUG [Config] effective config:\n    {"queue":"${queueName}","concurrency":${concurrency}}\n`,
);
if (configFile) {
  // The app that reads its settings from its config file says at boot what it read.
  log(
    Date.now(),
    'INFO',
    'Config',
    `worker options queue=${queueName} lockDuration=${lockDuration}ms stalledInterval=${stalledInterval}ms maxStalledCount=${maxStalledCount} concurrency=${concurrency}`,
  );
}

const { Worker } = await import(bullmq);
const { default: IORedis } = await import('ioredis');
if (ledgerConfig?.kind === 'postgres') {
  const { openPgLedger } = await import('./pg-ledger.mjs');
  pgLedger = await openPgLedger(ledgerConfig);
}

const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
const app = new IORedis(connection);
log(Date.now(), 'INFO', 'InstanceLoader', 'AppModule dependencies initialized');

// ---------------------------------------------------------------- runs left running by a dead process

function alive(otherPid) {
  try {
    process.kill(otherPid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

{
  const runs = await app.hgetall('app:runs');
  const stale = [];
  for (const [runId, text] of Object.entries(runs)) {
    const run = JSON.parse(text);
    if (run.status === 'running' && run.pid !== pid && !alive(run.pid)) {
      // The row is written by this process, as the seed app did.
      const at = await ledger(Date.now(), { ...run, worker: workerName }, 'round_failed', {
        status: 'FAILED',
        detail: 'marked failed at startup: server restarted',
      });
      await app.hset('app:runs', runId, JSON.stringify({ ...run, status: 'failed' }));
      report('marked-failed', { at, runId, jobId: run.jobId });
      stale.push(runId);
    }
  }
  if (stale.length > 0) {
    log(
      Date.now(),
      'WARN',
      'RunLedger',
      `marked ${stale.length} running run(s) FAILED after restart runs=${stale.join(';')} pid=${pid}`,
    );
  }
}

// ---------------------------------------------------------------- the sweep

const KST_HHMMSS = (ms) => kst(ms).slice(11, 19).replace(/:/g, '');

/** The scheduled time of the round: a scheduler job's id ends with its slot in ms. */
function slotOf(job) {
  const match = /:(\d{10,})$/.exec(job.id);
  return match ? Number(match[1]) : job.timestamp;
}

let completedCount = 0;
let activeCount = 0;

async function sweep(job) {
  const calledAt = Date.now();
  report('processor', { at: calledAt, jobId: job.id, attemptsStarted: job.attemptsStarted });
  const slot = slotOf(job);
  const attempt = String.fromCharCode(96 + Math.max(1, Math.min(26, job.attemptsStarted || 1)));
  const run = {
    runId: `run-${KST_HHMMSS(slot)}-${attempt}`,
    jobId: job.id,
    slot,
    sweep: job.name,
    pid,
  };
  const scan = job.data?.scanMs ?? scanMs;
  const review = job.data?.reviewMs ?? reviewMs;

  await app.hset('app:runs', run.runId, JSON.stringify({ ...run, status: 'running' }));
  const candidates = await app.llen('app:prs');
  await ledger(calledAt, run, 'round_started', { status: 'RUNNING', meta: { attempt: job.attemptsStarted, candidates } });
  log(Date.now(), 'DEBUG', 'PrReviewSweep', `scanning candidates run=${run.runId} candidates=${candidates}`);

  await sleep(scan);
  const [prs, reviewed] = await Promise.all([app.lrange('app:prs', 0, -1), app.smembers('app:reviewed')]);
  const done = new Set(reviewed);
  const item = prs.find((pr) => !done.has(pr));
  if (item === undefined) {
    const at = await ledger(Date.now(), run, 'round_finished', { status: 'DONE', detail: 'nothing to review' });
    await app.hset('app:runs', run.runId, JSON.stringify({ ...run, status: 'done' }));
    report('finished', { at, runId: run.runId, jobId: job.id });
    return { runId: run.runId, item: null };
  }
  const selectedAt = await ledger(Date.now(), run, 'item_selected', { item });
  log(selectedAt, 'INFO', 'PrReviewSweep', `selected pr=${item} run=${run.runId}`);
  report('selected', { at: selectedAt, runId: run.runId, jobId: job.id, item });

  await sleep(review);
  const postedAt = Date.now();
  await app
    .multi()
    .sadd('app:reviewed', item)
    .rpush('app:reviews', JSON.stringify({ item, runId: run.runId, at: postedAt }))
    .exec();
  await ledger(postedAt, run, 'effect_posted', { item, detail: 'review posted' });
  log(postedAt, 'INFO', 'ReviewClient', `POST /repos/acme/web/pulls/${item.replace('PR-', '')}/reviews 201 run=${run.runId}`);
  report('posted', { at: postedAt, runId: run.runId, jobId: job.id, item });

  const finishedAt = await ledger(Date.now(), run, 'round_finished', { status: 'DONE' });
  await app.hset('app:runs', run.runId, JSON.stringify({ ...run, status: 'done' }));
  report('finished', { at: finishedAt, runId: run.runId, jobId: job.id });
  return { runId: run.runId, item };
}

const worker = new Worker(queueName, sweep, {
  connection,
  concurrency,
  lockDuration,
  stalledInterval,
  maxStalledCount,
  autorun: false,
});

// The app's queue listeners: `active` and `completed` (no `failed`; `stalled` only when asked).
worker.on('active', (job) => {
  const at = Date.now();
  activeCount += 1;
  log(at, 'INFO', 'BullWorker', `job active queue=${queueName} name=${job.name} id=${job.id} pid=${pid}`);
  report('active', { at, jobId: job.id, name: job.name, processedOn: job.processedOn, attemptsStarted: job.attemptsStarted });
});
worker.on('completed', (job) => {
  const at = Date.now();
  completedCount += 1;
  activeCount = Math.max(0, activeCount - 1);
  log(at, 'INFO', 'BullWorker', `job completed queue=${queueName} name=${job.name} id=${job.id} pid=${pid}`);
  report('completed', { at, jobId: job.id, finishedOn: job.finishedOn });
});
if (logStalled) {
  // The seed's fix: BullMQ emits `stalled` on the worker whose check moved the job.
  worker.on('stalled', (jobId, prev) => {
    const at = Date.now();
    log(at, 'WARN', 'BullWorker', `stalled job ${jobId} queue=${queueName} prev=${prev} pid=${pid}`);
    report('stalled', { at, jobId });
  });
}
// Without an `error` listener an EventEmitter throws; the app sends these to its console only.
worker.on('error', (error) => {
  process.stderr.write(`worker error: ${error?.message ?? error}\n`);
});

// ---------------------------------------------------------------- noise

const ROUTES = [
  () => `GET /healthz 200 ${(Math.random() * 5 + 0.5).toFixed(1)}ms pid=${pid}`,
  () => `GET /metrics 200 ${(Math.random() * 8 + 1).toFixed(1)}ms pid=${pid}`,
  () => `GET /api/jobs/active 200 ${(Math.random() * 8 + 1).toFixed(1)}ms pid=${pid}`,
  () => `GET /api/reviews?state=open 200 ${(Math.random() * 4 + 1).toFixed(1)}ms pid=${pid}`,
  () => `POST /api/review-feedback 201 ${(Math.random() * 15 + 3).toFixed(1)}ms body={"pr":"PR-43${Math.floor(Math.random() * 90 + 10)}","vote":"up"} pid=${pid}`,
];
let tick = 0;
const noise = setInterval(() => {
  const at = Date.now();
  tick += 1;
  if (tick % 5 === 0) {
    log(at, 'DEBUG', 'QueueMetrics', `job metrics: active=${activeCount} waiting=0 failed=0 completed=${completedCount}`);
  } else if (tick % 7 === 0) {
    log(at, 'WARN', 'GithubClient', 'request failed status=429 retry_in=2s route=GET /repos/acme/web/pulls');
  } else {
    log(at, 'INFO', 'HTTP', ROUTES[Math.floor(Math.random() * ROUTES.length)]());
  }
}, noiseMs);

// ---------------------------------------------------------------- graceful shutdown (SIGTERM)

let closing = false;
process.on('SIGTERM', async () => {
  if (closing) return;
  closing = true;
  clearInterval(noise);
  log(Date.now(), 'INFO', 'main', `shutting down on SIGTERM pid=${pid}`);
  try {
    await worker.close();
    await app.quit();
    await pgLedger?.close();
  } finally {
    report('closed', { at: Date.now() });
    process.exit(0);
  }
});

// A worker outlives nothing: if the harness that started it is gone, stop at once.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.kill(process.pid, 'SIGKILL');
}, 1000).unref();

worker.run().catch((error) => {
  process.stderr.write(`worker.run failed: ${error?.stack ?? error}\n`);
  process.exit(1);
});
await worker.waitUntilReady();
log(Date.now(), 'INFO', 'BullWorker', `worker ready queue=${queueName} concurrency=${concurrency} pid=${pid}`);
report('ready', { at: Date.now() });
