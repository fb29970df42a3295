// BullMQ 6.7.0 on its PostgreSQL backend (`createPostgresBackend`), on a PostgreSQL of the
// harness's own (postgres.mjs), staging the three stalls leasetrace reads from the backend's tables:
//
//   node pg-stalled.mjs OUT_DIR
//
// writes OUT_DIR/job.csv, event.csv, meta.csv (psql `\copy (SELECT …) TO … CSV HEADER`),
// job.jsonl, event.jsonl, meta.jsonl (psql -At, one `row_to_json` a line), events.json (one
// `json_agg` array), workers.log (the workers' `error` events, as an app logs them), bullmq.json
// (the workers' options), leasetrace.toml (the CSV exports, the log and the options as a case)
// and truth.json: what the processes printed (`seen`, epoch ms on this
// machine's clock, which is also the workers' and the database's) and the event rows as the
// harness read them itself (`recorded`).
//
// Two queues share the schema `bullmq` (and its event sequence):
// - `pr-review`, job `pr-4412`: worker-a takes it and is frozen (SIGSTOP: a VM paused, a GC
//   storm) past its lock; worker-b's stalled check moves it (`stalled`), worker-b reruns it, and
//   worker-a is thawed (SIGCONT) while worker-b still runs it: its completion is refused with
//   `Lock mismatch` (the stalled rerun and the stale completion).
// - `nightly-sweep`, job `sweep-1`: worker-c takes it and is SIGKILLed, worker-d reruns it and is
//   SIGKILLed, worker-e's check moves it a second time, over maxStalledCount 1, with the deferred
//   failure `job stalled more than allowable limit`, and worker-e fails it on taking it, without
//   calling the processor (the stall limit).

import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const REVIEW = 'pr-review';
const SWEEP = 'nightly-sweep';
const LOCK_MS = 2000;
const STALLED_INTERVAL_MS = 1000;
const MAX_STALLED = 1;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function worker([name, queue, url, busyMs, logFile]) {
  const { Worker, createPostgresBackend } = await import('bullmq6');
  // What the harness sees on stdout; the worker's errors also go to the app's log, a line each in
  // UTC with the same millisecond, as an app's `worker.on('error')` listener writes them.
  const say = (what) => {
    const at = Date.now();
    process.stdout.write(`${JSON.stringify({ ...what, worker: name, queue, at })}\n`);
    if (what.error) appendFileSync(logFile, `${new Date(at).toISOString()} ERROR [${name}] pid=${process.pid} worker error: ${what.error}\n`);
  };
  const w = new Worker(
    queue,
    async (job) => {
      say({ active: job.id });
      await sleep(Number(busyMs));
      return { done: job.id };
    },
    { name, connection: url, lockDuration: LOCK_MS, stalledInterval: STALLED_INTERVAL_MS, maxStalledCount: MAX_STALLED },
    createPostgresBackend,
  );
  w.on('error', (err) => say({ error: err.message }));
  w.on('completed', (job) => say({ completed: job.id }));
  w.on('failed', (job, err) => say({ failed: job?.id, reason: err.message }));
  w.on('stalled', (jobId) => say({ stalled: jobId }));
  process.on('SIGTERM', async () => {
    await w.close(true);
    process.exit(0);
  });
}

// `leasetrace capture --postgres` against the live database (LEASETRACE_BIN names the binary), as
// an on-call engineer runs it: a login role of its own with a password (SCRAM-SHA-256 over TCP),
// every statement of the server logged (`log_statement = 'all'`, the application name in each
// line) so that the test can check that no write reached the server, and an app ledger table with
// rows inside the window and thousands outside it, in a timestamptz and a timestamp column.
// Writes OUT_DIR/captured (pr-review, the window, the ledger by its timestamptz column),
// captured-local (the same window, the ledger by its Seoul wall-clock column), captured-sweep
// (nightly-sweep, no window) and postgres.log (the server's log, statements included).
function captureFromTheDatabase({ pg, dir, outDir, truth }) {
  // The window: from the first activation of pr-4412 (its `added` and `waiting` rows fall
  // before it) to a second after its last row.
  const reviewRows = truth.recorded.filter((row) => row.queue === REVIEW);
  const since = reviewRows.find((row) => row.event === 'active').at;
  const until = Math.max(...reviewRows.map((row) => row.at)) + 1000;
  const password = 'on-call pw';
  pg.psql(`CREATE ROLE oncall LOGIN PASSWORD '${password}'`);
  pg.psql('GRANT USAGE ON SCHEMA bullmq TO oncall');
  pg.psql('GRANT SELECT ON ALL TABLES IN SCHEMA bullmq TO oncall');
  // Every statement logged from here on, named by its session's application.
  pg.psql("ALTER SYSTEM SET log_statement = 'all'");
  pg.psql("ALTER SYSTEM SET log_line_prefix = '%m [%p] app=%a '");
  // The role logs in with its password over TCP (the harness's own connections stay trusted).
  const hba = join(dir, 'data', 'pg_hba.conf');
  writeFileSync(hba, `host all oncall 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, 'utf8')}`);
  pg.psql('SELECT pg_reload_conf()');
  pg.psql('CREATE SCHEMA app');
  pg.psql('CREATE TABLE app.runs (id bigserial PRIMARY KEY, ts timestamptz NOT NULL, local_ts timestamp NOT NULL, run_id text, job_id text, event text, worker text)');
  pg.psql('GRANT USAGE ON SCHEMA app TO oncall');
  pg.psql('GRANT SELECT ON app.runs TO oncall');
  const rows = truth.seen
    .filter((seen) => seen.active || seen.completed)
    .map((seen) => {
      const job = seen.active ?? seen.completed;
      const event = seen.active ? 'round_started' : 'round_finished';
      const ts = new Date(seen.at).toISOString();
      return `('${ts}', ('${ts}'::timestamptz AT TIME ZONE 'Asia/Seoul'), 'run-${seen.worker}-${job}', '${job}', '${event}', '${seen.worker}')`;
    });
  pg.psql(`INSERT INTO app.runs (ts, local_ts, run_id, job_id, event, worker) VALUES ${rows.join(', ')}`);
  // Thousands of rows a day before and a day after: a ledger much larger than the window.
  for (const sign of ['-', '+']) {
    pg.psql(
      `INSERT INTO app.runs (ts, local_ts, run_id, job_id, event, worker) SELECT t, t AT TIME ZONE 'Asia/Seoul', 'old-' || i, 'other-' || i, 'round_started', 'worker-z' FROM generate_series(1, 5000) AS i, LATERAL (SELECT to_timestamp(${since / 1000}) ${sign} interval '1 day' ${sign} i * interval '1 second' AS t) AS at`,
    );
  }
  truth.capture = {
    since,
    until,
    ledgerInWindow: truth.seen.filter((seen) => (seen.active || seen.completed) && seen.at >= since && seen.at < until).length,
  };
  const iso = (ms) => new Date(ms).toISOString();
  const url = `postgres://oncall:${encodeURIComponent(password)}@127.0.0.1:${pg.port}/postgres?sslmode=disable`;
  const capture = (out, args, query = 'sslmode=disable') =>
    execFileSync(process.env.LEASETRACE_BIN, ['capture', join(outDir, out), '--postgres', url.replace('sslmode=disable', query), ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
  const window = ['--since', iso(since), '--until', iso(until)];
  truth.capture.summary = capture('captured', ['--queue', REVIEW, ...window, '--ledger-query', 'SELECT * FROM app.runs', '--ledger-time-column', 'ts']);
  capture('captured-local', [
    '--queue', REVIEW, ...window,
    '--ledger-query', 'SELECT id, local_ts, run_id, job_id, event, worker FROM app.runs',
    '--ledger-time-column', 'local_ts', '--ledger-tz', 'Asia/Seoul',
  ]);
  capture('captured-sweep', ['--queue', SWEEP]);
  // A misspelt queue: an error naming the queues there are, and nothing written.
  try {
    capture('captured-typo', ['--queue', 'pr-reveiw']);
    truth.capture.typo = 'it succeeded';
  } catch (error) {
    truth.capture.typo = error.stderr;
  }
  truth.capture.tls = captureOverTls({ pg, dir, outDir, capture });
  pg.psql('ALTER SYSTEM RESET log_statement');
  pg.psql('SELECT pg_reload_conf()');
  copyFileSync(join(dir, 'postgres.log'), join(outDir, 'postgres.log'));
}

// TLS: the server given a certificate of the harness's own CA (openssl) for the name
// db.example only, not for 127.0.0.1, which capture connects to. sslmode=require encrypts and
// checks nothing, as libpq; verify-ca checks the chain with sslrootcert; verify-full refuses the
// name, and without sslrootcert the CA. Returns each capture's outcome (its record's `tls`, or its
// error), or why it was not run.
function captureOverTls({ pg, dir, outDir, capture }) {
  const certs = join(dir, 'certs');
  mkdirSync(certs);
  const openssl = (args) => execFileSync('openssl', args, { cwd: certs, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    openssl(['version']);
  } catch (error) {
    return { skipped: `no openssl (${error.message.split('\n')[0]})` };
  }
  writeFileSync(join(certs, 'ext.cnf'), 'subjectAltName=DNS:db.example\nbasicConstraints=CA:FALSE\n');
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=leasetrace-test-ca']);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=db.example']);
  openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf']);
  // The server reads its key only when it belongs to it and no one else may read it.
  if (typeof process.getuid === 'function' && process.getuid() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    for (const name of ['server.key', 'server.pem']) chownSync(join(certs, name), uid, gid);
  }
  chmodSync(join(certs, 'server.key'), 0o600);
  pg.psql(`ALTER SYSTEM SET ssl_cert_file = '${join(certs, 'server.pem')}'`);
  pg.psql(`ALTER SYSTEM SET ssl_key_file = '${join(certs, 'server.key')}'`);
  pg.psql('ALTER SYSTEM SET ssl = on');
  pg.psql('SELECT pg_reload_conf()');
  const ca = encodeURIComponent(join(certs, 'ca.pem'));
  const outcome = {};
  for (const [name, query] of [
    ['require', 'sslmode=require'],
    ['verify-ca', `sslmode=verify-ca&sslrootcert=${ca}`],
    ['verify-full', `sslmode=verify-full&sslrootcert=${ca}`],
    ['verify-full-system-cas', 'sslmode=verify-full'],
  ]) {
    try {
      capture(`captured-tls-${name}`, ['--queue', SWEEP], query);
      outcome[name] = { tls: JSON.parse(readFileSync(join(outDir, `captured-tls-${name}`, 'capture.json'), 'utf8')).target.tls };
    } catch (error) {
      outcome[name] = { error: error.stderr ?? error.message };
    }
  }
  pg.psql('ALTER SYSTEM SET ssl = off');
  pg.psql('SELECT pg_reload_conf()');
  return outcome;
}

async function harness([outDir]) {
  const children = [];
  const track = (child) => {
    children.push(child);
    child.exited = new Promise((resolve) => child.on('exit', resolve));
    return child;
  };
  const dir = mkdtempSync(join(tmpdir(), 'pg-stalled-'));
  mkdirSync(outDir, { recursive: true });
  const { startPostgres } = await import('./postgres.mjs');
  const pg = await startPostgres(dir, { track, logFile: join(dir, 'postgres.log'), sleep });
  const url = `postgres://postgres@127.0.0.1:${pg.port}/postgres`;
  const truth = { lockDuration: LOCK_MS, stalledInterval: STALLED_INTERVAL_MS, maxStalledCount: MAX_STALLED, postgres: pg.version, seen: [] };
  const logFile = join(outDir, 'workers.log');
  writeFileSync(logFile, '');
  const spawnWorker = (name, queue, busyMs) => {
    const child = track(
      spawn(process.execPath, [new URL(import.meta.url).pathname, '--worker', name, queue, url, String(busyMs), logFile], {
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    child.stdout.setEncoding('utf8');
    child.seen = [];
    let rest = '';
    child.stdout.on('data', (text) => {
      const lines = (rest + text).split('\n');
      rest = lines.pop();
      for (const line of lines) {
        if (!line.trim()) continue;
        const seen = JSON.parse(line);
        truth.seen.push(seen);
        child.seen.push(seen);
      }
    });
    return child;
  };
  const until = async (what, test, ms = 20000) => {
    const deadline = Date.now() + ms;
    while (!test()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(20);
    }
  };
  try {
    const { Queue, createPostgresBackend, runMigrations } = await import('bullmq6');
    // The schema, as an operator creates it before the workers start (they only check it).
    const { default: pgClient } = await import('pg');
    const admin = new pgClient.Client({ connectionString: url });
    await admin.connect();
    await runMigrations(admin, 'bullmq', {});
    await admin.end();
    const review = new Queue(REVIEW, { connection: url }, createPostgresBackend);
    const sweep = new Queue(SWEEP, { connection: url }, createPostgresBackend);

    // The stalled rerun and the stale completion.
    const a = spawnWorker('worker-a', REVIEW, 1500);
    await sleep(1000);
    const job = await review.add('review', { pr: 'PR-4412' }, { jobId: 'pr-4412' });
    truth.reviewJob = job.id;
    await until('worker-a to take the job', () => a.seen.some((s) => s.active === job.id));
    // Frozen before its first renewal (0.5 s after the activation at the earliest): its lock then
    // runs out at the activation + lockDuration.
    await sleep(20);
    a.kill('SIGSTOP');
    truth.stoppedAt = Date.now();
    // worker-b holds the job long enough for worker-a's late completion to find it active.
    const b = spawnWorker('worker-b', REVIEW, 3000);
    await until('worker-b to rerun the job', () => b.seen.some((s) => s.active === job.id));
    a.kill('SIGCONT');
    truth.continuedAt = Date.now();
    await until('worker-a to be refused', () => a.seen.some((s) => s.error));
    await until('worker-b to complete the rerun', () => b.seen.some((s) => s.completed === job.id));

    // The stall limit: two workers killed in turn, the third fails the job.
    const c = spawnWorker('worker-c', SWEEP, 60000);
    await sleep(1000);
    const swept = await sweep.add('sweep', { night: '2026-12-06' }, { jobId: 'sweep-1' });
    truth.sweepJob = swept.id;
    await until('worker-c to take the sweep', () => c.seen.some((s) => s.active === swept.id));
    c.kill('SIGKILL');
    truth.killed = [{ worker: 'worker-c', at: Date.now() }];
    const d = spawnWorker('worker-d', SWEEP, 60000);
    await until('worker-d to rerun the sweep', () => d.seen.some((s) => s.active === swept.id));
    d.kill('SIGKILL');
    truth.killed.push({ worker: 'worker-d', at: Date.now() });
    const e = spawnWorker('worker-e', SWEEP, 200);
    await until('worker-e to fail the sweep', () => e.seen.some((s) => s.failed === swept.id));

    for (const child of [a, b, e]) child.kill('SIGTERM');
    await Promise.all([a.exited, b.exited, e.exited]);
    await review.close();
    await sweep.close();

    // The export, as a responder makes it with psql: CSV with a header, JSON a row a line, and
    // one json_agg array of the event table.
    const tables = { job: 'queue, id', event: 'id', meta: 'queue, field' };
    for (const [table, order] of Object.entries(tables)) {
      const csv = join(outDir, `${table}.csv`);
      pg.psql(`\\copy (SELECT * FROM bullmq.${table} ORDER BY ${order}) TO '${csv}' CSV HEADER`);
      const lines = pg.psql(`SELECT row_to_json(t) FROM bullmq.${table} t ORDER BY ${order}`, { args: ['-At'] });
      writeFileSync(join(outDir, `${table}.jsonl`), lines);
    }
    // What the database recorded, as the harness reads it itself (epoch ms, the database's clock).
    const { rows } = await (async () => {
      const client = new pgClient.Client({ connectionString: url });
      await client.connect();
      try {
        return await client.query('SELECT queue, id::int, event, data, created_at_ms::text AS at FROM bullmq.event ORDER BY id');
      } finally {
        await client.end();
      }
    })();
    truth.recorded = rows.map((row) => ({ queue: row.queue, event: row.event, jobId: row.data.jobId ?? null, at: Number(row.at) }));
    writeFileSync(join(outDir, 'events.json'), pg.psql('SELECT json_agg(t ORDER BY id) FROM bullmq.event t', { args: ['-At'] }));
    const options = { lockDuration: LOCK_MS, stalledInterval: STALLED_INTERVAL_MS, maxStalledCount: MAX_STALLED, version: '6.7.0' };
    writeFileSync(join(outDir, 'bullmq.json'), `${JSON.stringify(options, null, 2)}\n`);
    // The case, as a responder declares it: the CSV exports, the app's log and the options.
    const manifest = [
      ['bullmq-events', 'event.csv'],
      ['bullmq-jobs', 'job.csv'],
      ['bullmq-jobs', 'meta.csv'],
      ['log', 'workers.log', 'UTC'],
      ['bullmq-params', 'bullmq.json'],
    ]
      .map(([kind, path, tz]) => `[[sources]]\nkind = "${kind}"\npath = "${path}"\n${tz ? `tz = "${tz}"\n` : ''}`)
      .join('\n');
    writeFileSync(join(outDir, 'leasetrace.toml'), manifest);
    if (process.env.LEASETRACE_BIN) captureFromTheDatabase({ pg, dir, outDir, truth });
    writeFileSync(join(outDir, 'truth.json'), `${JSON.stringify(truth, null, 2)}\n`);
    await pg.stop();
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}

if (process.argv[2] === '--worker') await worker(process.argv.slice(3));
else await harness(process.argv.slice(2));
