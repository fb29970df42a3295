// The app's run ledger when it keeps it in PostgreSQL: the table, in the app's own words, and the
// writer the worker processes use. The harness reads the same definitions to create the table and
// to declare the export in the case manifest, so the three can never drift apart.
//
// The names are deliberately not leasetrace's defaults (`ts_utc`, not `at`; `step`, not `event`;
// `begin`, not `round_started`): a real table has the names its team chose, and the manifest's
// `columns` and `events` mappings have to say what they mean.
//
// Only Node built-ins are imported statically; `pg` loads when a worker opens the ledger.

export const DATABASE = 'review_app';
export const TABLE = 'sweep_ledger';

/** The app's migration. `ts_utc` is the database's clock (`now()`, microseconds), as an app that
 * lets PostgreSQL stamp its rows has it; `due_at` is the round's slot, sent by the app. */
export const DDL = `
create table ${TABLE} (
  id           bigserial primary key,
  ts_utc       timestamptz not null default now(),
  execution_id text not null,
  bull_id      text not null,
  due_at       timestamptz,
  sweep_name   text not null,
  step         text not null,
  subject      text,
  node         text not null,
  phase        text,
  note         text,
  meta         jsonb
);
create index ${TABLE}_execution on ${TABLE} (execution_id);
`;

/** leasetrace ledger field -> the app's column (the manifest's `columns`). `id` and `meta` are the
 * app's own and mean nothing to leasetrace. */
export const COLUMNS = {
  time: 'ts_utc',
  run: 'execution_id',
  job: 'bull_id',
  slot: 'due_at',
  sweep: 'sweep_name',
  event: 'step',
  item: 'subject',
  worker: 'node',
  status: 'phase',
  detail: 'note',
};

/** What happened in a round (the worker's vocabulary, shared with its CSV ledger) -> the word the
 * app writes in `step`, and the ledger event kind it means (the manifest's `events`). */
export const STEPS = {
  round_started: { step: 'begin', kind: 'round-started' },
  item_selected: { step: 'picked', kind: 'item-selected' },
  effect_posted: { step: 'review-created', kind: 'effect-posted' },
  round_finished: { step: 'end', kind: 'round-finished' },
  round_failed: { step: 'reaped', kind: 'round-failed' },
};

/** Opens the worker's connection pool; `write` resolves once the row is committed, with the
 * database's time for it (epoch ms). */
export async function openPgLedger({ host, port, user, database }) {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ host, port, user, database, max: 2 });
  return {
    async write(row) {
      const step = STEPS[row.event];
      if (!step) throw new Error(`pg-ledger: no step for event ${row.event}`);
      const { rows } = await pool.query(
        `insert into ${TABLE} (execution_id, bull_id, due_at, sweep_name, step, subject, node, phase, note, meta)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         returning (extract(epoch from ts_utc) * 1000)::float8 as at`,
        [
          row.runId,
          row.jobId,
          new Date(row.slot),
          row.sweep,
          step.step,
          row.item || null,
          row.worker,
          row.status || null,
          row.detail || null,
          row.meta ? JSON.stringify(row.meta) : null,
        ],
      );
      return Math.floor(rows[0].at);
    },
    close: () => pool.end(),
  };
}
