// The fleet harness: a few minutes of a real app on real BullMQ, Redis and PostgreSQL, with 2–4
// pods and seeded faults, exported as a responder would have it, with the harness's own ground
// truth beside it. Run a fleet, then score leasetrace on it (docs/fleet.md):
//
//   node tests/e2e/fleet.mjs --seed 7 --bullmq 6 --pods 3 --minutes 2 OUTDIR
//   node tests/e2e/fleet-score.mjs OUTDIR --leasetrace target/release/leasetrace
//
// Flags: --seed N (default 1; the same seed gives the same fault plan, job mix and failures),
// --bullmq 5|6 (the pinned releases of package.json; default 6), --pods 2..4 (default 3),
// --minutes M (the producing part of the run, default 2; draining and exporting add ~30 s),
// --faults auto|none|N (default auto: 7–9 faults; none: a fault-free run), --max-len-events N
// (the queues' events stream cap, default 300: the stream is trimmed during the run),
// --capture LEASETRACE (also `LEASETRACE capture` each queue into OUTDIR/capture-<queue>).
//
// What it stages (fleet-app.mjs has the app, fleet-pod.mjs one pod of it):
// - its own redis-server and PostgreSQL cluster (random loopback ports, temp dirs), and an HTTP
//   receiver of the app's effects in this process, which dedupes by idempotency key and keeps its
//   own record;
// - N pods (Node processes), each with a BullMQ worker on both queues (`review`, `notify`,
//   concurrency 3 and 2), lockDuration 4 s, stalledInterval 1 s, maxStalledCount 1;
// - two schedulers (pr-sweep every 4 s on `review`, digest every 7 s on `notify`), one-off jobs
//   whose custom ids collide across the queues (`gh-<n>` in both), attempts with exponential
//   backoff, failures by design, and long backfill jobs;
// - the seeded fault plan: SIGKILL before a job's first lock renewal and after it, SIGSTOP longer
//   than lockDuration then SIGCONT, SIGTERM (graceful restart), a pod replaced by a new one with a
//   new name, and one job killed on two activations in a row (over maxStalledCount). A killed
//   or terminated container restarts in the same pod (a new pid), as the kubelet restarts it.
//
// OUTDIR receives the evidence, at its top level (what `leasetrace init` looks at):
//   <pod>.log            each pod's log as `kubectl logs --timestamps` gives it (pino inside),
//                        every container of the pod, as a log store keeps them
//   app-kst.log          the KST text log every pod appends to (no offset on the line)
//   ledger.csv           the shared ledger table, `psql \copy (...) csv header` in Asia/Seoul
//   receiver.csv         the receiver's own record (its time, key, item, job, sender, status)
//   events-<queue>.json  XRANGE of each queue's events stream at the end (trimmed), as JSON
//   jobs-<queue>.jsonl   HGETALL of every job hash of each queue ({key, fields})
//   app-config.json      the app's settings, the workers' lock options nested in it
//   leasetrace.toml      the manifest written from the docs (docs/inputs.md), as a careful user
//                        would; the scorer makes the other setup with `leasetrace init`
// and, in sub-folders init does not look into: capture-<queue>/ (with --capture), raw/ (each
// pod's pino output unwrapped), harness/ (pod stderr, redis and postgres logs, what was said)
// and truth/truth.json: the ground truth, from what the harness itself observed (pod reports on
// fd 3, the events streams read live with XREAD from their start before any trimming, lock keys
// probed with PTTL and Redis TIME right after each kill or stop, the ledger table read back, the
// receiver's record), never from leasetrace's output. docs/fleet.md describes it.
//
// Stops every process it started, on every way out. Exit 0 with the files written; 1 with a
// message on stderr otherwise; 2 on a usage error.

import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { COLUMNS, CONCURRENCY, DATABASE, DDL, JOB_TYPES, LOCK, QUEUES, STALLED_LOGGED, TABLE, kst, lifecycleValues } from './fleet-app.mjs';
import { startPostgres } from './postgres.mjs';
import { startRedis } from './redis.mjs';
import { deriveTruth } from './fleet-truth.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const LOCK_RENEW = LOCK.lockDuration / 2;
/** A killed or terminated container comes back this long after it died (the kubelet's restart). */
const RESTART_DELAY_MS = [800, 1800];

// ---------------------------------------------------------------- arguments

function usage(message) {
  if (message) process.stderr.write(`fleet.mjs: ${message}\n`);
  process.stderr.write(
    'usage: node tests/e2e/fleet.mjs [--seed N] [--bullmq 5|6] [--pods 2..4] [--minutes M] [--faults auto|none|N] [--max-len-events N] [--capture LEASETRACE] OUTDIR\n',
  );
  process.exit(2);
}

function parseArgs(argv) {
  const options = { seed: 1, bullmq: '6', pods: 3, minutes: 2, faults: 'auto', maxLenEvents: 300, capture: null };
  const positional = [];
  for (let i = 0; i < argv.length; i += 1) {
    const flag = /^--(seed|bullmq|pods|minutes|faults|max-len-events|capture)$/.exec(argv[i]);
    if (flag) {
      if (i + 1 >= argv.length) usage(`${argv[i]} needs a value`);
      const key = flag[1] === 'max-len-events' ? 'maxLenEvents' : flag[1];
      options[key] = argv[i + 1];
      i += 1;
    } else if (argv[i].startsWith('--')) {
      usage(`unknown flag ${argv[i]}`);
    } else {
      positional.push(argv[i]);
    }
  }
  if (positional.length !== 1) usage('one OUTDIR');
  const seed = Number(options.seed);
  const pods = Number(options.pods);
  const minutes = Number(options.minutes);
  const maxLenEvents = Number(options.maxLenEvents);
  if (!Number.isInteger(seed) || seed < 0) usage('--seed takes a whole number');
  if (!['5', '6'].includes(String(options.bullmq))) usage('--bullmq takes 5 or 6');
  if (!Number.isInteger(pods) || pods < 2 || pods > 4) usage('--pods takes 2, 3 or 4');
  if (!(minutes >= 0.5 && minutes <= 60)) usage('--minutes takes 0.5 to 60');
  if (!(options.faults === 'auto' || options.faults === 'none' || /^\d+$/.test(options.faults))) usage('--faults takes auto, none or a count');
  if (!Number.isInteger(maxLenEvents) || maxLenEvents < 10) usage('--max-len-events takes a whole number ≥ 10');
  return { ...options, seed, pods, minutes, maxLenEvents, outdir: resolve(positional[0]) };
}

// ---------------------------------------------------------------- seeded randomness

/** mulberry32: a small, well-mixed 32-bit generator; one stream per purpose, so that the fault
 * plan does not change when the job mix does. */
function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  next.int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
  next.pick = (list) => list[Math.floor(next() * list.length)];
  next.chance = (p) => next() < p;
  next.shuffle = (list) => {
    const out = [...list];
    for (let i = out.length - 1; i > 0; i -= 1) {
      const j = Math.floor(next() * (i + 1));
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  };
  return next;
}

const FAULT_KINDS = ['kill-before-renewal', 'kill-after-renewal', 'stop', 'term', 'replace'];

/** The fault plan: what, when (ms after the producer starts), which pod slot, and its own
 * delays. `stall-twice` (one job killed on two activations in a row) counts as two faults. */
function makePlan({ seed, pods, minutes, faults }) {
  const r = rng(seed * 7919 + 17);
  const durationMs = minutes * 60_000;
  if (faults === 'none') return [];
  const count = faults === 'auto' ? r.int(7, 9) : Number(faults);
  const entries = [];
  let left = count;
  if (left >= 2) {
    entries.push({ kind: 'stall-twice' });
    left -= 2;
  }
  const kinds = r.shuffle(FAULT_KINDS);
  for (let i = 0; i < left; i += 1) entries.push({ kind: i < kinds.length ? kinds[i] : r.pick(FAULT_KINDS) });
  const order = r.shuffle(entries);
  const from = 12_000;
  const to = Math.max(from + 1000, durationMs - 25_000);
  const span = (to - from) / Math.max(1, order.length);
  return order.map((entry, i) => ({
    ...entry,
    at: Math.round(from + span * i + r() * span * 0.6),
    slot: r.int(0, pods - 1),
    restartDelayMs: r.int(...RESTART_DELAY_MS),
    stopForMs: LOCK.lockDuration + 2 * LOCK.stalledInterval + r.int(1500, 2500),
  }));
}

// ---------------------------------------------------------------- process bookkeeping

const children = new Set();
let redisDir = null;
let pgDir = null;

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
const fail = (message) => {
  throw new HarnessError(message);
};
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

function track(child, name) {
  children.add(child);
  child.exited = new Promise((done) => {
    child.on('exit', (code, signal) => {
      children.delete(child);
      done({ code, signal, at: Date.now() });
    });
  });
  child.on('error', (error) => process.stderr.write(`fleet: ${name}: ${error.message}\n`));
  return child;
}

/** The BullMQ release package.json pins for a major version, checked against node_modules. */
function pinnedBullmq(major) {
  const { dependencies } = JSON.parse(readFileSync(join(HERE, 'package.json'), 'utf8'));
  const pins = Object.entries(dependencies)
    .map(([module, spec]) => ({ module, version: /^(?:npm:bullmq@)?(\d+\.\d+\.\d+)$/.exec(spec)?.[1], spec }))
    .filter((pin) => pin.version && (pin.module === 'bullmq' || pin.spec.startsWith('npm:bullmq@')));
  const pin = pins.find((p) => p.version.split('.')[0] === String(major));
  if (!pin) fail(`package.json pins no bullmq ${major}.x`);
  let installed;
  try {
    installed = JSON.parse(readFileSync(join(HERE, 'node_modules', pin.module, 'package.json'), 'utf8'));
  } catch {
    fail(`node_modules has no ${pin.module} (bullmq ${pin.version}): run tests/e2e/setup.sh`);
  }
  if (installed.name !== 'bullmq' || installed.version !== pin.version) fail(`node_modules/${pin.module} is not bullmq ${pin.version}: run tests/e2e/setup.sh`);
  return { module: pin.module, version: pin.version };
}

/** RFC 3339 with nanoseconds, as the kubelet stamps a line (RFC3339NanoFixed, UTC). */
function stamp() {
  const now = performance.timeOrigin + performance.now();
  const ms = Math.floor(now);
  const nanos = String(Math.floor((now - ms) * 1e6)).padStart(6, '0');
  return new Date(ms).toISOString().replace('Z', `${nanos}Z`);
}

// ---------------------------------------------------------------- the pods

class Fleet {
  constructor(ctx) {
    this.ctx = ctx;
    this.slots = [];
    this.containers = [];
    this.reports = [];
    this.waiters = [];
    this.podNames = new Set();
    this.stopping = false;
  }

  newPodName() {
    const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
    for (;;) {
      const suffix = Array.from({ length: 5 }, () => this.ctx.names.pick([...alphabet])).join('');
      const name = `review-bot-7d9f8c6b5-${suffix}`;
      if (!this.podNames.has(name)) {
        this.podNames.add(name);
        return name;
      }
    }
  }

  addSlot() {
    const slot = { index: this.slots.length, pod: this.newPodName(), state: 'starting', container: null, pods: [] };
    slot.pods.push(slot.pod);
    this.slots.push(slot);
    return this.start(slot);
  }

  /** Starts a container (a pod process) in the slot: its first, or a restart with a new pid. */
  start(slot) {
    const { ctx } = this;
    const config = { pod: slot.pod, redisPort: ctx.port, pgPort: ctx.pg.port, receiverUrl: ctx.receiverUrl, kstLog: join(ctx.outdir, 'app-kst.log'), bullmq: ctx.bullmq.module };
    const child = track(
      spawn(process.execPath, [join(HERE, 'fleet-pod.mjs'), JSON.stringify(config)], { cwd: HERE, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] }),
      `pod ${slot.pod}`,
    );
    // Should the orchestrator be SIGKILLed, a pod it had SIGSTOPped could not even notice: a
    // watchdog SIGKILLs the pod then (and leaves when the pod is gone).
    track(
      spawn('sh', ['-c', 'while kill -0 "$0" 2>/dev/null; do kill -0 "$1" 2>/dev/null || exit 0; sleep 1; done; kill -9 "$1" 2>/dev/null', String(process.pid), String(child.pid)], {
        stdio: 'ignore',
      }),
      `pod watchdog ${slot.pod}`,
    );
    const container = { pod: slot.pod, slot: slot.index, pid: child.pid, child, spawnedAt: Date.now(), workerIds: null, stopped: [], exit: null, endedBy: null };
    slot.container = container;
    slot.state = 'running';
    this.containers.push(container);
    const kubectl = join(ctx.outdir, `${slot.pod}.log`);
    const raw = join(ctx.outdir, 'raw', `${slot.pod}.pino.log`);
    const stderrFile = join(ctx.harnessDir, `${slot.pod}-${child.pid}.stderr`);
    const lines = (stream, onLine) => {
      let buffer = '';
      stream.on('data', (chunk) => {
        buffer += chunk.toString('utf8');
        let newline;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          onLine(buffer.slice(0, newline));
          buffer = buffer.slice(newline + 1);
        }
      });
    };
    // The container runtime's view: every line of stdout and stderr, stamped when it is read.
    lines(child.stdout, (line) => {
      appendFileSync(kubectl, `${stamp()} ${line}\n`);
      appendFileSync(raw, `${line}\n`);
    });
    lines(child.stderr, (line) => {
      appendFileSync(kubectl, `${stamp()} ${line}\n`);
      appendFileSync(stderrFile, `${line}\n`);
    });
    lines(child.stdio[3], (line) => {
      if (line.trim() === '') return;
      let report;
      try {
        report = JSON.parse(line);
      } catch {
        process.stderr.write(`fleet: ${slot.pod} reported a non-JSON line: ${line}\n`);
        return;
      }
      report.receivedAt = Date.now();
      if (report.ev === 'ready') container.workerIds = report.workerIds;
      this.reports.push(report);
      this.wake();
    });
    child.exited.then((exit) => {
      container.exit = exit;
      this.wake();
      // A container that died on its own (no fault, no final stop) is restarted, as the kubelet does.
      if (!container.endedBy && !this.stopping && slot.container === container) {
        container.endedBy = 'crashed';
        ctx.say(`${slot.pod} pid ${container.pid} exited on its own (${JSON.stringify(exit)}): restarting it`);
        slot.state = 'restarting';
        setTimeout(() => {
          if (!this.stopping) this.start(slot);
        }, RESTART_DELAY_MS[0]);
      }
    });
    return container;
  }

  wake() {
    for (const waiter of [...this.waiters]) {
      const found = waiter.predicate();
      if (found) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        clearTimeout(waiter.timer);
        waiter.resolve(found);
      }
    }
  }

  /** Resolves with the first truthy value of `predicate()` (checked now and after every report),
   * or with null after `timeoutMs`. */
  until(predicate, timeoutMs) {
    const found = predicate();
    if (found) return Promise.resolve(found);
    return new Promise((resolveWith) => {
      const waiter = { predicate, resolve: resolveWith };
      waiter.timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        resolveWith(null);
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** The jobs a container's processors hold now: entered and not exited. */
  held(container) {
    const open = new Map();
    for (const r of this.reports) {
      if (r.pid !== container.pid) continue;
      const key = `${r.queue}\u0000${r.jobId}\u0000${r.runId}`;
      if (r.ev === 'enter') open.set(key, r);
      else if (r.ev === 'exit') open.delete(key);
    }
    return [...open.values()];
  }

  running(slot) {
    return slot.state === 'running' && slot.container && slot.container.exit === null && slot.container.workerIds;
  }

  /** The slot the plan named if its pod is running, else the next one that is. */
  slotFor(index) {
    for (let i = 0; i < this.slots.length; i += 1) {
      const slot = this.slots[(index + i) % this.slots.length];
      if (this.running(slot)) return slot;
    }
    return null;
  }

  async signal(container, signal) {
    container.child.kill(signal);
  }
}

// ---------------------------------------------------------------- locks on Redis' clock

/** Every lock held by one of the container's workers, read with PTTL and Redis TIME in one
 * MULTI: the exact expiry on Redis' clock. */
async function probeLocks(ctx, container, fault) {
  if (!container.workerIds) return [];
  const owners = new Set(Object.values(container.workerIds));
  const keys = [];
  let cursor = '0';
  do {
    const [next, batch] = await ctx.redis.scan(cursor, 'MATCH', 'bull:*:lock', 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  const probes = [];
  for (const key of keys.sort()) {
    const [[, time], [, pttl], [, token]] = await ctx.redis.multi().time().pttl(key).get(key).exec();
    if (!token || !owners.has(token.split(':')[0]) || pttl < 0) continue;
    const now = Number(time[0]) * 1000 + Number(time[1]) / 1000;
    const body = key.slice('bull:'.length, -':lock'.length);
    const colon = body.indexOf(':');
    probes.push({
      fault: fault.id,
      kind: fault.kind,
      pod: container.pod,
      pid: container.pid,
      queue: body.slice(0, colon),
      job_id: body.slice(colon + 1),
      token,
      redis_now_ms: now,
      pttl_ms: pttl,
      lock_expires_at: Math.round(now + pttl),
    });
  }
  return probes;
}

// ---------------------------------------------------------------- the faults

async function killContainer(ctx, fleet, container, fault, endedBy) {
  container.endedBy = endedBy;
  const at = Date.now();
  await fleet.signal(container, 'SIGKILL');
  const exit = await container.child.exited;
  if (exit.signal !== 'SIGKILL') fail(`${container.pod} pid ${container.pid} did not die of SIGKILL: ${JSON.stringify(exit)}`);
  const probes = await probeLocks(ctx, container, fault);
  ctx.probes.push(...probes);
  return { at, exit_at: exit.at, probes: probes.length };
}

function restartLater(ctx, fleet, slot, delayMs, newPod) {
  slot.state = 'restarting';
  return sleep(delayMs).then(() => {
    if (fleet.stopping) return null;
    if (newPod) {
      slot.pod = fleet.newPodName();
      slot.pods.push(slot.pod);
    }
    return fleet.start(slot);
  });
}

/** The next activation a running container reports from now on (fresh: processedOn just set). */
function nextActivation(fleet, slot, after, jobId = null) {
  return () => {
    const c = slot.container;
    if (!c || c.exit) return null;
    return fleet.reports.find((r) => r.ev === 'active' && r.pid === c.pid && r.receivedAt >= after && (jobId === null || r.jobId === jobId) && Date.now() - r.processedOn < 300);
  };
}

async function killBeforeRenewal(ctx, fleet, fault, slot, activation) {
  // ~150 ms after BullMQ activated the job: well before its first possible renewal (R/2).
  const wait = activation.processedOn + 150 - Date.now();
  if (wait > 0) await sleep(wait);
  if (Date.now() >= activation.processedOn + LOCK_RENEW / 2 - 100) return { skipped: 'too late for a kill before the first renewal' };
  const container = slot.container;
  const killed = await killContainer(ctx, fleet, container, fault, fault.kind);
  restartLater(ctx, fleet, slot, fault.restartDelayMs, false);
  return { ...killed, pod: container.pod, pid: container.pid, target: { queue: activation.queue, job_id: activation.jobId, processed_on: activation.processedOn } };
}

const FAULTS = {
  async 'kill-before-renewal'(ctx, fleet, fault) {
    const slot = fleet.slotFor(fault.slot);
    if (!slot) return { skipped: 'no running pod' };
    const since = Date.now();
    const activation = await fleet.until(nextActivation(fleet, slot, since), 10_000);
    if (!activation || slot.container.pid !== activation.pid || !fleet.running(slot)) return { skipped: 'no fresh activation on the pod within 10 s' };
    return killBeforeRenewal(ctx, fleet, fault, slot, activation);
  },

  async 'kill-after-renewal'(ctx, fleet, fault) {
    const slot = fleet.slotFor(fault.slot);
    if (!slot) return { skipped: 'no running pod' };
    const container = slot.container;
    // A job held longer than lockRenewTime: its lock was renewed at least once.
    const renewed = () => fleet.running(slot) && slot.container === container && fleet.held(container).find((r) => Date.now() - r.processedOn > LOCK_RENEW + 300);
    const target = await pollUntil(renewed, 12_000);
    if (!target) return { skipped: 'no job held past its first renewal within 12 s' };
    const killed = await killContainer(ctx, fleet, container, fault, fault.kind);
    restartLater(ctx, fleet, slot, fault.restartDelayMs, false);
    return { ...killed, pod: container.pod, pid: container.pid, target: { queue: target.queue, job_id: target.jobId, processed_on: target.processedOn } };
  },

  async stop(ctx, fleet, fault) {
    // A pod running a backfill that started lately, if there is one (its lock is then lost by a
    // live worker: the case lock-headroom is about); else the planned pod, once it holds a job.
    const long = fleet.slots.find((s) => fleet.running(s) && fleet.held(s.container).some((r) => r.name === 'backfill' && Date.now() - r.processedOn < 4000));
    const slot = long ?? fleet.slotFor(fault.slot);
    if (!slot) return { skipped: 'no running pod' };
    const container = slot.container;
    const busy = () => fleet.running(slot) && slot.container === container && fleet.held(container).length > 0;
    if (!(await pollUntil(busy, 10_000))) return { skipped: 'the pod held no job within 10 s' };
    slot.state = 'stopped';
    const at = Date.now();
    await fleet.signal(container, 'SIGSTOP');
    await sleep(100);
    const probes = await probeLocks(ctx, container, fault);
    ctx.probes.push(...probes);
    await sleep(fault.stopForMs);
    const resumedAt = Date.now();
    await fleet.signal(container, 'SIGCONT');
    container.stopped.push({ from: at, to: resumedAt });
    slot.state = 'running';
    return { at, resumed_at: resumedAt, pod: container.pod, pid: container.pid, probes: probes.length, held: fleet.held(container).map((r) => ({ queue: r.queue, job_id: r.jobId, run_id: r.runId })) };
  },

  async term(ctx, fleet, fault) {
    const slot = fleet.slotFor(fault.slot);
    if (!slot) return { skipped: 'no running pod' };
    const container = slot.container;
    container.endedBy = 'term';
    slot.state = 'terminating';
    const at = Date.now();
    await fleet.signal(container, 'SIGTERM');
    // The kubelet's grace period, then SIGKILL.
    const timeout = sleep(20_000).then(() => 'timeout');
    let graceful = true;
    if ((await Promise.race([container.child.exited, timeout])) === 'timeout') {
      graceful = false;
      await fleet.signal(container, 'SIGKILL');
      await container.child.exited;
      ctx.probes.push(...(await probeLocks(ctx, container, fault)));
    }
    restartLater(ctx, fleet, slot, fault.restartDelayMs, false);
    return { at, exit_at: container.exit.at, graceful, pod: container.pod, pid: container.pid };
  },

  async replace(ctx, fleet, fault) {
    const slot = fleet.slotFor(fault.slot);
    if (!slot) return { skipped: 'no running pod' };
    const container = slot.container;
    const busy = () => fleet.running(slot) && slot.container === container && fleet.held(container).length > 0;
    if (!(await pollUntil(busy, 10_000))) return { skipped: 'the pod held no job within 10 s' };
    const killed = await killContainer(ctx, fleet, container, fault, 'replace');
    const old = container.pod;
    await restartLater(ctx, fleet, slot, fault.restartDelayMs + 1000, true);
    return { ...killed, pod: old, pid: container.pid, replaced_by: slot.pod };
  },

  async 'stall-twice'(ctx, fleet, fault) {
    // One long job, killed before its first renewal on two activations in a row: the second
    // stall puts it over maxStalledCount 1.
    const jobId = `bf-x${fault.id}`;
    const since = Date.now();
    await ctx.queues.review.add('backfill', { workMs: 14_000 }, { jobId, attempts: 1 });
    const steps = [];
    for (let n = 1; n <= 2; n += 1) {
      const found = await fleet.until(() => {
        const r = fleet.reports.find((x) => x.ev === 'active' && x.queue === 'review' && x.jobId === jobId && x.receivedAt >= since && !steps.some((s) => s.processed_on === x.processedOn));
        return r && Date.now() - r.processedOn < 300 ? r : null;
      }, 20_000);
      if (!found) return { skipped: `activation ${n} of ${jobId} not seen within 20 s`, steps };
      const slot = fleet.slots.find((s) => s.container && s.container.pid === found.pid);
      if (!slot) return { skipped: `the pod of activation ${n} is gone`, steps };
      const killed = await killBeforeRenewal(ctx, fleet, { ...fault, kind: 'kill-before-renewal' }, slot, found);
      if (killed.skipped) return { ...killed, steps };
      steps.push({ ...killed, processed_on: found.processedOn });
    }
    return { at: steps[0].at, job: { queue: 'review', job_id: jobId }, steps };
  },
};

async function pollUntil(predicate, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = predicate();
    if (found) return found;
    if (Date.now() > deadline) return null;
    await sleep(50);
  }
}

// ---------------------------------------------------------------- the receiver

function startReceiver(ctx) {
  ctx.received = [];
  const firstByKey = new Map();
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const at = Date.now();
      let data = {};
      try {
        data = JSON.parse(body);
      } catch {
        res.writeHead(400).end();
        return;
      }
      const key = req.headers['idempotency-key'] ?? null;
      const status = key && firstByKey.has(key) ? 'duplicate' : 'accepted';
      if (key && !firstByKey.has(key)) firstByKey.set(key, ctx.received.length);
      const record = {
        received_at: at,
        request_id: `req-${String(ctx.received.length + 1).padStart(5, '0')}`,
        idempotency_key: key,
        item: data.item,
        job_id: req.headers['x-job-id'] ?? null,
        sender: req.headers['x-sender'] ?? null,
        status,
        // What the receiver's record does not keep, but the harness knows from the request.
        queue: data.queue,
        run_id: data.run_id,
        pid: data.pid,
        type: data.type,
      };
      ctx.received.push(record);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status, request_id: record.request_id }));
    });
  });
  return new Promise((done) => {
    server.listen(0, '127.0.0.1', () => {
      ctx.receiverUrl = `http://127.0.0.1:${server.address().port}/effects`;
      ctx.receiver = server;
      done();
    });
  });
}

// ---------------------------------------------------------------- the events streams, read live

async function readStreamsLive(ctx) {
  const { default: IORedis } = await import('ioredis');
  ctx.stream = Object.fromEntries(QUEUES.map((q) => [q, []]));
  ctx.streamReaders = QUEUES.map((queue) => {
    const conn = new IORedis({ host: '127.0.0.1', port: ctx.port, maxRetriesPerRequest: null });
    conn.on('error', () => {});
    const reader = { queue, conn, last: '0-0', stop: false };
    reader.done = (async () => {
      while (!reader.stop) {
        const result = await conn.xread('COUNT', 1000, 'BLOCK', 200, 'STREAMS', `bull:${queue}:events`, reader.last);
        if (!result) continue;
        const readAt = Date.now();
        for (const [, entries] of result) {
          for (const [id, flat] of entries) {
            const fields = {};
            for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]] = String(flat[i + 1]);
            ctx.stream[queue].push({ id, ms: Number(id.split('-')[0]), fields, read_at: readAt });
            reader.last = id;
          }
        }
      }
    })();
    return reader;
  });
}

async function stopStreamReaders(ctx) {
  await sleep(400);
  for (const reader of ctx.streamReaders) reader.stop = true;
  await Promise.all(ctx.streamReaders.map((r) => r.done.catch(() => {})));
  for (const reader of ctx.streamReaders) reader.conn.disconnect();
}

// ---------------------------------------------------------------- the producer

function produce(ctx, durationMs) {
  // One generator per loop: the loops interleave as the machine runs them, and the same seed
  // must give the same deliveries, with the same failures by design, whatever the interleaving.
  const seed = ctx.args.seed;
  const [prs, deliveries, backfills] = [rng(seed * 104729 + 3), rng(seed * 104729 + 5), rng(seed * 104729 + 7)];
  const r = deliveries;
  let delivery = 1000;
  let pr = 4100;
  let stop = false;
  const tasks = [];
  const loop = async (g, everyMs, step) => {
    while (!stop) {
      await step();
      await sleep(everyMs[0] + g() * (everyMs[1] - everyMs[0]));
    }
  };
  // Open PRs the sweep picks from: a few to start with, then one every ~1.5 s.
  tasks.push(
    loop(prs, [1200, 1800], async () => {
      pr += 1;
      await ctx.redis.rpush('app:prs', `PR-${pr}`);
    }),
  );
  // Webhook deliveries: each enqueues a review in `review` and a notification in `notify`, both
  // with the delivery id as their custom job id.
  tasks.push(
    loop(deliveries, [1800, 3200], async () => {
      delivery += 1;
      const jobId = `gh-${delivery}`;
      const review = JOB_TYPES['review-pr'];
      // A fault-free run is a healthy day: failures are retried and then succeed.
      const alwaysFails = r.chance(0.08) && !ctx.healthy;
      const reviewData = { pr: `PR-${5000 + delivery - 1000}`, workMs: r.int(...review.workMs), fail: alwaysFails ? [1, 2, 3] : r.chance(0.25) ? [1] : [] };
      const notify = JOB_TYPES['notify-user'];
      const invalid = r.chance(0.06) && !ctx.healthy;
      const notifyData = { user: `user-${r.int(1, 40)}`, workMs: r.int(...notify.workMs), failAfterSend: !invalid && r.chance(0.25) ? [1] : [], invalid };
      await ctx.queues.review.add('review-pr', reviewData, { jobId, attempts: review.attempts, backoff: review.backoff });
      await ctx.queues.notify.add('notify-user', notifyData, { jobId, attempts: notify.attempts, backoff: notify.backoff });
    }),
  );
  // A long backfill now and then (its lock is renewed several times).
  tasks.push(
    (async () => {
      let n = 0;
      await sleep(5000);
      while (!stop) {
        n += 1;
        const type = JOB_TYPES.backfill;
        await ctx.queues.review.add('backfill', { workMs: backfills.int(...type.workMs) }, { jobId: `bf-${n}`, attempts: type.attempts });
        await sleep(25_000 + backfills() * 10_000);
      }
    })(),
  );
  return {
    stop: async () => {
      stop = true;
      await Promise.all(tasks);
    },
    durationMs,
  };
}

// ---------------------------------------------------------------- export

async function exportStream(ctx, queue) {
  const entries = await ctx.redis.xrange(`bull:${queue}:events`, '-', '+');
  const json = entries.map(([id, flat]) => {
    const fields = {};
    for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]] = String(flat[i + 1]);
    return { id, fields };
  });
  writeFileSync(join(ctx.outdir, `events-${queue}.json`), `${JSON.stringify(json, null, 2)}\n`);
  return { entries: json.length, first_id: json[0]?.id ?? null };
}

async function exportJobs(ctx, queue) {
  const keys = new Set();
  let cursor = '0';
  do {
    const [next, batch] = await ctx.redis.scan(cursor, 'MATCH', `bull:${queue}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of batch) keys.add(key);
  } while (cursor !== '0');
  const jobs = [];
  for (const key of [...keys].sort()) {
    if ((await ctx.redis.type(key)) !== 'hash') continue;
    const fields = await ctx.redis.hgetall(key);
    if (fields.name === undefined || fields.timestamp === undefined) continue;
    jobs.push({ key, fields });
  }
  jobs.sort((x, y) => Number(x.fields.timestamp) - Number(y.fields.timestamp) || x.key.localeCompare(y.key));
  writeFileSync(join(ctx.outdir, `jobs-${queue}.jsonl`), jobs.map((j) => JSON.stringify(j)).join('\n') + '\n');
  return jobs.length;
}

function csvCell(value) {
  const text = value === undefined || value === null ? '' : String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function exportReceiver(ctx) {
  const header = ['received_at', 'request_id', 'idempotency_key', 'item', 'job_id', 'sender', 'status'];
  const lines = [header.join(',')];
  for (const r of ctx.received) {
    lines.push([new Date(r.received_at).toISOString(), r.request_id, r.idempotency_key, r.item, r.job_id, r.sender, r.status].map(csvCell).join(','));
  }
  writeFileSync(join(ctx.outdir, 'receiver.csv'), `${lines.join('\n')}\n`);
}

/** The table as a responder exports it: psql's `\copy ... csv header`, session zone Asia/Seoul.
 * Also reads the rows back (epoch µs) for the truth. */
async function exportLedger(ctx) {
  const path = join(ctx.outdir, 'ledger.csv');
  if (path.includes("'")) fail(`cannot \\copy to a path with a quote: ${path}`);
  ctx.pg.psql(`\\copy (select * from ${TABLE} order by id) to '${path}' csv header`, { database: DATABASE, env: { PGTZ: 'Asia/Seoul', PGDATESTYLE: 'ISO, MDY' } });
  const { default: pg } = await import('pg');
  const client = new pg.Client({ host: '127.0.0.1', port: ctx.pg.port, user: 'postgres', database: DATABASE });
  await client.connect();
  const { rows } = await client.query(
    `select id::int as id, (extract(epoch from logged_at) * 1000000)::int8 as at_us, queue_name, bull_job_id, run_ref, lifecycle,
            final_state, item_ref, idem_key, worker_node, details from ${TABLE} order by id`,
  );
  await client.end();
  return rows.map((r) => ({
    id: r.id,
    line: r.id + 1,
    at: Number(r.at_us) / 1000,
    queue: r.queue_name,
    job_id: r.bull_job_id,
    run_id: r.run_ref,
    lifecycle: r.lifecycle,
    final_state: r.final_state,
    item: r.item_ref,
    key: r.idem_key,
    worker: r.worker_node,
    details: r.details,
  }));
}

function writeAppConfig(ctx) {
  const config = {
    app: { name: 'review-bot', version: '4.2.0', env: 'staging' },
    bullmq_version: ctx.bullmq.version,
    redis: { host: 'redis.review-bot.svc', port: 6379, maxRetriesPerRequest: null },
    ledger: { driver: 'postgres', database: DATABASE, table: TABLE },
    queues: Object.fromEntries(
      QUEUES.map((queue) => [
        queue,
        {
          streams: { events: { maxLen: ctx.args.maxLenEvents } },
          schedulers: Object.fromEntries(Object.entries(JOB_TYPES).filter(([, t]) => t.scheduled && t.queue === queue).map(([name, t]) => [name, { every: t.every }])),
          worker: { concurrency: CONCURRENCY[queue], ...LOCK, logStalled: STALLED_LOGGED.includes(queue) },
        },
      ]),
    ),
  };
  writeFileSync(join(ctx.outdir, 'app-config.json'), `${JSON.stringify(config, null, 2)}\n`);
}

/** The manifest a careful user writes from docs/inputs.md and its pages. */
function docsManifest(ctx, podLogs) {
  const toml = (map) => `{ ${Object.entries(map).map(([k, v]) => `${/^[a-z_]+$/.test(k) ? k : JSON.stringify(k)} = ${JSON.stringify(v)}`).join(', ')} }`;
  const out = [
    `# Written by tests/e2e/fleet.mjs (seed ${ctx.args.seed}, BullMQ ${ctx.bullmq.version}) from the docs, as a careful user`,
    '# would: docs/inputs.md, docs/inputs/ledger.md, docs/inputs/log.md, docs/inputs/envelopes.md,',
    '# docs/inputs/events.md, docs/inputs/jobs.md, docs/inputs/params.md.',
    'display_tz = "Asia/Seoul"',
    '',
    '# The shared ledger table, psql \\copy ... csv header (timestamptz with +09 offsets: no tz needed).',
    '# No column names the job type: it is the prefix of the lifecycle value, which no field reads.',
    '[[sources]]',
    'kind = "ledger"',
    'path = "ledger.csv"',
    `columns = ${toml(COLUMNS)}`,
    `events = ${toml(lifecycleValues())}`,
    '',
    "# The receiver's own record: a ledger with role = \"receiver\" (docs/inputs/ledger.md).",
    '[[sources]]',
    'kind = "ledger"',
    'path = "receiver.csv"',
    'role = "receiver"',
    'columns = { time = "received_at", outcome = "status", key = "idempotency_key", item = "item", job = "job_id", worker = "sender" }',
    '',
  ];
  for (const pod of podLogs) {
    out.push(`# kubectl logs --timestamps ${pod} (every container of the pod)`, '[[sources]]', 'kind = "log"', `path = "${pod}.log"`, 'format = "kubectl+pino"', '');
  }
  out.push('# The text log every pod appends to, KST wall-clock time without an offset.', '[[sources]]', 'kind = "log"', 'path = "app-kst.log"', 'tz = "Asia/Seoul"', '');
  for (const queue of QUEUES) {
    out.push('[[sources]]', 'kind = "bullmq-events"', `path = "events-${queue}.json"`, `queue = "${queue}"`, '');
  }
  for (const queue of QUEUES) {
    out.push('[[sources]]', 'kind = "bullmq-jobs"', `path = "jobs-${queue}.jsonl"`, `queue = "${queue}"`, '');
  }
  out.push("# The app's settings; the lock options of both queues' workers are the same.", '[[sources]]', 'kind = "bullmq-params"', 'path = "app-config.json"', '');
  return out.join('\n');
}

function runCapture(ctx, queue) {
  const folder = `capture-${queue}`;
  return new Promise((done, reject) => {
    const child = track(
      spawn(ctx.args.capture, ['capture', '--redis', `redis://127.0.0.1:${ctx.port}`, '--queue', queue, join(ctx.outdir, folder)], { stdio: ['ignore', 'pipe', 'pipe'] }),
      `leasetrace capture ${queue}`,
    );
    let said = '';
    child.stdout.on('data', (chunk) => {
      said += chunk;
    });
    child.stderr.on('data', (chunk) => {
      said += chunk;
    });
    child.on('exit', (code) => {
      writeFileSync(join(ctx.harnessDir, `${folder}.out`), said);
      if (code !== 0) reject(new HarnessError(`leasetrace capture --queue ${queue} exited with ${code}:\n${said}`));
      else done({ folder, exit: code });
    });
  });
}

// ---------------------------------------------------------------- main

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const bullmq = pinnedBullmq(args.bullmq);
  const outdir = args.outdir;
  mkdirSync(outdir, { recursive: true });
  for (const sub of ['harness', 'raw', 'truth']) mkdirSync(join(outdir, sub), { recursive: true });
  writeFileSync(join(outdir, 'app-kst.log'), '');
  const harnessDir = join(outdir, 'harness');
  const plan = makePlan(args).map((f, i) => ({ ...f, id: i + 1 }));
  const ctx = {
    args,
    bullmq,
    outdir,
    harnessDir,
    plan,
    probes: [],
    faults: [],
    names: rng(args.seed * 31 + 5),
    healthy: args.faults === 'none',
    startedAt: Date.now(),
    notes: [],
    say: (message) => {
      appendFileSync(join(harnessDir, 'fleet.log'), `${new Date().toISOString()} ${message}\n`);
    },
  };
  ctx.say(`seed ${args.seed}, BullMQ ${bullmq.version}, ${args.pods} pods, ${args.minutes} min, plan ${JSON.stringify(plan)}`);
  redisDir = mkdtempSync(join(tmpdir(), 'leasetrace-fleet-redis-'));
  pgDir = mkdtempSync(join(tmpdir(), 'leasetrace-fleet-pg-'));
  let redisInfo;
  let fleet;
  try {
    redisInfo = await startRedis(redisDir, { track, sleep });
    ctx.port = redisInfo.port;
    ctx.redis = redisInfo.client;
    ctx.pg = await startPostgres(pgDir, { track, logFile: join(harnessDir, 'postgres.log'), sleep });
    ctx.pg.psql(`create database ${DATABASE}`);
    ctx.pg.psql(DDL, { database: DATABASE });
    await startReceiver(ctx);
    await readStreamsLive(ctx);
    writeAppConfig(ctx);

    const { Queue } = await import(bullmq.module);
    ctx.queues = {};
    for (const queue of QUEUES) {
      ctx.queues[queue] = new Queue(queue, { connection: { host: '127.0.0.1', port: ctx.port }, streams: { events: { maxLen: args.maxLenEvents } } });
      await ctx.queues[queue].waitUntilReady();
    }
    await ctx.redis.rpush('app:prs', ...Array.from({ length: 6 }, (_, i) => `PR-${4094 + i}`));

    fleet = new Fleet(ctx);
    ctx.fleet = fleet;
    for (let i = 0; i < args.pods; i += 1) fleet.addSlot();
    const ready = await fleet.until(() => fleet.slots.every((s) => s.container.workerIds), 30_000);
    if (!ready) fail(`the pods were not ready within 30 s (see ${harnessDir})`);

    for (const [name, type] of Object.entries(JOB_TYPES)) {
      if (type.scheduled) await ctx.queues[type.queue].upsertJobScheduler(name, { every: type.every }, { name, data: {} });
    }
    const producedFrom = Date.now();
    ctx.producedFrom = producedFrom;
    const producer = produce(ctx, args.minutes * 60_000);
    const faultTasks = plan.map(async (fault) => {
      await sleep(Math.max(0, producedFrom + fault.at - Date.now()));
      const startedAt = Date.now();
      let outcome;
      try {
        outcome = await FAULTS[fault.kind](ctx, fleet, fault);
      } catch (error) {
        outcome = { skipped: `failed: ${error.message}` };
      }
      const record = { id: fault.id, kind: fault.kind, planned_at: producedFrom + fault.at, slot: fault.slot, started_at: startedAt, ...outcome };
      ctx.faults.push(record);
      ctx.say(`fault ${JSON.stringify(record)}`);
    });
    await sleep(args.minutes * 60_000);
    await Promise.all(faultTasks);
    await producer.stop();
    for (const [name, type] of Object.entries(JOB_TYPES)) {
      if (type.scheduled) await ctx.queues[type.queue].removeJobScheduler(name);
    }
    ctx.producedUntil = Date.now();

    // Drain: every job finished (retries and stalled recoveries included), then a graceful stop.
    const drainDeadline = Date.now() + 120_000;
    for (;;) {
      const counts = await Promise.all(QUEUES.map((q) => ctx.queues[q].getJobCounts('active', 'wait', 'delayed', 'prioritized', 'waiting-children', 'paused')));
      const left = counts.reduce((sum, c) => sum + Object.values(c).reduce((a, b) => a + b, 0), 0);
      if (left === 0) break;
      if (Date.now() > drainDeadline) {
        ctx.notes.push(`the queues were not drained 120 s after the producer stopped: ${JSON.stringify(counts)}`);
        break;
      }
      await sleep(500);
    }
    // Stalled checks run once more on an empty queue; then the pods are stopped gracefully.
    await sleep(LOCK.stalledInterval * 2);
    fleet.stopping = true;
    await Promise.all(
      fleet.slots.map(async (slot) => {
        const c = slot.container;
        if (!c || c.exit) return;
        c.endedBy = 'final-stop';
        c.child.kill('SIGTERM');
        const timeout = sleep(20_000).then(() => 'timeout');
        if ((await Promise.race([c.child.exited, timeout])) === 'timeout') {
          c.child.kill('SIGKILL');
          await c.child.exited;
          ctx.notes.push(`${c.pod} pid ${c.pid} did not stop within 20 s of SIGTERM at the end: SIGKILLed`);
        }
      }),
    );
    ctx.finishedAt = Date.now();
    await stopStreamReaders(ctx);

    // ---- the evidence, as a responder would have it
    const captured = [];
    if (args.capture) for (const queue of QUEUES) captured.push(await runCapture(ctx, queue));
    const streams = {};
    const jobs = {};
    for (const queue of QUEUES) {
      streams[queue] = await exportStream(ctx, queue);
      jobs[queue] = await exportJobs(ctx, queue);
    }
    const ledgerRows = await exportLedger(ctx);
    exportReceiver(ctx);
    const podLogs = [...new Set(fleet.containers.map((c) => c.pod))];
    writeFileSync(join(outdir, 'leasetrace.toml'), docsManifest(ctx, podLogs));
    const trimmed = Object.fromEntries(QUEUES.map((q) => [q, { live: ctx.stream[q].length, exported: streams[q].entries, first_exported_id: streams[q].first_id }]));

    // ---- the ground truth
    const containers = fleet.containers.map((c) => ({
      pod: c.pod,
      slot: c.slot,
      pid: c.pid,
      spawned_at: c.spawnedAt,
      started_at: (fleet.reports.find((r) => r.pid === c.pid && r.ev === 'start') ?? {}).at ?? null,
      ready_at: (fleet.reports.find((r) => r.pid === c.pid && r.ev === 'ready') ?? {}).at ?? null,
      worker_ids: c.workerIds,
      exit: c.exit,
      ended_by: c.endedBy,
      stopped: c.stopped,
    }));
    const observed = {
      seed: args.seed,
      bullmq,
      lock: { ...LOCK, lockRenewTime: LOCK_RENEW },
      jobTypes: JOB_TYPES,
      stalledLogged: STALLED_LOGGED,
      containers,
      reports: fleet.reports,
      stream: ctx.stream,
      probes: ctx.probes,
      faults: [...ctx.faults].sort((a, b) => a.id - b.id),
      plan,
      ledger: ledgerRows,
      received: ctx.received,
      window: { produced_from: producedFrom, produced_until: ctx.producedUntil, finished_at: ctx.finishedAt },
    };
    const truth = deriveTruth(observed);
    truth.run = {
      seed: args.seed,
      bullmq: bullmq.version,
      pods: args.pods,
      minutes: args.minutes,
      faults_flag: args.faults,
      max_len_events: args.maxLenEvents,
      started_at: ctx.startedAt,
      finished_at: Date.now(),
      seconds: (Date.now() - ctx.startedAt) / 1000,
      postgres_version: ctx.pg.version,
      redis_version: /redis_version:(\S+)/.exec(await ctx.redis.info('server'))?.[1] ?? null,
      streams: trimmed,
      job_hashes: jobs,
      ledger_rows: ledgerRows.length,
      receiver_records: ctx.received.length,
      pod_logs: podLogs.map((p) => `${p}.log`),
      captured,
      notes: [
        ...ctx.notes,
        'no ledger column names the job type (it is the lifecycle prefix): the docs give no way to read it',
      ],
    };
    // The raw observations too: `node tests/e2e/fleet-truth.mjs OUTDIR` derives the truth again.
    writeFileSync(join(outdir, 'truth', 'observed.json'), `${JSON.stringify({ ...observed, run: truth.run })}\n`);
    writeFileSync(join(outdir, 'truth', 'truth.json'), `${JSON.stringify(truth, null, 1)}\n`);
    const summary = {
      outdir,
      seed: args.seed,
      bullmq: bullmq.version,
      pods: args.pods,
      seconds: truth.run.seconds,
      faults: truth.faults.map((f) => (f.skipped ? `${f.kind} (skipped: ${f.skipped})` : f.kind)),
      counts: truth.counts,
      notes: truth.run.notes,
    };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } finally {
    // The pods first (PostgreSQL's clients), then PostgreSQL with a clean shutdown, then the rest.
    if (fleet) {
      fleet.stopping = true;
      for (const c of fleet.containers) if (c.exit === null) c.child.kill('SIGKILL');
      await Promise.all(fleet.containers.map((c) => c.child.exited));
    }
    await ctx.pg?.stop().catch(() => {});
    killAll();
    for (const reader of ctx.streamReaders ?? []) {
      reader.stop = true;
      reader.conn.disconnect();
    }
    for (const queue of Object.values(ctx.queues ?? {})) await queue.close().catch(() => {});
    ctx.receiver?.close();
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

// Every wait is bounded; the whole run is too: the producing minutes and 6 minutes more.
const overallMs = (Number(/--minutes\s+(\S+)/.exec(process.argv.join(' '))?.[1]) || 2) * 60_000 + 360_000;
setTimeout(() => {
  process.stderr.write(`fleet: gave up after ${overallMs / 1000} s\n`);
  killAll();
  process.exit(1);
}, overallMs).unref();

main()
  .then(() => process.exit(0))
  .catch((error) => {
    process.stderr.write(`fleet: ${error instanceof HarnessError ? error.message : error?.stack ?? error}\n`);
    killAll();
    process.exit(1);
  });
