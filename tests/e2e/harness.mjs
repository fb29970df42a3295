// Stages a job-queue incident with a real Redis and real BullMQ worker processes, then exports the
// evidence leasetrace reads, and what the harness itself observed, into OUTDIR.
//
//   node harness.mjs stalled|stalled-limit|stalled-limit-logged|clean|replica-died OUTDIR [--bullmq MAJOR] [--ledger csv|postgres] [--capture LEASETRACE]
//
// It starts its own redis-server on a random loopback port (its own temp dir, no persistence),
// runs worker.mjs processes (separate Node processes, so they can be SIGKILLed), and stops
// everything it started, even on failure. Exit 0 with the files written; non-zero with a message
// on stderr otherwise.
//
// `--bullmq MAJOR` picks which of the BullMQ releases pinned in package.json the workers and the
// queue use (default 5: the `bullmq` dependency; 6: `bullmq6`, an npm alias of a 6.x release).
//
// `--ledger postgres` gives the app a PostgreSQL ledger instead of its CSV file: the harness
// starts its own PostgreSQL cluster (initdb in a temp dir, a random loopback port, its own socket
// dir; as the `postgres` user when run as root), the workers INSERT rows with the `pg` package
// into a table with the app's own column names (`ts_utc timestamptz`, `execution_id`, `bull_id`,
// `step`, ...), and the ledger is exported as a responder would, with psql's `\copy ... csv
// header`: ledger.csv in the session zone Asia/Seoul (`+09` offsets), ledger-utc.csv in UTC
// (`+00`), with a manifest for each (leasetrace.toml, leasetrace-utc.toml) that maps the columns
// and the app's step names. The app's lock settings then come from its own nested config file
// (worker-config.json, `queues.<queue>.worker`), which the workers read and the manifests declare.
//
// `--capture LEASETRACE` also runs `LEASETRACE capture` (the leasetrace binary at that path) on the
// harness's Redis: into OUTDIR/capture when the evidence is exported, and, in the stalled
// scenario, into OUTDIR/capture-dead right after the kill, while the dead worker's lock is still
// held (observed.json then gives the lock's token, `lock_token_after_kill`). A failed capture
// fails the harness with its stderr.
//
// OUTDIR receives: ledger.csv and server.log (written by the workers, or exported from
// PostgreSQL), events.json and events.txt (XRANGE of bull:<queue>:events, as JSON and as
// redis-cli prints it), jobs.jsonl (HGETALL of every job hash), bullmq.json (the lock parameters,
// flat; the manifest's parameters file unless the app has worker-config.json), leasetrace.toml
// (the case manifest), observed.json (what the harness saw: epoch ms and ids) and harness/
// (worker stdout and stderr, redis and postgres logs).
//
// observed.json also lists when BullMQ's stalled checks were effective (`stalled_checks_at`, from
// Redis keyspace notifications on the queue's `stalled-check` key, which only an effective check
// sets). LEASETRACE_E2E_MONITOR=1 also records Redis MONITOR (harness/monitor.log) and lists every
// stalled-check attempt (`stalled_check_attempts`: when, and whether it was effective or skipped
// because the `stalled-check` key was still set).

import { spawn, execFileSync } from 'node:child_process';
import { appendFileSync, closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { COLUMNS, DATABASE, DDL, STEPS, TABLE } from './pg-ledger.mjs';
import { startPostgres } from './postgres.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const QUEUE = 'pr-review';
const SWEEP = 'pr-review-sweep';

/** The BullMQ release pinned in package.json for a major version: its dependency name (the module
 * to import) and exact version, checked against what node_modules holds. `bullmq` itself, or an
 * npm alias (`"bullmq6": "npm:bullmq@6.7.0"`) so that two majors install side by side. */
function pinnedBullmq(major) {
  const { dependencies } = JSON.parse(readFileSync(join(HERE, 'package.json'), 'utf8'));
  const pins = Object.entries(dependencies)
    .map(([module, spec]) => ({ module, version: /^(?:npm:bullmq@)?(\d+\.\d+\.\d+)$/.exec(spec)?.[1], spec }))
    .filter((pin) => pin.version && (pin.module === 'bullmq' || pin.spec.startsWith('npm:bullmq@')));
  const pin = pins.find((p) => p.version.split('.')[0] === String(major));
  if (!pin) {
    fail(`package.json pins no bullmq ${major}.x (pinned: ${pins.map((p) => `${p.module} ${p.version}`).join(', ') || 'none'})`);
  }
  let installed;
  try {
    installed = JSON.parse(readFileSync(join(HERE, 'node_modules', pin.module, 'package.json'), 'utf8'));
  } catch {
    fail(`node_modules has no ${pin.module} (bullmq ${pin.version}): run tests/e2e/setup.sh`);
  }
  if (installed.name !== 'bullmq' || installed.version !== pin.version) {
    fail(`node_modules/${pin.module} is ${installed.name} ${installed.version}, package.json pins bullmq ${pin.version}: run tests/e2e/setup.sh`);
  }
  return { module: pin.module, version: pin.version };
}

const SCENARIOS = {
  // A repeatable sweep; the second round's worker is SIGKILLed right after activation and a new
  // worker starts at once; BullMQ's stalled check re-queues the round after the lock expires, and
  // the re-run overlaps the next regular round: both select and review the same PR.
  stalled: {
    params: { lockDuration: 4000, stalledInterval: 1000, maxStalledCount: 1 },
    // The re-run starts 4-6 s after the killed activation (lock expiry + one or two stalled
    // checks); the next slot comes 7 s after it; selections are 0.5 s into a round and the review
    // is posted 3.5 s later, so both rounds select the PR before either has posted it.
    every: 7000,
    scanMs: 500,
    reviewMs: 3500,
    run: stalledScenario,
  },
  // A plain job (not repeatable) killed twice before its first renewal: with maxStalledCount 1 the
  // second stall records the deferred failure and the next worker fails the job without calling
  // the processor.
  'stalled-limit': {
    params: { lockDuration: 3000, stalledInterval: 500, maxStalledCount: 1 },
    run: stalledLimitScenario,
  },
  // The same, by an app that logs BullMQ's `stalled` event (as the seed's fix does): each worker
  // whose check moved the job writes a `stalled job <id>` line, a few ms after BullMQ's entry.
  'stalled-limit-logged': {
    params: { lockDuration: 3000, stalledInterval: 500, maxStalledCount: 1 },
    logStalled: true,
    run: stalledLimitScenario,
  },
  // Two replicas run the sweep from the start. The one that takes the second round is SIGKILLed
  // once the round has selected its PR (before the first renewal) and never comes back: nothing
  // marks its run failed (only a starting process sweeps the runs dead processes left). The other
  // replica's stalled check re-queues the round after the lock expires and re-runs it, well before
  // the next slot.
  'replica-died': {
    params: { lockDuration: 4000, stalledInterval: 1000, maxStalledCount: 1 },
    every: 10000,
    scanMs: 300,
    reviewMs: 500,
    run: replicaDiedScenario,
  },
  // The repeatable sweep runs four rounds, each shorter than the period, with a graceful restart
  // (SIGTERM, worker.close()) between the second and the third.
  clean: {
    params: { lockDuration: 4000, stalledInterval: 1000, maxStalledCount: 1 },
    every: 3000,
    scanMs: 300,
    reviewMs: 700,
    run: cleanScenario,
  },
};

/** How long after BullMQ's activation (processedOn) the harness SIGKILLs the worker. */
const KILL_AFTER_MS = 150;
/** Every wait is bounded; the whole run is too. */
const OVERALL_TIMEOUT_MS = 90_000;

// ---------------------------------------------------------------- process bookkeeping

const children = new Set();

function killAll() {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

/** The redis-server's and PostgreSQL's own temp dirs, removed on every way out. */
let redisDir = null;
let pgDir = null;

process.on('exit', () => {
  killAll();
  for (const dir of [redisDir, pgDir]) if (dir) rmSync(dir, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    killAll();
    process.exit(130);
  });
}

class HarnessError extends Error {}

function fail(message) {
  throw new HarnessError(message);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function track(child, name) {
  children.add(child);
  child.exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal, at: Date.now() });
    });
  });
  child.on('error', (error) => {
    process.stderr.write(`harness: ${name}: ${error.message}\n`);
  });
  return child;
}

// ---------------------------------------------------------------- redis

async function startRedis(dir) {
  const { default: IORedis } = await import('ioredis');
  for (let attempt = 1; attempt <= 10; attempt += 1) {
    const port = 20000 + Math.floor(Math.random() * 20001);
    const logFile = join(dir, `redis-${port}.log`);
    const child = track(
      spawn(
        'redis-server',
        [
          '--port', String(port),
          '--bind', '127.0.0.1',
          '--save', '',
          '--appendonly', 'no',
          '--dir', dir,
          '--daemonize', 'no',
          '--logfile', logFile,
        ],
        { stdio: 'ignore' },
      ),
      'redis-server',
    );
    const client = new IORedis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    const deadline = Date.now() + 5000;
    let ready = false;
    while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
      try {
        if (client.status !== 'ready') {
          await client.connect();
        }
        // The server we started, not someone else's on that port.
        const info = await client.info('server');
        if (new RegExp(`process_id:${child.pid}\\b`).test(info)) {
          ready = true;
          break;
        }
        fail(`port ${port} answers but it is not our redis-server`);
      } catch (error) {
        if (error instanceof HarnessError) {
          break;
        }
        client.disconnect();
        await sleep(50);
      }
    }
    if (ready) {
      // Should this harness be SIGKILLed, nothing would stop its redis-server: a watchdog does.
      // (On any other exit the harness ends the watchdog first, then the server.)
      track(
        spawn(
          'sh',
          ['-c', 'while kill -0 "$0" 2>/dev/null; do sleep 1; done; kill -9 "$1" 2>/dev/null; rm -rf "$2"', String(process.pid), String(child.pid), dir],
          { stdio: 'ignore' },
        ),
        'redis watchdog',
      );
      return { port, child, client, logFile };
    }
    client.disconnect();
    child.kill('SIGKILL');
    await child.exited;
  }
  fail('could not start redis-server on a loopback port (10 attempts); is redis-server installed? run tests/e2e/setup.sh');
}

// ---------------------------------------------------------------- workers

class Workers {
  constructor(ctx) {
    this.ctx = ctx;
    this.list = [];
    this.events = [];
    this.waiters = [];
  }

  start(extra = {}) {
    const { ctx } = this;
    const index = this.list.length + 1;
    const config = {
      port: ctx.port,
      queue: QUEUE,
      outdir: ctx.outdir,
      bullmq: ctx.bullmq.module,
      // With a PostgreSQL ledger the app reads its lock settings from its own config file.
      ...(ctx.pg ? { configFile: ctx.configFile } : { concurrency: 2, ...ctx.scenario.params }),
      ...(ctx.pg ? { ledger: { kind: 'postgres', host: '127.0.0.1', port: ctx.pg.port, user: 'postgres', database: DATABASE } } : {}),
      scanMs: ctx.scenario.scanMs,
      reviewMs: ctx.scenario.reviewMs,
      logStalled: ctx.scenario.logStalled ?? false,
      ...extra,
    };
    const spawnedAt = Date.now();
    const child = track(
      spawn(process.execPath, [join(HERE, 'worker.mjs'), JSON.stringify(config)], {
        cwd: HERE,
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
      `worker ${index}`,
    );
    const worker = { index, child, pid: child.pid, spawnedAt, events: [] };
    this.list.push(worker);
    const stdoutFile = join(ctx.harnessDir, `worker-${index}.stdout`);
    const stderrFile = join(ctx.harnessDir, `worker-${index}.stderr`);
    let buffer = '';
    child.stdout.on('data', (chunk) => {
      appendFileSync(stdoutFile, chunk);
      buffer += chunk.toString('utf8');
      let newline;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        if (line.trim() === '') continue;
        let event;
        try {
          event = JSON.parse(line);
        } catch {
          process.stderr.write(`harness: worker ${index} wrote a non-JSON line: ${line}\n`);
          continue;
        }
        event.worker = index;
        event.receivedAt = Date.now();
        worker.events.push(event);
        this.events.push(event);
        this.wake();
      }
    });
    child.stderr.on('data', (chunk) => appendFileSync(stderrFile, chunk));
    child.exited.then(() => this.wake());
    return worker;
  }

  wake() {
    for (const waiter of [...this.waiters]) {
      const found = this.events.find(waiter.predicate);
      if (found) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        clearTimeout(waiter.timer);
        waiter.resolve(found);
      }
    }
  }

  /** The first reported event (already seen or future) matching the predicate. */
  waitFor(what, predicate, timeoutMs) {
    const found = this.events.find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const waiter = { predicate, resolve };
      waiter.timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new HarnessError(`timed out after ${timeoutMs} ms waiting for ${what}; worker events so far:\n${this.events.map((e) => JSON.stringify(e)).join('\n')}`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  async kill(worker) {
    const killedAt = Date.now();
    worker.child.kill('SIGKILL');
    const exit = await worker.child.exited;
    if (exit.signal !== 'SIGKILL') {
      fail(`worker ${worker.index} (pid ${worker.pid}) did not die of SIGKILL: ${JSON.stringify(exit)}`);
    }
    worker.killedAt = killedAt;
    return killedAt;
  }

  /** Graceful stop (SIGTERM → worker.close()), SIGKILL after 10 s. */
  async stop(worker) {
    if (worker.child.exitCode !== null || worker.child.signalCode !== null) return;
    worker.child.kill('SIGTERM');
    const timeout = sleep(10_000).then(() => 'timeout');
    if ((await Promise.race([worker.child.exited, timeout])) === 'timeout') {
      process.stderr.write(`harness: worker ${worker.index} did not close within 10 s; SIGKILL\n`);
      worker.child.kill('SIGKILL');
      await worker.child.exited;
    }
    worker.stoppedAt = Date.now();
  }

  async stopAll() {
    await Promise.all(this.list.map((w) => this.stop(w)));
  }

  summary() {
    return this.list.map((w) => {
      const start = w.events.find((e) => e.ev === 'start');
      return {
        index: w.index,
        pid: w.pid,
        started_at: start ? start.at : null,
        killed_at: w.killedAt ?? null,
        stopped_at: w.stoppedAt ?? null,
      };
    });
  }
}

// ---------------------------------------------------------------- queue helpers

async function makeQueue(ctx) {
  const { Queue } = await import(ctx.bullmq.module);
  const queue = new Queue(QUEUE, { connection: { host: '127.0.0.1', port: ctx.port } });
  await queue.waitUntilReady();
  return queue;
}

async function seedApp(ctx) {
  const prs = [];
  for (let n = 4401; n <= 4430; n += 1) prs.push(`PR-${n}`);
  await ctx.redis.rpush('app:prs', ...prs);
}

function jobKey(id) {
  return `bull:${QUEUE}:${id}`;
}

async function readEvents(redis) {
  const entries = await redis.xrange(`bull:${QUEUE}:events`, '-', '+');
  return entries.map(([id, flat]) => {
    const fields = {};
    for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]] = String(flat[i + 1]);
    return { id, fields };
  });
}

const idMs = (id) => Number(id.split('-')[0]);

/** Kills a worker KILL_AFTER_MS after BullMQ activated the job (and no sooner than the round's
 * first ledger row is written: committed, for PostgreSQL), checking the kill came before the
 * first possible lock renewal (processedOn + lockRenewTime / 2). */
async function killAfterActivation(ctx, workers, worker, active) {
  const { lockDuration } = ctx.scenario.params;
  const renewEarliest = active.processedOn + lockDuration / 4;
  const hashProcessedOn = Number(await ctx.redis.hget(jobKey(active.jobId), 'processedOn'));
  await workers.waitFor(
    `the round_started ledger row of ${active.jobId} by worker ${worker.index} (before the first possible lock renewal)`,
    (e) => e.worker === worker.index && e.ev === 'row' && e.event === 'round_started' && e.jobId === active.jobId,
    Math.max(0, renewEarliest - Date.now()),
  );
  const wait = active.processedOn + KILL_AFTER_MS - Date.now();
  if (wait > 0) await sleep(wait);
  const killedAt = await workers.kill(worker);
  const pttl = await ctx.redis.pttl(`${jobKey(active.jobId)}:lock`);
  const checkedAt = Date.now();
  const lockToken = await ctx.redis.get(`${jobKey(active.jobId)}:lock`);
  // While the lock is held: the capture runs beside the scenario (not blocking it).
  const captured = ctx.capture ? runCapture(ctx, 'capture-dead') : null;
  if (killedAt >= renewEarliest) {
    fail(`the kill came ${killedAt - active.processedOn} ms after activation, not before the first possible renewal (${lockDuration / 4} ms): the machine is too slow for this scenario`);
  }
  if (pttl <= 0) {
    fail(`after the kill the lock of ${active.jobId} has PTTL ${pttl}: expected it to be held`);
  }
  return {
    processedOn: hashProcessedOn,
    killedAt,
    lockPttlAfterKill: pttl,
    lockExpiresAt: checkedAt + pttl,
    lockToken,
    captured,
  };
}

// ---------------------------------------------------------------- scenarios

async function stalledScenario(ctx, workers) {
  const { every } = ctx.scenario;
  const w1 = workers.start();
  await workers.waitFor('worker 1 ready', (e) => e.worker === 1 && e.ev === 'ready', 15_000);
  const queue = await makeQueue(ctx);
  await queue.upsertJobScheduler(SWEEP, { every }, { name: SWEEP, data: {} });

  // Round 1 runs cleanly; round 2 is the one we kill.
  const first = await workers.waitFor('the first round to become active', (e) => e.ev === 'active', 10_000);
  const second = await workers.waitFor(
    'the second round to become active',
    (e) => e.ev === 'active' && e.jobId !== first.jobId,
    every + 10_000,
  );
  const killed = await killAfterActivation(ctx, workers, w1, second);
  const w2 = workers.start();
  const w2Start = await workers.waitFor('worker 2 start', (e) => e.worker === w2.index && e.ev === 'start', 10_000);

  // BullMQ recovers the job itself (stalled check) and worker 2 re-runs it; the next regular round
  // starts meanwhile.
  const rerun = await workers.waitFor(
    'the re-run of the stalled job',
    (e) => e.worker === w2.index && e.ev === 'active' && e.jobId === second.jobId,
    ctx.scenario.params.lockDuration + 3 * ctx.scenario.params.stalledInterval + 5000,
  );
  const rerunProcessedOn = Number(await ctx.redis.hget(jobKey(second.jobId), 'processedOn'));
  const next = await workers.waitFor(
    'the next regular round',
    (e) => e.ev === 'active' && e.jobId !== first.jobId && e.jobId !== second.jobId,
    every + 10_000,
  );
  const rerunProcessor = await workers.waitFor('the re-run round to start', (e) => e.ev === 'processor' && e.jobId === second.jobId && e.worker === w2.index, 5000);
  const rerunFinished = await workers.waitFor('the re-run round to finish', (e) => e.ev === 'finished' && e.jobId === second.jobId, 20_000);
  const nextFinished = await workers.waitFor('the next round to finish', (e) => e.ev === 'finished' && e.jobId === next.jobId, 20_000);
  await workers.stopAll();
  await queue.close();

  const events = await readEvents(ctx.redis);
  const ofJob = (id, kind) => events.filter((e) => e.fields.jobId === id && e.fields.event === kind);
  const activations = ofJob(second.jobId, 'active');
  const stalledEvents = ofJob(second.jobId, 'stalled');
  if (activations.length !== 2) fail(`expected 2 active events for ${second.jobId} in the stream, found ${activations.length}`);
  if (stalledEvents.length !== 1) fail(`expected 1 stalled event for ${second.jobId} in the stream, found ${stalledEvents.length}`);

  // Selections by round: the re-run and the next round must have taken the same PR.
  const selections = workers.events.filter((e) => e.ev === 'selected');
  const byItem = new Map();
  for (const s of selections) byItem.set(s.item, [...(byItem.get(s.item) ?? []), s]);
  const twice = [...byItem.entries()].filter(([, list]) => list.length > 1);
  const rerunRun = rerunFinished.runId;
  const nextRun = nextFinished.runId;
  const dupA = selections.find((s) => s.runId === rerunRun);
  const dupB = selections.find((s) => s.runId === nextRun);
  if (!dupA || !dupB || dupA.item !== dupB.item) {
    fail(`the re-run (${rerunRun}) and the next round (${nextRun}) did not select the same PR: ${JSON.stringify(selections)}`);
  }
  const [a, b] = dupA.at <= dupB.at ? [dupA, dupB] : [dupB, dupA];
  const nextStart = workers.events.find((e) => e.ev === 'processor' && e.jobId === next.jobId);
  if (!(rerunProcessor.at < nextStart.at && nextStart.at < rerunFinished.at)) {
    fail(`the next round did not start while the re-run was running: re-run ${rerunProcessor.at}..${rerunFinished.at}, next ${nextStart.at}`);
  }
  const reviews = (await ctx.redis.lrange('app:reviews', 0, -1)).map((r) => JSON.parse(r));
  const killedRun = workers.events.find((e) => e.ev === 'marked-failed' && e.jobId === second.jobId);
  return {
    job_id: second.jobId,
    job_name: second.name,
    first_job_id: first.jobId,
    activated_at: killed.processedOn,
    // The same activation on Redis' clock (the stream entry), beside the worker's `processedOn`.
    activated_event_at: idMs(activations[0].id),
    active_logged_at: second.at,
    killed_at: killed.killedAt,
    killed_pid: w1.pid,
    lock_pttl_after_kill: killed.lockPttlAfterKill,
    lock_expires_at: killed.lockExpiresAt,
    lock_token_after_kill: killed.lockToken,
    ...(killed.captured ? { capture_dead: await killed.captured } : {}),
    restart_at: w2Start.at,
    restart_pid: w2.pid,
    stalled_event_at: idMs(stalledEvents[0].id),
    stalled_event_id: stalledEvents[0].id,
    expiry_to_stalled_ms: idMs(stalledEvents[0].id) - killed.lockExpiresAt,
    rerun_at: idMs(activations[1].id),
    rerun_event_id: activations[1].id,
    rerun_processed_on: rerunProcessedOn,
    rerun_logged_at: rerun.at,
    run_id: killedRun ? killedRun.runId : null,
    run_marked_failed_at: killedRun ? killedRun.at : null,
    rerun_run_id: rerunRun,
    rerun_started_at: rerunProcessor.at,
    rerun_finished_at: rerunFinished.at,
    next_job_id: next.jobId,
    next_run_id: nextRun,
    next_activated_at: next.processedOn,
    next_started_at: nextStart.at,
    next_finished_at: nextFinished.at,
    duplicate_item: a.item,
    duplicate_run_a: a.runId,
    duplicate_run_b: b.runId,
    duplicate_selected_a_at: a.at,
    duplicate_selected_b_at: b.at,
    duplicate_delta_ms: b.at - a.at,
    duplicate_effects_posted: reviews.filter((r) => r.item === a.item).length,
    items_selected_twice: twice.map(([item]) => item),
  };
}

async function stalledLimitScenario(ctx, workers) {
  const name = 'pr-review-backfill';
  const w1 = workers.start();
  await workers.waitFor('worker 1 ready', (e) => e.worker === 1 && e.ev === 'ready', 15_000);
  const queue = await makeQueue(ctx);
  // A long round: every run of the processor is killed during its scan.
  const job = await queue.add(name, { scanMs: 30_000, reviewMs: 1000 });
  const jobId = job.id;
  const { lockDuration, stalledInterval } = ctx.scenario.params;
  const recoverWithin = lockDuration + 3 * stalledInterval + 5000;

  const active1 = await workers.waitFor('the job to become active', (e) => e.ev === 'active' && e.jobId === jobId, 10_000);
  const kill1 = await killAfterActivation(ctx, workers, w1, active1);
  const w2 = workers.start();
  const w2Start = await workers.waitFor('worker 2 start', (e) => e.worker === w2.index && e.ev === 'start', 10_000);

  const active2 = await workers.waitFor('the job to become active again (worker 2)', (e) => e.worker === w2.index && e.ev === 'active' && e.jobId === jobId, recoverWithin);
  await workers.waitFor('worker 2 to call the processor', (e) => e.worker === w2.index && e.ev === 'processor' && e.jobId === jobId, 5000);
  const kill2 = await killAfterActivation(ctx, workers, w2, active2);
  const w3 = workers.start();
  const w3Start = await workers.waitFor('worker 3 start', (e) => e.worker === w3.index && e.ev === 'start', 10_000);

  // BullMQ moves the job back once more, with the deferred failure; worker 3 takes it and fails it.
  const deadline = Date.now() + recoverWithin;
  let hash;
  for (;;) {
    hash = await ctx.redis.hgetall(jobKey(jobId));
    if (hash.finishedOn) break;
    if (Date.now() > deadline) fail(`job ${jobId} was not failed within ${recoverWithin} ms after the second kill: ${JSON.stringify(hash)}`);
    await sleep(50);
  }
  // Let worker 3 settle (a processor call would show now), then stop it.
  await sleep(500);
  await workers.stopAll();
  await queue.close();

  const failedIn = await ctx.redis.zscore(`bull:${QUEUE}:failed`, jobId);
  if (failedIn === null) fail(`job ${jobId} is not in the failed set`);
  const events = await readEvents(ctx.redis);
  const ofJob = (kind) => events.filter((e) => e.fields.jobId === jobId && e.fields.event === kind);
  const activations = ofJob('active');
  const stalled = ofJob('stalled');
  const failed = ofJob('failed');
  if (activations.length !== 3) fail(`expected 3 active events for job ${jobId}, found ${activations.length}`);
  if (stalled.length !== 2) fail(`expected 2 stalled events for job ${jobId}, found ${stalled.length}`);
  if (failed.length !== 1) fail(`expected 1 failed event for job ${jobId}, found ${failed.length}`);
  const calls = workers.events.filter((e) => e.ev === 'processor' && e.jobId === jobId);
  const w3Calls = calls.filter((e) => e.worker === w3.index);
  if (w3Calls.length !== 0) fail(`worker 3 called the processor for job ${jobId}: ${JSON.stringify(w3Calls)}`);
  const w3Active = workers.events.find((e) => e.worker === w3.index && e.ev === 'active' && e.jobId === jobId);

  return {
    job_id: jobId,
    job_name: name,
    activated_at: kill1.processedOn,
    killed_at: kill1.killedAt,
    killed_pid: w1.pid,
    lock_expires_at: kill1.lockExpiresAt,
    restart_at: w2Start.at,
    restart_pid: w2.pid,
    stalled_event_at: idMs(stalled[0].id),
    expiry_to_stalled_ms: idMs(stalled[0].id) - kill1.lockExpiresAt,
    second_activated_at: kill2.processedOn,
    second_killed_at: kill2.killedAt,
    second_killed_pid: w2.pid,
    second_lock_expires_at: kill2.lockExpiresAt,
    second_restart_at: w3Start.at,
    second_restart_pid: w3.pid,
    second_stalled_event_at: idMs(stalled[1].id),
    // The app's own `stalled` lines (only with `logStalled`), and the stream's entries they follow.
    stalled_lines_at: workers.events.filter((e) => e.ev === 'stalled' && e.jobId === jobId).map((e) => e.at),
    stalled_event_ids: stalled.map((e) => e.id),
    active_event_ids: activations.map((e) => e.id),
    second_expiry_to_stalled_ms: idMs(stalled[1].id) - kill2.lockExpiresAt,
    third_activated_at: idMs(activations[2].id),
    third_active_logged: Boolean(w3Active),
    failed_at: Number(hash.finishedOn),
    failed_event_at: idMs(failed[0].id),
    failed_reason: hash.failedReason,
    deferred_failure: hash.defa ?? null,
    stalled_counter: Number(hash.stc ?? 0),
    attempts_started: Number(hash.ats ?? 0),
    attempts_made: Number(hash.atm ?? 0),
    processor_calls: calls.map((e) => ({ pid: e.pid, at: e.at })),
    processor_called_on_failure: false,
  };
}

async function replicaDiedScenario(ctx, workers) {
  const { every } = ctx.scenario;
  const { lockDuration, stalledInterval } = ctx.scenario.params;
  const replicas = [workers.start(), workers.start()];
  for (const replica of replicas) {
    await workers.waitFor(`replica ${replica.index} ready`, (e) => e.worker === replica.index && e.ev === 'ready', 15_000);
  }
  const queue = await makeQueue(ctx);
  await queue.upsertJobScheduler(SWEEP, { every }, { name: SWEEP, data: {} });

  // Round 1 runs cleanly; round 2's replica dies once the round has selected its PR.
  const first = await workers.waitFor('the first round to become active', (e) => e.ev === 'active', 10_000);
  const second = await workers.waitFor(
    'the second round to become active',
    (e) => e.ev === 'active' && e.jobId !== first.jobId,
    every + 10_000,
  );
  const victim = replicas.find((r) => r.index === second.worker);
  const survivor = replicas.find((r) => r.index !== second.worker);
  const selected = await workers.waitFor(
    'the second round to select its PR',
    (e) => e.worker === victim.index && e.ev === 'selected' && e.jobId === second.jobId,
    5000,
  );
  const processedOn = Number(await ctx.redis.hget(jobKey(second.jobId), 'processedOn'));
  const killedAt = await workers.kill(victim);
  const pttl = await ctx.redis.pttl(`${jobKey(second.jobId)}:lock`);
  const lockExpiresAt = Date.now() + pttl;
  if (killedAt >= processedOn + lockDuration / 4) {
    fail(`the kill came ${killedAt - processedOn} ms after activation, not before the first possible renewal (${lockDuration / 4} ms): the machine is too slow for this scenario`);
  }
  if (pttl <= 0) fail(`after the kill the lock of ${second.jobId} has PTTL ${pttl}: expected it to be held`);

  const rerun = await workers.waitFor(
    'the other replica to re-run the stalled round',
    (e) => e.worker === survivor.index && e.ev === 'active' && e.jobId === second.jobId,
    lockDuration + 3 * stalledInterval + 5000,
  );
  const rerunFinished = await workers.waitFor('the re-run to finish', (e) => e.ev === 'finished' && e.jobId === second.jobId, 20_000);
  const next = await workers.waitFor(
    'the next regular round to finish',
    (e) => e.ev === 'finished' && e.jobId !== first.jobId && e.jobId !== second.jobId,
    every + 10_000,
  );
  await workers.stopAll();
  await queue.close();

  const events = await readEvents(ctx.redis);
  const ofJob = (kind) => events.filter((e) => e.fields.jobId === second.jobId && e.fields.event === kind);
  const activations = ofJob('active');
  const stalled = ofJob('stalled');
  if (activations.length !== 2) fail(`expected 2 active events for ${second.jobId} in the stream, found ${activations.length}`);
  if (stalled.length !== 1) fail(`expected 1 stalled event for ${second.jobId} in the stream, found ${stalled.length}`);
  if (workers.events.some((e) => e.ev === 'marked-failed')) fail('a process marked a run failed: no process should have started after the kill');
  // The dead run's rows, as the ledger has them: a start and a selection, no end.
  const rows = readFileSync(join(ctx.outdir, 'ledger.csv'), 'utf8')
    .split('\n')
    .filter((line) => line.split(',')[1] === selected.runId);
  if (rows.some((row) => /round_(finished|failed)/.test(row))) fail(`the dead run ${selected.runId} has an end row: ${rows.join(' | ')}`);
  return {
    job_id: second.jobId,
    first_job_id: first.jobId,
    activated_at: processedOn,
    dead_run_id: selected.runId,
    dead_run_rows: rows.length,
    dead_selected_item: selected.item,
    dead_selected_at: selected.at,
    killed_at: killedAt,
    killed_pid: victim.pid,
    lock_expires_at: lockExpiresAt,
    stalled_event_at: idMs(stalled[0].id),
    stalled_event_id: stalled[0].id,
    rerun_at: idMs(activations[1].id),
    rerun_event_id: activations[1].id,
    rerun_logged_at: rerun.at,
    rerun_pid: survivor.pid,
    rerun_run_id: rerunFinished.runId,
    rerun_finished_at: rerunFinished.at,
    next_run_id: next.runId,
    next_finished_at: next.at,
  };
}

async function cleanScenario(ctx, workers) {
  const { every } = ctx.scenario;
  const w1 = workers.start();
  await workers.waitFor('worker 1 ready', (e) => e.worker === 1 && e.ev === 'ready', 15_000);
  const queue = await makeQueue(ctx);
  await queue.upsertJobScheduler(SWEEP, { every }, { name: SWEEP, data: {} });

  const finished = (n) => workers.waitFor(`${n} finished rounds`, () => workers.events.filter((e) => e.ev === 'finished').length >= n, n * every + 10_000);
  await finished(2);
  // A deploy between rounds: graceful stop, new process.
  await workers.stop(w1);
  const w2 = workers.start();
  await workers.waitFor('worker 2 ready', (e) => e.worker === w2.index && e.ev === 'ready', 15_000);
  await finished(4);
  await workers.stopAll();
  await queue.close();

  const rounds = workers.events.filter((e) => e.ev === 'finished').map((e) => e.runId);
  const starts = workers.events.filter((e) => e.ev === 'processor');
  const ends = workers.events.filter((e) => e.ev === 'finished');
  for (let i = 1; i < starts.length; i += 1) {
    const previousEnd = ends.find((e) => e.jobId === starts[i - 1].jobId);
    if (previousEnd && previousEnd.at > starts[i].at) fail(`rounds overlapped: ${JSON.stringify(starts)} ${JSON.stringify(ends)}`);
  }
  const items = workers.events.filter((e) => e.ev === 'selected').map((e) => e.item);
  if (new Set(items).size !== items.length) fail(`an item was selected twice: ${items}`);
  return {
    run_ids: rounds,
    job_ids: [...new Set(starts.map((e) => e.jobId))],
    items_selected: items,
    restart_at: workers.events.find((e) => e.worker === w2.index && e.ev === 'start').at,
    restart_pid: w2.pid,
  };
}

// ---------------------------------------------------------------- export

/** Records when a stalled check was effective: only then does BullMQ's script SET the queue's
 * `stalled-check` key (PX stalledInterval); a check that finds the key still set does nothing. */
async function watchStalledChecks(ctx) {
  const { default: IORedis } = await import('ioredis');
  ctx.stalledChecksAt = [];
  await ctx.redis.config('SET', 'notify-keyspace-events', 'K$');
  const subscriber = new IORedis({ host: '127.0.0.1', port: ctx.port, maxRetriesPerRequest: 0, retryStrategy: () => null });
  subscriber.on('error', () => {});
  subscriber.on('message', (_channel, message) => {
    if (message === 'set') ctx.stalledChecksAt.push(Date.now());
  });
  await subscriber.subscribe(`__keyspace@0__:bull:${QUEUE}:stalled-check`);
  ctx.subscriber = subscriber;
}

/** Stalled-check attempts seen by MONITOR: the script first tests the `stalled-check` key and,
 * only when it is gone, sets it again (PX stalledInterval) and does the check. */
function stalledChecks(monitorLog) {
  const checks = [];
  for (const line of monitorLog.split('\n')) {
    const match = /^(\d+)\.(\d{6}) \[\d+ lua\] "(exists|set)" "bull:[^"]*:stalled-check"/i.exec(line);
    if (!match) continue;
    const at = Number(match[1]) * 1000 + Math.floor(Number(match[2]) / 1000);
    if (match[3].toLowerCase() === 'exists') checks.push({ at, effective: false });
    else if (checks.length > 0) checks[checks.length - 1].effective = true;
  }
  return checks;
}

/** Runs `leasetrace capture` on the harness's Redis into OUTDIR/<folder>; resolves with when it
 * ran (epoch ms), or fails the harness with what it said. */
function runCapture(ctx, folder) {
  const url = `redis://127.0.0.1:${ctx.port}`;
  const startedAt = Date.now();
  return new Promise((resolve) => {
    const child = track(
      spawn(ctx.capture, ['capture', '--redis', url, '--queue', QUEUE, join(ctx.outdir, folder)], { stdio: ['ignore', 'pipe', 'pipe'] }),
      `leasetrace capture ${folder}`,
    );
    let said = '';
    child.stdout.on('data', (chunk) => { said += chunk; });
    child.stderr.on('data', (chunk) => { said += chunk; });
    child.on('exit', (code) => {
      writeFileSync(join(ctx.harnessDir, `${folder}.out`), said);
      if (code !== 0) fail(`leasetrace capture into ${folder} exited with ${code}:\n${said}`);
      resolve({ folder, started_at: startedAt, finished_at: Date.now() });
    });
  });
}

async function exportEvidence(ctx, observedScenario) {
  const { outdir, redis, port, scenario } = ctx;
  // The capture reads what the exports below read, at the same moment.
  const captured = ctx.capture ? await runCapture(ctx, 'capture') : null;
  const events = await readEvents(redis);
  writeFileSync(join(outdir, 'events.json'), `${JSON.stringify(events, null, 2)}\n`);
  // redis-cli prints raw values, one per line, when its stdout is not a terminal.
  const text = execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), 'XRANGE', `bull:${QUEUE}:events`, '-', '+'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  writeFileSync(join(outdir, 'events.txt'), text);

  const jobs = [];
  let cursor = '0';
  const keys = new Set();
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `bull:${QUEUE}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of batch) keys.add(key);
  } while (cursor !== '0');
  for (const key of [...keys].sort()) {
    if ((await redis.type(key)) !== 'hash') continue;
    const fields = await redis.hgetall(key);
    // Job hashes: a name and a creation timestamp. The job scheduler's own hash
    // (bull:<queue>:repeat:<scheduler id>) also has a name but no timestamp.
    if (fields.name === undefined || fields.timestamp === undefined) continue;
    jobs.push({ key, fields });
  }
  jobs.sort((x, y) => Number(x.fields.timestamp) - Number(y.fields.timestamp) || x.key.localeCompare(y.key));
  writeFileSync(join(outdir, 'jobs.jsonl'), jobs.map((j) => JSON.stringify(j)).join('\n') + '\n');

  const { lockDuration, stalledInterval, maxStalledCount } = scenario.params;
  writeFileSync(
    join(outdir, 'bullmq.json'),
    `${JSON.stringify({ lockDuration, stalledInterval, maxStalledCount, version: ctx.bullmq.version }, null, 2)}\n`,
  );
  let ledger;
  if (ctx.pg) {
    ledger = await exportPgLedger(ctx);
    for (const { file, manifest } of ledger.exports) {
      writeFileSync(join(outdir, manifest), caseManifest(ctx, pgLedgerSource(file, ledger), 'worker-config.json'));
    }
  } else {
    const rows = readFileSync(join(outdir, 'ledger.csv'), 'utf8').trimEnd().split('\n').length - 1;
    ledger = { store: 'csv', file: 'ledger.csv', rows };
    writeFileSync(join(outdir, 'leasetrace.toml'), caseManifest(ctx, ['kind = "ledger"', 'path = "ledger.csv"', 'tz = "UTC"'], 'bullmq.json'));
  }
  const redisVersion = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1] ?? null;
  let monitored = {};
  if (ctx.monitor) {
    ctx.monitor.kill('SIGTERM');
    await ctx.monitor.exited;
    monitored = { stalled_check_attempts: stalledChecks(readFileSync(join(ctx.harnessDir, 'monitor.log'), 'utf8')) };
  }
  const observed = {
    scenario: ctx.name,
    queue: QUEUE,
    bullmq_version: ctx.bullmq.version,
    bullmq_module: ctx.bullmq.module,
    redis_version: redisVersion,
    params: { ...scenario.params, every: scenario.every ?? null, scan_ms: scenario.scanMs ?? null, review_ms: scenario.reviewMs ?? null, kill_after_ms: KILL_AFTER_MS },
    started_at: ctx.startedAt,
    finished_at: Date.now(),
    workers: ctx.workers.summary(),
    stalled_checks_at: ctx.stalledChecksAt,
    ledger,
    ...(ctx.configFile ? { worker_config: ctx.workerConfig } : {}),
    ...observedScenario,
    ...monitored,
    ...(captured ? { capture: captured } : {}),
  };
  writeFileSync(join(outdir, 'observed.json'), `${JSON.stringify(observed, null, 2)}\n`);
  return observed;
}

/** The case manifest, around the given ledger source's lines, with the given parameters file: the
 * flat bullmq.json, or the app's own nested config as it is (no `params_at`: the place of the
 * parameters in it is unambiguous, and leasetrace has to find it). */
function caseManifest(ctx, ledgerSource, paramsFile) {
  return [
    `# Staged by tests/e2e/harness.mjs with real BullMQ ${ctx.bullmq.version} workers and Redis${ctx.pg ? ', and PostgreSQL' : ''}.`,
    'display_tz = "Asia/Seoul"',
    '',
    '[[sources]]',
    ...ledgerSource,
    '',
    '[[sources]]',
    'kind = "log"',
    'path = "server.log"',
    'tz = "Asia/Seoul"',
    '',
    '[[sources]]',
    'kind = "bullmq-events"',
    'path = "events.json"',
    `queue = "${QUEUE}"`,
    '',
    '[[sources]]',
    'kind = "bullmq-jobs"',
    'path = "jobs.jsonl"',
    '',
    '[[sources]]',
    'kind = "bullmq-params"',
    `path = "${paramsFile}"`,
    '',
  ].join('\n');
}

// ---------------------------------------------------------------- the PostgreSQL ledger

/** The app's config file, as it is deployed: the worker options of each queue nested under it,
 * next to everything else the app is configured with. The workers read their settings from it. */
function writeWorkerConfig(ctx) {
  const { lockDuration, stalledInterval, maxStalledCount } = ctx.scenario.params;
  const config = {
    app: { name: 'review-bot', version: '3.18.2', env: 'e2e' },
    bullmq_version: ctx.bullmq.version,
    redis: { host: '127.0.0.1', port: ctx.port, maxRetriesPerRequest: null },
    ledger: { driver: 'postgres', database: DATABASE, table: TABLE },
    queues: {
      [QUEUE]: {
        ...(ctx.scenario.every ? { scheduler: { id: SWEEP, every: ctx.scenario.every } } : {}),
        worker: { concurrency: 2, lockDuration, stalledInterval, maxStalledCount },
      },
    },
  };
  ctx.configFile = join(ctx.outdir, 'worker-config.json');
  // Where the workers take their options from, as a JSON pointer (observed.json).
  ctx.workerConfig = { file: 'worker-config.json', params_at: `/queues/${QUEUE}/worker`, version_at: '/bullmq_version' };
  writeFileSync(ctx.configFile, `${JSON.stringify(config, null, 2)}\n`);
}

/** Exports the table as a responder would, with psql's client-side `\copy ... csv header`: once in
 * the session zone Asia/Seoul (psql prints `+09`), once in UTC (`+00`), in the default DateStyle.
 * Also reads the rows back (epoch microseconds, run, job, step, item) for observed.json. */
async function exportPgLedger(ctx) {
  const select = `select * from ${TABLE} order by id`;
  const exports = [
    { file: 'ledger.csv', manifest: 'leasetrace.toml', pgtz: 'Asia/Seoul' },
    { file: 'ledger-utc.csv', manifest: 'leasetrace-utc.toml', pgtz: 'UTC' },
  ];
  for (const e of exports) {
    const path = join(ctx.outdir, e.file);
    if (path.includes("'")) fail(`cannot \\copy to a path with a quote: ${path}`);
    ctx.pg.psql(`\\copy (${select}) to '${path}' csv header`, { database: DATABASE, env: { PGTZ: e.pgtz, PGDATESTYLE: 'ISO, MDY' } });
    const [header, first] = readFileSync(path, 'utf8').split('\n');
    Object.assign(e, { header, first_row: first });
  }
  const { default: pg } = await import('pg');
  const client = new pg.Client({ host: '127.0.0.1', port: ctx.pg.port, user: 'postgres', database: DATABASE });
  await client.connect();
  // Epoch microseconds, as PostgreSQL keeps them (int8 arrives as a string; < 2^53, exact).
  const { rows } = await client.query(
    `select id::int as id, (extract(epoch from ts_utc) * 1000000)::int8 as at_us, (extract(epoch from due_at) * 1000000)::int8 as due_us,
            execution_id, bull_id, step, subject from ${TABLE} order by id`,
  );
  await client.end();
  return {
    store: 'postgres',
    postgres_version: ctx.pg.version,
    database: DATABASE,
    table: TABLE,
    rows: rows.length,
    row_list: rows.map((r) => ({
      id: r.id,
      at_us: Number(r.at_us),
      due_us: r.due_us === null ? null : Number(r.due_us),
      run_id: r.execution_id,
      job_id: r.bull_id,
      step: r.step,
      item: r.subject,
    })),
    columns: COLUMNS,
    steps: Object.fromEntries(Object.values(STEPS).map((s) => [s.step, s.kind])),
    exports,
  };
}

/** The ledger source of the manifest: the app's columns and step words mapped. No `tz`: every
 * timestamptz psql writes carries its offset. */
function pgLedgerSource(file, ledger) {
  const toml = (map) => `{ ${Object.entries(map).map(([k, v]) => `${/^[a-z_]+$/.test(k) ? k : JSON.stringify(k)} = ${JSON.stringify(v)}`).join(', ')} }`;
  return [
    `# psql \\copy of ${ledger.database}.${ledger.table}, csv header`,
    'kind = "ledger"',
    `path = "${file}"`,
    `columns = ${toml(ledger.columns)}`,
    `events = ${toml(ledger.steps)}`,
  ];
}

// ---------------------------------------------------------------- main

function parseArgs(argv) {
  const usage = `usage: node harness.mjs ${Object.keys(SCENARIOS).join('|')} OUTDIR [--bullmq MAJOR] [--ledger csv|postgres] [--capture LEASETRACE]`;
  const positional = [];
  const options = { bullmq: '5', ledger: 'csv', capture: null };
  for (let i = 0; i < argv.length; i += 1) {
    const flag = /^--(bullmq|ledger|capture)$/.exec(argv[i]);
    if (flag && i + 1 < argv.length) {
      options[flag[1]] = argv[i + 1];
      i += 1;
    } else if (argv[i].startsWith('--')) {
      return { usage };
    } else {
      positional.push(argv[i]);
    }
  }
  const [name, outArg] = positional;
  if (!SCENARIOS[name] || !outArg || positional.length !== 2 || !['csv', 'postgres'].includes(options.ledger) || !/^\d+$/.test(options.bullmq)) {
    return { usage };
  }
  return { name, outArg, ...options };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.usage) {
    process.stderr.write(`${args.usage}\n`);
    process.exit(2);
  }
  const { name, outArg } = args;
  const scenario = SCENARIOS[name];
  const bullmq = pinnedBullmq(args.bullmq);
  const outdir = resolve(outArg);
  mkdirSync(outdir, { recursive: true });
  const harnessDir = join(outdir, 'harness');
  mkdirSync(harnessDir, { recursive: true });
  if (args.ledger === 'csv') {
    writeFileSync(join(outdir, 'ledger.csv'), 'at,run_id,job_id,slot,sweep,event,item,worker,status,detail\n');
  }
  writeFileSync(join(outdir, 'server.log'), '');
  redisDir = mkdtempSync(join(tmpdir(), 'leasetrace-e2e-redis-'));
  const ctx = { name, scenario, bullmq, outdir, harnessDir, capture: args.capture, startedAt: Date.now() };
  let redisInfo;
  try {
    redisInfo = await startRedis(redisDir);
    ctx.port = redisInfo.port;
    ctx.redis = redisInfo.client;
    if (args.ledger === 'postgres') {
      pgDir = mkdtempSync(join(tmpdir(), 'leasetrace-e2e-pg-'));
      try {
        ctx.pg = await startPostgres(pgDir, { track, logFile: join(harnessDir, 'postgres.log'), sleep });
      } catch (error) {
        fail(error.message);
      }
      ctx.pg.psql(`create database ${DATABASE}`);
      ctx.pg.psql(DDL, { database: DATABASE });
      writeWorkerConfig(ctx);
    }
    await watchStalledChecks(ctx);
    if (process.env.LEASETRACE_E2E_MONITOR) {
      const fd = openSync(join(harnessDir, 'monitor.log'), 'w');
      ctx.monitor = track(
        spawn('redis-cli', ['-h', '127.0.0.1', '-p', String(ctx.port), 'monitor'], { stdio: ['ignore', fd, 'ignore'] }),
        'redis-cli monitor',
      );
      closeSync(fd);
      await sleep(200);
    }
    await seedApp(ctx);
    ctx.workers = new Workers(ctx);
    const observedScenario = await scenario.run(ctx, ctx.workers);
    await ctx.workers.stopAll();
    const observed = await exportEvidence(ctx, observedScenario);
    process.stdout.write(`${JSON.stringify({ scenario: name, bullmq: bullmq.version, ledger: args.ledger, outdir, seconds: (observed.finished_at - observed.started_at) / 1000 })}\n`);
  } finally {
    // PostgreSQL first, with a clean (fast) shutdown, while its watchdog still runs.
    await ctx.pg?.stop();
    killAll();
    ctx.subscriber?.disconnect();
    if (redisInfo) {
      redisInfo.client.disconnect();
      try {
        writeFileSync(join(harnessDir, 'redis.log'), readFileSync(redisInfo.logFile));
      } catch {
        // no log
      }
    }
    for (const dir of [redisDir, pgDir]) if (dir) rmSync(dir, { recursive: true, force: true });
    redisDir = null;
    pgDir = null;
  }
}

const overall = setTimeout(() => {
  process.stderr.write(`harness: gave up after ${OVERALL_TIMEOUT_MS / 1000} s\n`);
  killAll();
  process.exit(1);
}, OVERALL_TIMEOUT_MS);

main()
  .then(() => {
    clearTimeout(overall);
    process.exit(0);
  })
  .catch((error) => {
    process.stderr.write(`harness: ${error instanceof HarnessError ? error.message : error?.stack ?? error}\n`);
    killAll();
    process.exit(1);
  });
