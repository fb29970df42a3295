//! `leasetrace capture OUT --postgres URL --queue NAME`: a read-only snapshot of what BullMQ's
//! PostgreSQL backend (bullmq 6, `createPostgresBackend`) keeps about one queue, and optionally
//! of the team's own ledger table, written as a case folder `analyze` reads as it is.
//!
//! The backend keeps its evidence in three tables of one schema (`bullmq`): `event` (the events
//! stream, trimmed to `maxLenEvents`), `job` (one row a job, overwritten on every activation) and
//! `meta` (the last stalled check). `capture` copies them in the shapes the readers already know
//! (`psql \copy ... CSV HEADER`: formats `pg-event-table`, `pg-job-table`, `pg-meta-table`), from
//! one `REPEATABLE READ READ ONLY` transaction, so the three are one moment of the database, and
//! keeps what no reader takes (the server's clock and version at both ends, the locks held, how
//! many rows the window left out, every statement sent) in `capture.json`, the capture record.
//!
//! Safe on a big, busy database: a read-only session (`wire`), the window pushed into each
//! `WHERE` (`sql`), rows streamed to the files by `COPY ... TO STDOUT` (memory does not grow with
//! the tables), `lock_timeout` so a migration's lock is not waited on. docs/capture.md lists every
//! statement and the shape of every file.

pub mod sql;
pub mod target;
pub mod wire;

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde_json::{Value as Json, json};

use crate::capture::client::Limits;
use crate::capture::escape;
use crate::capture::out::Staging;
use crate::error::{Error, Result};
use crate::progress::Progress;

use sql::{Window, ident, literal};
use target::PgTarget;
use wire::{Answer, Session};

/// The backend's schema when the connection names none (`createPostgresBackend`'s default).
pub const DEFAULT_SCHEMA: &str = "bullmq";

/// The backend's tables capture copies, each with the file it is written to, the columns it
/// must have (bullmq 6.7.0), and its order (the readers place rows of one millisecond in file
/// order).
const TABLES: &[(&str, &str, &[&str], &str)] = &[
    ("event", "event.csv", &["queue", "id", "event", "data", "created_at_ms"], "id"),
    ("job", "job.csv", &["queue", "id", "state", "added_at_ms", "processed_at_ms", "finished_at_ms"], "seq, id"),
    ("meta", "meta.csv", &["queue", "field", "value"], "field"),
];

/// Locks listed in the record, at most (the held ones first, by expiry).
const LOCKS_LISTED: usize = 10_000;

/// Type OIDs of the ledger's time column that capture can push a window into.
const TIMESTAMPTZ: u32 = 1184;
const TIMESTAMP: u32 = 1114;

/// The team's own ledger, read by a query they give.
#[derive(Debug, Clone)]
pub struct LedgerQuery {
    /// A `SELECT` (or `TABLE`, `VALUES`, `WITH ... SELECT`) whose rows are the ledger.
    pub query: String,
    /// The column of its time, which the window is pushed into.
    pub time_column: String,
    /// The zone of a `timestamp` (without zone) time column.
    pub zone: Option<Tz>,
}

/// What `capture --postgres` was asked for, validated (`capture::Options::build`).
#[derive(Debug, Clone)]
pub struct PgOptions {
    pub target: PgTarget,
    pub schema: String,
    pub queue: String,
    pub out: PathBuf,
    pub window: Window,
    pub max_jobs: Option<u64>,
    pub limits: Limits,
    pub max_record_bytes: u64,
    pub ledger: Option<LedgerQuery>,
}

/// The database's clock and version at one moment of the capture.
fn moment(session: &mut Session) -> Result<Json> {
    let statement = "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, current_setting('server_version'), current_setting('server_version_num')";
    let answer = session.rows(statement)?;
    let row = answer.rows.first().ok_or_else(|| session.error(statement, "no row"))?;
    let cell = |i: usize| row.get(i).cloned().flatten();
    let micros = cell(0).and_then(|t| t.parse::<i64>().ok()).ok_or_else(|| session.error(statement, "no clock"))?;
    Ok(json!({
        "server_time": DateTime::from_timestamp_micros(micros).map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)),
        "server_time_us": micros,
        "server_version": cell(1),
        "server_version_num": cell(2),
    }))
}

fn one_number(session: &mut Session, statement: &str) -> Result<Vec<Option<i64>>> {
    let answer = session.rows(statement)?;
    let row = answer.rows.into_iter().next().unwrap_or_default();
    Ok(row.into_iter().map(|cell| cell.and_then(|c| c.parse().ok())).collect())
}

/// What the capture found, for the summary printed on stdout.
pub fn run(options: &PgOptions, progress: &Progress) -> Result<super::Outcome> {
    super::out::check(&options.out)?;
    let mut session = Session::connect(&options.target, options.limits)?;
    session.rows("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")?;
    let settings = session.rows(
        "SELECT current_setting('transaction_read_only'), current_setting('transaction_isolation'), current_setting('standard_conforming_strings')",
    )?;
    let setting = |i: usize| settings.rows.first().and_then(|r| r.get(i).cloned().flatten()).unwrap_or_default();
    if setting(0) != "on" || setting(1) != "repeatable read" || setting(2) != "on" {
        return Err(session.error(
            "SELECT current_setting(...)",
            &format!(
                "the transaction is not what capture asked for (read only: {}, isolation: {}, standard_conforming_strings: {}): nothing is read",
                setting(0),
                setting(1),
                setting(2)
            ),
        ));
    }
    let start = moment(&mut session)?;
    let schema = ident(&options.schema);
    let queue = literal(&options.queue);

    check_tables(&mut session, &options.schema)?;
    check_queue(&mut session, &schema, options)?;

    // Counts first: what the window leaves out of each table (the same snapshot as the copies).
    let window = options.window;
    let event_counts = one_number(
        &mut session,
        &format!(
            "SELECT count(*), count(*) FILTER (WHERE NOT ({})), min(id), min(created_at_ms), max(created_at_ms) FROM {schema}.event WHERE queue = {queue}",
            window.millis("created_at_ms")
        ),
    )?;
    let job_counts = one_number(
        &mut session,
        &format!(
            "SELECT count(*), count(*) FILTER (WHERE NOT ({})) FROM {schema}.job WHERE queue = {queue}",
            window.job_life()
        ),
    )?;
    let count = |counts: &[Option<i64>], i: usize| counts.get(i).copied().flatten();
    let events_in_table = count(&event_counts, 0).unwrap_or(0);
    let events_outside = count(&event_counts, 1).unwrap_or(0);
    let jobs_in_table = count(&job_counts, 0).unwrap_or(0);
    let jobs_outside = count(&job_counts, 1).unwrap_or(0);
    let jobs_in_window = u64::try_from(jobs_in_table - jobs_outside).unwrap_or(0);
    let jobs_beyond_max = options.max_jobs.map_or(0, |max| jobs_in_window.saturating_sub(max));

    let mut staging = Staging::begin(&options.out)?;
    let bar = progress.items("tables of the queue", "rows", None);
    let mut copied = Vec::new();
    for (table, file, _, order) in TABLES {
        let filter = match *table {
            "event" => window.millis("created_at_ms"),
            "job" => window.job_life(),
            _ => "TRUE".into(),
        };
        let limit = match (*table, options.max_jobs) {
            ("job", Some(max)) => format!(" LIMIT {max}"),
            _ => String::new(),
        };
        let statement = format!(
            "COPY (SELECT * FROM {schema}.{table} WHERE queue = {queue} AND {filter} ORDER BY {order}{limit}) TO STDOUT WITH (FORMAT csv, HEADER)"
        );
        let rows = copy_to(&mut session, &mut staging, file, &statement, options.max_record_bytes)?;
        if let Some(bar) = &bar {
            bar.add(rows);
        }
        copied.push((*table, *file, rows));
    }

    // The meta rows again, as values the record names (maxLenEvents, the last stalled check).
    let meta = session
        .rows(&format!("SELECT field, value FROM {schema}.meta WHERE queue = {queue} ORDER BY field LIMIT 1000"))?;
    let meta_value = |name: &str| {
        meta.rows
            .iter()
            .find(|r| r.first().cloned().flatten().as_deref() == Some(name))
            .and_then(|r| r.get(1).cloned().flatten())
    };
    let now_ms = start["server_time_us"].as_i64().unwrap_or_default() / 1000;
    let locks = session.rows(&format!(
        "SELECT id, state, lock_token, locked_until_ms, processed_by FROM {schema}.job WHERE queue = {queue} AND lock_token IS NOT NULL ORDER BY locked_until_ms DESC NULLS LAST LIMIT {LOCKS_LISTED}"
    ))?;
    let locks: Vec<Json> = locks
        .rows
        .iter()
        .map(|row| {
            let cell = |i: usize| row.get(i).cloned().flatten();
            let until = cell(3).and_then(|t| t.parse::<i64>().ok());
            json!({
                "job_id": cell(0),
                "job_state": cell(1),
                "token": cell(2),
                "locked_until_ms": until,
                "expires_at": until.and_then(DateTime::from_timestamp_millis).map(crate::time::format_rfc3339),
                "ms_left_at_start": until.map(|u| u - now_ms),
                "processed_by": cell(4),
            })
        })
        .collect();

    let ledger = match &options.ledger {
        Some(ledger) => Some(copy_ledger(&mut session, &mut staging, ledger, window, options.max_record_bytes)?),
        None => None,
    };
    let end = moment(&mut session)?;
    session.rows("ROLLBACK")?;
    drop(bar);
    let statements = session.statements.clone();
    let tls = session.tls;
    let server = session.target().to_string();
    session.close();

    let rows_of = |name: &str| copied.iter().find(|(t, ..)| *t == name).map_or(0, |(.., n)| *n);
    let stamp = |t: Option<DateTime<Utc>>| t.map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    let millis_text = |ms: Option<i64>| ms.and_then(DateTime::from_timestamp_millis).map(crate::time::format_rfc3339);
    let record = json!({
        "schema": super::RECORD_SCHEMA,
        "tool": format!("leasetrace {}", env!("CARGO_PKG_VERSION")),
        "backend": "postgres",
        "target": {
            "server": server,
            "auth": options.target.password_from.map_or("no password".to_string(), |from| format!("password ({from})")),
            "tls": tls,
        },
        "queue": options.queue,
        "schema_name": options.schema,
        "transaction": "REPEATABLE READ READ ONLY: every table as of one snapshot of the database",
        "start": start,
        "end": end,
        "bounds": {
            "since": stamp(window.since),
            "until": stamp(window.until),
            "max_jobs": options.max_jobs,
            "events_outside_window": events_outside,
            "jobs_outside_window": jobs_outside,
            "jobs_beyond_max_jobs": jobs_beyond_max,
        },
        "event_table": {
            "file": "event.csv",
            "rows_of_queue": events_in_table,
            "captured": rows_of("event"),
            "first_id": count(&event_counts, 2),
            "first_at": millis_text(count(&event_counts, 3)),
            "last_at": millis_text(count(&event_counts, 4)),
            "max_len_events": meta_value("opts.maxLenEvents"),
        },
        "job_table": {"file": "job.csv", "rows_of_queue": jobs_in_table, "captured": rows_of("job")},
        "meta_table": {"file": "meta.csv", "captured": rows_of("meta"), "stalled_check": meta_value("stalled-check")},
        "locks": locks,
        "ledger": ledger,
        "statements": statements,
        "worker_options": "BullMQ keeps the workers' options (lockDuration, lockRenewTime, stalledInterval, maxStalledCount) in the worker processes only: the database does not store them, so this capture cannot hold them. Put the workers' options file in this folder and uncomment the bullmq-params source in leasetrace.toml (or give --params FILE).",
    });
    let record_path = staging.file("capture.json");
    let mut text = serde_json::to_string_pretty(&record)
        .map_err(|e| Error::Write { path: record_path.clone(), source: e.into() })?;
    text.push('\n');
    super::write_synced(&record_path, text.as_bytes())?;
    let manifest_path = staging.file("leasetrace.toml");
    let manifest = manifest(options, &server, start["server_time"].as_str().unwrap_or("?"), ledger.as_ref());
    super::write_synced(&manifest_path, manifest.as_bytes())?;
    staging.commit()?;

    let elapsed_ms =
        (end["server_time_us"].as_i64().unwrap_or(0) - start["server_time_us"].as_i64().unwrap_or(0)) / 1000;
    let seconds = f64::from(u32::try_from(elapsed_ms).unwrap_or(u32::MAX)) / 1000.0;
    let held = record["locks"]
        .as_array()
        .map_or(0, |l| l.iter().filter(|l| l["ms_left_at_start"].as_i64().is_some_and(|ms| ms > 0)).count());
    let outside = |n: i64| if n > 0 { format!(" ({n} more outside the window)") } else { String::new() };
    let mut summary = format!(
        "captured queue '{}' from {} (schema {}) into {} in {}\n  event table: {} rows{}\n  job table: {} rows{}{}\n  meta table: {} rows; locks held: {held}\n",
        escape::visible(&options.queue),
        server,
        escape::visible(&options.schema),
        escape::visible(&options.out.display().to_string()),
        crate::time::format_duration(seconds.max(0.0)),
        rows_of("event"),
        outside(events_outside),
        rows_of("job"),
        outside(jobs_outside),
        if jobs_beyond_max > 0 { format!(" ({jobs_beyond_max} more not written: --max-jobs)") } else { String::new() },
        rows_of("meta"),
    );
    if let Some(ledger) = &record["ledger"].as_object() {
        let _ = writeln!(summary, "  ledger: {} rows (ledger.csv)", ledger["captured"]);
    }
    summary.push_str("  record: capture.json; manifest: leasetrace.toml (add the workers' options file: the database does not store them)\n");
    Ok(super::Outcome { summary })
}

/// A `COPY ... TO STDOUT` into `file` of the staging folder: each row written as it arrives,
/// none longer than what analyze reads of a line.
fn copy_to(
    session: &mut Session,
    staging: &mut Staging,
    file: &'static str,
    statement: &str,
    max_record_bytes: u64,
) -> Result<u64> {
    let path = staging.file(file);
    let mut out = std::io::BufWriter::with_capacity(
        1 << 20,
        std::fs::File::create(&path).map_err(|source| Error::Write { path: path.clone(), source })?,
    );
    let mut write_error = None;
    let rows = session.copy_out(statement, |row| {
        if row.len() as u64 > max_record_bytes {
            return Err(format!(
                "a row of {} in {file}, longer than --max-record-bytes ({}): analyze would refuse it (raise both --max-record-bytes here and --max-line-bytes there)",
                super::size(row.len() as u64),
                super::size(max_record_bytes)
            ));
        }
        out.write_all(row).map_err(|e| {
            let text = e.to_string();
            write_error = Some(e);
            format!("cannot write {file}: {text}")
        })
    });
    if let Some(source) = write_error {
        return Err(Error::Write { path, source });
    }
    let rows = rows?;
    let file_handle = out.into_inner().map_err(|e| Error::Write { path: path.clone(), source: e.into_error() })?;
    file_handle.sync_all().map_err(|source| Error::Write { path, source })?;
    // The header is a row of COPY's too.
    Ok(rows.saturating_sub(1))
}

/// Is this the backend's schema? Each of its three tables with the columns capture reads.
fn check_tables(session: &mut Session, schema: &str) -> Result<()> {
    let statement = format!(
        "SELECT table_name::text, string_agg(column_name::text, ',') FROM information_schema.columns WHERE table_schema = {} AND table_name IN ('event', 'job', 'meta') GROUP BY table_name",
        literal(schema)
    );
    let answer = session.rows(&statement)?;
    let mut missing = Vec::new();
    for (table, _, columns, _) in TABLES {
        let found = answer.rows.iter().find(|r| r.first().cloned().flatten().as_deref() == Some(*table));
        match found.and_then(|r| r.get(1).cloned().flatten()) {
            None => missing.push(format!("{schema}.{table}")),
            Some(have) => {
                let have: Vec<&str> = have.split(',').collect();
                let lacking: Vec<&str> = columns.iter().copied().filter(|c| !have.contains(c)).collect();
                if !lacking.is_empty() {
                    return Err(session.error(
                        &statement,
                        &format!(
                            "{schema}.{table} has no column(s) {}: not the table of BullMQ's PostgreSQL backend (bullmq 6.7.0's schema), or another version of it (leasetrace docs inputs/postgres)",
                            lacking.join(", ")
                        ),
                    ));
                }
            }
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let others = session.rows(
        "SELECT DISTINCT table_schema::text FROM information_schema.tables WHERE table_name IN ('event', 'job', 'meta') AND table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1 LIMIT 20",
    )?;
    let others: Vec<String> = others.rows.into_iter().filter_map(|r| r.into_iter().next().flatten()).collect();
    let hint = if others.is_empty() {
        "no schema of this database has them: is this the database the workers connect to?".to_string()
    } else {
        format!("schemas that have tables of those names: {} (--schema NAME)", others.join(", "))
    };
    Err(session.error(&statement, &format!("no table {} (or no right to read it): {hint}", missing.join(", "))))
}

/// Is the queue in the tables? A wrong name is an error naming the queues there are.
fn check_queue(session: &mut Session, schema: &str, options: &PgOptions) -> Result<()> {
    let queue = literal(&options.queue);
    let statement = format!(
        "SELECT (SELECT count(*) FROM {schema}.job WHERE queue = {queue}) + (SELECT count(*) FROM {schema}.meta WHERE queue = {queue}) + (SELECT count(*) FROM (SELECT 1 FROM {schema}.event WHERE queue = {queue} LIMIT 1) AS one)"
    );
    let found = one_number(session, &statement)?;
    if found.first().copied().flatten().unwrap_or(0) > 0 {
        return Ok(());
    }
    let names = session.rows(&format!(
        "SELECT queue FROM (SELECT DISTINCT queue FROM {schema}.meta UNION SELECT DISTINCT queue FROM {schema}.job) AS q ORDER BY 1 LIMIT 50"
    ))?;
    let names: Vec<String> = names.rows.into_iter().filter_map(|r| r.into_iter().next().flatten()).collect();
    let there = if names.is_empty() {
        "the tables hold no queue at all".to_string()
    } else {
        let near: Vec<&String> = names.iter().filter(|n| strsim::jaro_winkler(n, &options.queue) > 0.8).collect();
        let near = if near.is_empty() {
            String::new()
        } else {
            format!("; did you mean {}?", near.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(" or "))
        };
        format!("queues in {}: {}{near}", options.schema, names.join(", "))
    };
    Err(session.error(&statement, &format!("no queue '{}' in the job, meta or event table: {there}", options.queue)))
}

/// The ledger query's rows inside the window, into `ledger.csv`; what the record says of it.
fn copy_ledger(
    session: &mut Session,
    staging: &mut Staging,
    ledger: &LedgerQuery,
    window: Window,
    max_record_bytes: u64,
) -> Result<Json> {
    let query = ledger.query.trim().trim_end_matches(';');
    // Its columns and their types, without reading a row.
    let described = format!("SELECT * FROM ({query}) AS ledger LIMIT 0");
    let Answer { columns, .. } = session.rows(&described)?;
    let Some((_, oid)) = columns.iter().find(|(name, _)| *name == ledger.time_column) else {
        let names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
        return Err(session.error(
            &described,
            &format!(
                "--ledger-time-column {}: not a column of the query's rows ({})",
                ledger.time_column,
                names.join(", ")
            ),
        ));
    };
    let column = format!("ledger.{}", ident(&ledger.time_column));
    let (filter, column_type) = match (*oid, ledger.zone) {
        (TIMESTAMPTZ, _) => (window.instants(&column), "timestamptz"),
        (TIMESTAMP, Some(zone)) => (window.wall_times(&column, zone), "timestamp"),
        (TIMESTAMP, None) => {
            return Err(session.error(
                &described,
                &format!(
                    "--ledger-time-column {}: a timestamp without time zone, whose zone capture cannot know: give it with --ledger-tz ZONE (the zone the application writes it in, e.g. Asia/Seoul or UTC)",
                    ledger.time_column
                ),
            ));
        }
        (other, _) => {
            return Err(session.error(
                &described,
                &format!(
                    "--ledger-time-column {}: of type OID {other}, not a timestamptz or timestamp: cast it in the query (`..., to_timestamp(col / 1000.0) AS {} ...` for epoch milliseconds, `col::timestamptz` for text)",
                    ledger.time_column, ledger.time_column
                ),
            ));
        }
    };
    let statement = format!(
        "COPY (SELECT * FROM ({query}) AS ledger WHERE {filter} ORDER BY {column}) TO STDOUT WITH (FORMAT csv, HEADER)"
    );
    let rows = copy_to(session, staging, "ledger.csv", &statement, max_record_bytes)?;
    Ok(json!({
        "file": "ledger.csv",
        "query": query,
        "time_column": ledger.time_column,
        "column_type": column_type,
        "zone": ledger.zone.map(|z| z.name().to_string()),
        "captured": rows,
        "window_pushed_down": filter,
    }))
}

/// The case manifest: the tables capture wrote (and the ledger), the record, and the place of
/// the parameters file. Names are the user's and the server's: TOML strings in values
/// (`toml_string`), made visible in comments.
fn manifest(options: &PgOptions, server: &str, server_time: &str, ledger: Option<&Json>) -> String {
    let comment = escape::visible;
    let toml = super::toml_string;
    let mut text = format!(
        "# Written by `leasetrace capture` from {}, queue {} (schema {}), at {} (the database's clock).\n\
         # capture.json records what was read, with which statements, and what was left out; the report\n\
         # takes its notes from it (the window, how far back the event table reached, locks still held).\n\
         display_tz = \"UTC\"\n\
         capture = \"capture.json\"\n\
         \n\
         [[sources]]\n\
         kind = \"bullmq-events\"   # {schema}.event, COPY ... CSV HEADER\n\
         path = \"event.csv\"\n\
         queue = {}\n\
         \n\
         [[sources]]\n\
         kind = \"bullmq-jobs\"     # {schema}.job\n\
         path = \"job.csv\"\n\
         \n\
         [[sources]]\n\
         kind = \"bullmq-jobs\"     # {schema}.meta\n\
         path = \"meta.csv\"\n",
        comment(server),
        comment(&options.queue),
        comment(&options.schema),
        comment(server_time),
        toml(&options.queue),
        schema = comment(&options.schema),
    );
    if let Some(ledger) = ledger {
        let _ = write!(
            text,
            "\n[[sources]]\nkind = \"ledger\"          # the rows of --ledger-query inside the window\npath = \"ledger.csv\"\ncolumns = {{ time = {} }}\n",
            toml(ledger["time_column"].as_str().unwrap_or("time"))
        );
        if let Some(zone) = ledger["zone"].as_str() {
            let _ = writeln!(text, "tz = {}", toml(zone));
        }
        text.push_str("# Map the ledger's other columns and words: leasetrace docs inputs/ledger\n");
    }
    text.push_str(
        "\n# The workers' options are not in the database: put them here and uncomment (leasetrace docs inputs/params).\n\
         # [[sources]]\n\
         # kind = \"bullmq-params\"\n\
         # path = \"bullmq.json\"\n",
    );
    text
}

/// The names in `dir` (for tests).
#[cfg(test)]
fn written(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(ledger: Option<LedgerQuery>) -> PgOptions {
        PgOptions {
            target: PgTarget::parse(
                "postgres://u@h/db",
                &target::Environment { os_user: None, pgpassword: None, passfile: None },
            )
            .unwrap(),
            schema: "bullmq".into(),
            queue: "pr-review".into(),
            out: "case".into(),
            window: Window::default(),
            max_jobs: None,
            limits: Limits {
                timeout: std::time::Duration::from_secs(1),
                deadline: std::time::Duration::from_secs(1),
                max_reply_bytes: 1 << 20,
            },
            max_record_bytes: 1 << 20,
            ledger,
        }
    }

    #[test]
    fn the_manifest_is_valid_toml_with_every_table_and_the_ledger() {
        let ledger = json!({"time_column": "ts", "zone": "Asia/Seoul"});
        let text = manifest(&options(None), "postgres://h:5432/db", "2026-10-07T00:00:00Z", Some(&ledger));
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        let sources = parsed["sources"].as_array().unwrap();
        let paths: Vec<&str> = sources.iter().map(|s| s["path"].as_str().unwrap()).collect();
        assert_eq!(paths, ["event.csv", "job.csv", "meta.csv", "ledger.csv"]);
        assert_eq!(sources[3]["tz"].as_str(), Some("Asia/Seoul"));
        assert_eq!(sources[0]["queue"].as_str(), Some("pr-review"));
    }

    #[test]
    fn a_capture_that_cannot_connect_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut asked = options(None);
        asked.out = dir.path().join("case");
        // A port nothing listens on, on loopback.
        asked.target.address = target::Address::Tcp { host: "127.0.0.1".into(), ip: true, port: 9 };
        assert!(run(&asked, &Progress::hidden()).is_err());
        assert!(written(dir.path()).is_empty(), "{:?}", written(dir.path()));
    }
}
