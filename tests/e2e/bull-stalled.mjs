// Legacy Bull (npm `bull` 4.16.5, or 3.23.3 with LEASETRACE_E2E_BULL=bull3) on a Redis of its own, three incidents at once on three queues,
// with `redis-cli MONITOR` recording every command the workers sent:
//
//   node bull-stalled.mjs OUT_DIR
//
// writes OUT_DIR/monitor.txt (MONITOR's output), jobs.txt (a shell loop of `redis-cli HGETALL` over
// every key, as a user pastes it), jobs-<queue>.json (Bull's own job JSON, `queue.getJobs`),
// listener.log (what each worker's listeners logged), bull.json (the settings the workers ran
// with, as a package manifest's dependency and a queue's `settings`) and truth.json (what the
// harness and the workers saw, epoch ms).
//
// - `review` (job pr-101), a stalled rerun: worker-a's process is frozen (SIGSTOP) just after it
//   takes the job; worker-b's stalled check moves the job once its lock ran out and worker-b runs it
//   again; worker-a is thawed after worker-b completed, and its completion is refused (another
//   Queue instance, another lock token).
// - `notify` (job pr-202), the stall limit: worker-c and then worker-d are SIGKILLed while running
//   the job; worker-e's stalled check finds it stalled a second time (maxStalledCount 1) and fails
//   it at once: `job stalled more than allowable limit`.
// - `digest` (job pr-303), the shared token: worker-p (concurrency 2) is frozen while running the
//   job; watcher-q (a Queue that processes, paused locally, so that only its stalled check runs)
//   moves the job back to wait; worker-p is thawed, its second slot takes the job again under the
//   same Queue's token, and the first slot's late completion passes the token check.

import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The package the harness runs: `bull` (4.16.5), or `bull3` (npm:bull@3.23.3) when
// LEASETRACE_E2E_BULL=bull3; its version is read from its own package.json.
const BULL_PACKAGE = process.env.LEASETRACE_E2E_BULL || 'bull';
const BULL_VERSION = JSON.parse(readFileSync(new URL(`./node_modules/${BULL_PACKAGE}/package.json`, import.meta.url), 'utf8')).version;
const LOCK_MS = 2000;
const STALLED_INTERVAL_MS = 1000;
const MAX_STALLED = 1;
const STEPS = 15; // the processor's work: 15 steps of 100 ms, counted in steps so a frozen process finishes them after it is thawed
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function worker([name, port, queueName, mode, logFile]) {
  const { default: Queue } = await import(BULL_PACKAGE);
  const queue = new Queue(queueName, {
    redis: { host: '127.0.0.1', port: Number(port) },
    settings: { lockDuration: LOCK_MS, stalledInterval: STALLED_INTERVAL_MS, maxStalledCount: MAX_STALLED },
  });
  // The listener log: one line per event, as an application's listeners write them; the truth of
  // each line is the same clock reading (a file write can take milliseconds under load).
  let now = Date.now();
  const log = (level, text) => {
    now = Date.now();
    appendFileSync(logFile, `${new Date(now).toISOString()} ${level} [${name}] ${text}\n`);
  };
  const say = (fields) => process.stdout.write(`${JSON.stringify({ worker: name, queue: queueName, at: now, ...fields })}\n`);
  queue.on('active', (job) => {
    log('INFO', `job ${job.id} active queue=${queueName} worker=${name} attemptsMade=${job.attemptsMade}`);
    say({ active: job.id });
  });
  queue.on('completed', (job) => {
    log('INFO', `job ${job.id} completed queue=${queueName} worker=${name}`);
    say({ completed: job.id });
  });
  queue.on('failed', (job, err) => {
    log('WARN', `job ${job.id} failed queue=${queueName} worker=${name} reason="${err.message}"`);
    say({ failed: job.id, reason: err.message });
  });
  queue.on('stalled', (job) => {
    log('WARN', `job ${job.id} stalled queue=${queueName} worker=${name}`);
    say({ stalled: job.id });
  });
  queue.on('error', (err) => {
    log('ERROR', `queue=${queueName} worker=${name} ${err.message}`);
    say({ error: err.message });
  });
  if (mode === 'watch') await queue.pause(true);
  queue.process(mode === 'shared' ? 2 : 1, async (job) => {
    for (let step = 0; step < STEPS; step += 1) await sleep(100);
    return { reviewed: job.data.pr };
  });
  now = Date.now();
  say({ started: true });
  process.on('SIGTERM', async () => {
    await queue.close();
    process.exit(0);
  });
}

async function harness([outDir]) {
  const children = [];
  const track = (child) => {
    children.push(child);
    child.exited = new Promise((resolve) => child.on('exit', resolve));
    return child;
  };
  const dir = mkdtempSync(join(tmpdir(), 'bull-stalled-'));
  mkdirSync(outDir, { recursive: true });
  const logFile = join(outDir, 'listener.log');
  writeFileSync(logFile, '');
  const { startRedis } = await import('./redis.mjs');
  const redis = await startRedis(dir, { track, sleep });
  const truth = { bull: BULL_VERSION, lockDuration: LOCK_MS, stalledInterval: STALLED_INTERVAL_MS, maxStalledCount: MAX_STALLED, seen: [], signals: [] };
  const monitorFile = join(outDir, 'monitor.txt');
  const monitor = track(spawn('redis-cli', ['-p', String(redis.port), 'MONITOR'], { stdio: ['ignore', 'pipe', 'inherit'] }));
  monitor.stdout.pipe(createWriteStream(monitorFile));
  const spawnWorker = (name, queueName, mode = 'work') => {
    const child = track(spawn(process.execPath, [new URL(import.meta.url).pathname, '--worker', name, String(redis.port), queueName, mode, logFile], { stdio: ['ignore', 'pipe', 'inherit'] }));
    child.stdout.setEncoding('utf8');
    child.seen = [];
    child.label = name;
    let rest = '';
    child.stdout.on('data', (text) => {
      const lines = (rest + text).split('\n');
      rest = lines.pop();
      for (const line of lines) if (line.trim()) { const seen = JSON.parse(line); truth.seen.push(seen); child.seen.push(seen); }
    });
    return child;
  };
  const signal = (child, name) => {
    child.kill(name);
    truth.signals.push({ worker: child.label, signal: name, at: Date.now() });
  };
  const until = async (what, test, ms = 20000) => {
    const deadline = Date.now() + ms;
    while (!test()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}:\n${JSON.stringify(truth.seen, null, 1)}`);
      await sleep(20);
    }
  };
  const started = (child) => until(`${child.label} to start`, () => child.seen.some((s) => s.started));
  const { default: Queue } = await import(BULL_PACKAGE);
  const producer = (name) => new Queue(name, { redis: { host: '127.0.0.1', port: redis.port } });
  const queues = { review: producer('review'), notify: producer('notify'), digest: producer('digest') };

  const rerun = async () => {
    const a = spawnWorker('worker-a', 'review');
    await started(a);
    await queues.review.add({ pr: 'PR-101' }, { jobId: 'pr-101' });
    await until('worker-a to take pr-101', () => a.seen.some((s) => s.active === 'pr-101'));
    await sleep(200);
    signal(a, 'SIGSTOP');
    const b = spawnWorker('worker-b', 'review');
    await until('worker-b to complete the rerun', () => b.seen.some((s) => s.completed === 'pr-101'));
    signal(a, 'SIGCONT');
    await until('worker-a to be refused', () => a.seen.some((s) => s.error));
    return [a, b];
  };
  const limit = async () => {
    const c = spawnWorker('worker-c', 'notify');
    await started(c);
    await queues.notify.add({ pr: 'PR-202' }, { jobId: 'pr-202' });
    await until('worker-c to take pr-202', () => c.seen.some((s) => s.active === 'pr-202'));
    await sleep(200);
    signal(c, 'SIGKILL');
    const d = spawnWorker('worker-d', 'notify');
    await until('worker-d to take pr-202 again', () => d.seen.some((s) => s.active === 'pr-202'));
    await sleep(200);
    signal(d, 'SIGKILL');
    const e = spawnWorker('worker-e', 'notify');
    await until('worker-e to fail pr-202', () => e.seen.some((s) => s.failed === 'pr-202'));
    return [e];
  };
  const shared = async () => {
    const p = spawnWorker('worker-p', 'digest', 'shared');
    await started(p);
    await queues.digest.add({ pr: 'PR-303' }, { jobId: 'pr-303' });
    await until('worker-p to take pr-303', () => p.seen.some((s) => s.active === 'pr-303'));
    await sleep(200);
    signal(p, 'SIGSTOP');
    const q = spawnWorker('watcher-q', 'digest', 'watch');
    await until('watcher-q to move pr-303 back to wait', () => q.seen.some((s) => s.stalled === 'pr-303'));
    await sleep(300);
    signal(p, 'SIGCONT');
    // The first slot's late completion, then the second slot's end (refused or not).
    await until('worker-p to run pr-303 twice and finish', () => p.seen.filter((s) => s.active === 'pr-303').length === 2
      && p.seen.filter((s) => s.completed === 'pr-303' || s.error).length >= 2);
    return [p, q];
  };
  try {
    await sleep(300); // MONITOR attached before the first command of a worker
    const running = (await Promise.all([rerun(), limit(), shared()])).flat();
    await sleep(500);
    for (const child of running) if (child.exitCode === null) signal(child, 'SIGTERM');
    await Promise.all(running.map((child) => child.exited));
    for (const queue of Object.values(queues)) await queue.close();
    await sleep(200);
    // The job hashes as a user dumps them: every key, each HGETALL after its key (lists, sets and
    // strings answer WRONGTYPE), in a shell loop whose redis-cli writes to a file (no numbering).
    const dump = spawn('sh', ['-c', `for k in $(redis-cli -p ${redis.port} --scan --pattern 'bull:*' | sort); do echo "$k"; redis-cli -p ${redis.port} HGETALL "$k"; done`], { stdio: ['ignore', 'pipe', 'inherit'] });
    const chunks = [];
    dump.stdout.on('data', (chunk) => chunks.push(chunk));
    await new Promise((resolve) => dump.on('exit', resolve));
    writeFileSync(join(outDir, 'jobs.txt'), Buffer.concat(chunks));
    for (const name of Object.keys(queues)) {
      const queue = producer(name);
      const jobs = await queue.getJobs(['completed', 'failed', 'active', 'wait', 'delayed']);
      writeFileSync(join(outDir, `jobs-${name}.json`), `${JSON.stringify(jobs)}\n`);
      await queue.close();
    }
    signal(monitor, 'SIGTERM');
    await monitor.exited;
    // `leasetrace capture --bull` of each queue from the live Redis (LEASETRACE_BIN names the
    // binary), and once without --bull: an error that names it, nothing written.
    if (process.env.LEASETRACE_BIN) {
      const capture = (out, args) =>
        execFileSync(process.env.LEASETRACE_BIN, ['capture', join(outDir, out), '--redis', `redis://127.0.0.1:${redis.port}`, ...args], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, NO_COLOR: '1' },
        });
      truth.capture = {};
      for (const name of Object.keys(queues)) truth.capture[name] = capture(`captured-${name}`, ['--queue', name, '--bull', BULL_VERSION]);
      try {
        capture('captured-without-bull', ['--queue', 'review']);
        truth.capture.withoutBull = 'it succeeded';
      } catch (error) {
        truth.capture.withoutBull = error.stderr;
      }
    }
    truth.seen.sort((x, y) => x.at - y.at);
    writeFileSync(join(outDir, 'truth.json'), `${JSON.stringify(truth, null, 2)}\n`);
    // The settings the workers ran with, as a team keeps them beside the dependency.
    const config = { dependencies: { bull: BULL_VERSION }, queue: { settings: { lockDuration: LOCK_MS, stalledInterval: STALLED_INTERVAL_MS, maxStalledCount: MAX_STALLED } } };
    writeFileSync(join(outDir, 'bull.json'), `${JSON.stringify(config, null, 2)}\n`);
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}

if (process.argv[2] === '--worker') await worker(process.argv.slice(3));
else await harness(process.argv.slice(2));
