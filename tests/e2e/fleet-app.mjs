// The application the fleet harness runs (tests/e2e/fleet.mjs starts it, fleet-pod.mjs is one pod
// of it): its job types, its queues, its ledger table. The orchestrator, the pods and the manifest
// the harness writes all read these definitions, so that they cannot drift apart.
//
// One PostgreSQL table holds the ledger of every job type, the way a team that "logs every job
// run" has it: the lifecycle in one column of dotted values with one prefix per job type
// (`sweep.begin`, `sweep.pick`, `notify.send`, ...), the final state in another (`done` /
// `failed`, on the row that ends a run), and the queue, job id, run id, item, idempotency key and
// worker in columns of their own. None of the names is leasetrace's default.
//
// Only Node built-ins may be imported here: the pods load this before BullMQ.

export const DATABASE = 'fleet_app';
export const TABLE = 'job_ledger';

/** The app's migration. `logged_at` is the database's clock (`now()`, microseconds). */
export const DDL = `
create table ${TABLE} (
  id           bigserial primary key,
  logged_at    timestamptz not null default now(),
  queue_name   text not null,
  bull_job_id  text not null,
  run_ref      text not null,
  lifecycle    text not null,
  final_state  text,
  item_ref     text,
  idem_key     text,
  worker_node  text not null,
  details      text
);
create index ${TABLE}_run on ${TABLE} (run_ref);
`;

/** leasetrace ledger field -> the app's column, as a user who read docs/inputs/ledger.md maps it. */
export const COLUMNS = {
  time: 'logged_at',
  event: 'lifecycle',
  queue: 'queue_name',
  job: 'bull_job_id',
  run: 'run_ref',
  status: 'final_state',
  item: 'item_ref',
  key: 'idem_key',
  worker: 'worker_node',
  detail: 'details',
};

/** The second word of a lifecycle value -> the ledger event kind it means. */
export const STEPS = {
  begin: 'round-started',
  pick: 'item-selected',
  send: 'effect-posted',
  end: 'round-finished',
  reaped: 'round-failed',
};

/** Queues, and the lock settings every worker of the app runs with (both queues the same). */
export const QUEUES = ['review', 'notify'];
export const LOCK = { lockDuration: 4000, stalledInterval: 1000, maxStalledCount: 1 };
export const CONCURRENCY = { review: 3, notify: 2 };
/** Queues whose workers log BullMQ's `stalled` event (the team added the listener on one only). */
export const STALLED_LOGGED = ['notify'];

/**
 * The job types: queue, ledger prefix, how they are added and what they do.
 * - pr-sweep: the scheduled sweep of the incident. Each round picks up to `picks` PRs nobody has
 *   reviewed yet from the shared candidate list and posts a review of each to the receiver, with
 *   no idempotency key.
 * - digest: a second scheduler, on the other queue: one digest per round, keyed by its slot.
 * - review-pr: one-off, custom job id = the webhook delivery id (`gh-<n>`), which notify-user jobs
 *   use too: the same id in both queues. Fails by design on some attempts (HTTP 502), some on all.
 * - notify-user: one-off, the same delivery ids; sends with an idempotency key derived from the
 *   job (the receiver dedupes it); some attempts fail after sending (the retry sends again), some
 *   jobs carry input the receiver's API refuses (a 400 the app retries anyway).
 * - backfill: one-off, long (longer than lockDuration: the lock is renewed), no effect.
 * Every other job type's run stays well under lockDuration - lockRenewTime / 2 (3 s): only a
 * backfill could outlive its lock by blocking its event loop (docs/findings/lock-headroom.md).
 */
export const JOB_TYPES = {
  'pr-sweep': { queue: 'review', prefix: 'sweep', scheduled: true, every: 4000, scanMs: 300, reviewMs: 1100, picks: 2 },
  digest: { queue: 'notify', prefix: 'digest', scheduled: true, every: 7000, workMs: 400 },
  'review-pr': { queue: 'review', prefix: 'review', attempts: 3, backoff: { type: 'exponential', delay: 1000 }, workMs: [1200, 2400] },
  'notify-user': { queue: 'notify', prefix: 'notify', attempts: 4, backoff: { type: 'exponential', delay: 800 }, workMs: [300, 1500] },
  backfill: { queue: 'review', prefix: 'backfill', attempts: 1, workMs: [9000, 12000] },
};

/** Every lifecycle value the app writes (the manifest's `events`). */
export function lifecycleValues() {
  const values = {};
  for (const type of Object.values(JOB_TYPES)) {
    for (const [step, kind] of Object.entries(STEPS)) values[`${type.prefix}.${step}`] = kind;
  }
  return values;
}

/** Seoul has had no daylight saving since 1988: KST is UTC+9 all year. */
export function kst(ms) {
  return new Date(ms + 9 * 3600 * 1000).toISOString().replace('T', ' ').replace('Z', '');
}
