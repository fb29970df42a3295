//! `leasetrace capture` on a real redis-server holding a real BullMQ queue.
//!
//! Each test starts a redis-server of its own on a free loopback port (as the harness does: no
//! persistence, its own temp dir), fills it with `capture-seed.mjs` (real BullMQ 5.x), and runs the
//! real binary against it. The read-only proof compares `DBSIZE` and `DEBUG DIGEST` (every key,
//! value and expiry) before and after, and lists every command `MONITOR` saw during the capture.
//! Like the other e2e tests, they are skipped outside CI when setup.sh cannot install Redis.
//! The capture of the staged stalled incident (a dead worker's lock still held) is checked by
//! `assert_captured_the_stalled_sweep`, from the stalled scenario of mod.rs.

use std::io::{BufRead, BufReader};
use std::process::Child;
use std::time::{Duration, Instant};

use super::*;

/// A redis-server of the test's own, stopped when dropped.
struct RedisServer {
    child: Child,
    port: u16,
    /// The server's working folder, removed after it stops.
    #[allow(dead_code)]
    dir: tempfile::TempDir,
}

impl RedisServer {
    fn start() -> RedisServer {
        RedisServer::start_with(&[])
    }

    /// With more `redis-server` options (`--stream-node-max-entries 4`).
    fn start_with(options: &[&str]) -> RedisServer {
        let dir = tempfile::tempdir().expect("a temp dir");
        for _ in 0..10 {
            let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let mut child = Command::new("redis-server")
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
                .args(["--enable-debug-command", "local", "--daemonize", "no"])
                .args(options)
                .arg("--dir")
                .arg(dir.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("redis-server runs (tests/e2e/setup.sh installs it)");
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                if ping(port) {
                    return RedisServer { child, port, dir };
                }
                if child.try_wait().unwrap().is_some() {
                    break; // the port was taken: another one
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("could not start redis-server on a loopback port (10 attempts)");
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// One command through `redis-cli` (installed with redis-server), its reply as text.
    fn cli(&self, args: &[&str]) -> String {
        redis_cli(self.port, args).unwrap_or_else(|e| panic!("redis-cli {args:?}: {e}"))
    }

    /// `DBSIZE` and `DEBUG DIGEST` (a digest of every key, its value and its expiry).
    fn state(&self) -> (i64, String) {
        let size = self.cli(&["DBSIZE"]).parse().expect("DBSIZE is a number");
        (size, self.cli(&["DEBUG", "DIGEST"]))
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `redis-cli -p PORT ARGS...`: its output without the line end, or why it failed.
fn redis_cli(port: u16, args: &[&str]) -> Result<String, String> {
    let output = Command::new("redis-cli")
        .args(["-p", &port.to_string()])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&output.stdout).trim_end().to_string();
    // redis-cli exits 0 on an error reply too, and prints it as `(error) ...` or `ERR ...`.
    if output.status.success() && !text.starts_with("ERR") && !text.starts_with("(error)") {
        Ok(text)
    } else {
        Err(format!("{text}{}", String::from_utf8_lossy(&output.stderr)))
    }
}

fn ping(port: u16) -> bool {
    redis_cli(port, &["PING"]).is_ok_and(|reply| reply == "PONG")
}

/// Fills the server with a real BullMQ queue (`capture-seed.mjs`); what it made, as it says.
fn seed(server: &RedisServer, queue: &str, extra: &[&str]) -> Value {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let output = Command::new("node")
        .arg("capture-seed.mjs")
        .arg(server.port.to_string())
        .arg(queue)
        .args(extra)
        .current_dir(root.join("tests/e2e"))
        .stdin(Stdio::null())
        .output()
        .expect("node runs");
    assert!(output.status.success(), "capture-seed.mjs failed:\n{}", output_text(&output));
    let text = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(text.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("capture-seed.mjs said no JSON ({e}):\n{}", output_text(&output)))
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

fn read_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: not JSON Lines ({e}): {l}", path.display())))
        .collect()
}

/// Commands Redis' MONITOR printed (`1764640000.123456 [0 127.0.0.1:5555] "XRANGE" "bull:..."`).
fn monitored_commands(log: &str) -> Vec<String> {
    log.lines()
        .filter_map(|line| line.split_once("] \"").map(|(_, rest)| rest))
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_ascii_uppercase)
        .collect()
}

/// Every input of an analyze report read something and rejected nothing.
fn assert_read_whole(report: &Value, kinds: &[&str]) {
    let inputs = report["inputs"].as_array().expect("inputs");
    for kind in kinds {
        let input =
            inputs.iter().find(|i| i["kind"] == *kind).unwrap_or_else(|| panic!("no {kind} input:\n{inputs:#?}"));
        assert!(input["events"].as_u64().unwrap_or(0) > 0, "nothing read from {kind}:\n{input:#}");
        assert_eq!(input["rejected"], 0, "{kind} had rejected lines:\n{input:#}");
        assert_eq!(input["ignored"], 0, "{kind}: capture writes only what the reader takes:\n{input:#}");
    }
}

#[test]
fn e2e_capture_reads_a_real_queue_and_changes_nothing() {
    if !services_ready() {
        return;
    }
    let server = RedisServer::start();
    let seeded = seed(&server, "pr-review", &[]);
    let before = server.state();

    // MONITOR sees every command any client sends while the capture runs.
    let mut monitor = Command::new("redis-cli")
        .args(["-p", &server.port.to_string(), "monitor"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-cli runs");
    let mut lines = BufReader::new(monitor.stdout.take().unwrap());
    let mut ok = String::new();
    lines.read_line(&mut ok).unwrap();
    assert_eq!(ok.trim(), "OK", "MONITOR started");
    let reader = std::thread::spawn(move || {
        let mut log = String::new();
        let _ = std::io::Read::read_to_string(&mut lines, &mut log);
        log
    });

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("case");
    let out_str = out.to_str().unwrap();
    let run = leasetrace(&["capture", "--redis", &server.url(), "--queue", "pr-review", out_str]).run();
    assert_eq!(run.code, 0, "capture failed:\n{}{}", run.stdout, run.stderr);
    // A marker after the capture: everything before it in the log is the capture's.
    server.cli(&["ECHO", "end-of-capture"]);
    std::thread::sleep(Duration::from_millis(200));
    let _ = monitor.kill();
    let _ = monitor.wait();
    let log = reader.join().unwrap();
    let marker = log.find("\"end-of-capture\"").expect("the marker reached MONITOR");
    let upto = log[..marker].rfind('\n').map_or(0, |at| at + 1);
    let commands = monitored_commands(&log[..upto]);

    assert_eq!(server.state(), before, "DBSIZE and DEBUG DIGEST changed during the capture");
    let allowed =
        ["TIME", "INFO", "TYPE", "SCAN", "XINFO", "XRANGE", "HGETALL", "LRANGE", "ZRANGE", "SMEMBERS", "GET", "PTTL"];
    let writes: Vec<&String> = commands.iter().filter(|c| !allowed.contains(&c.as_str())).collect();
    assert!(writes.is_empty(), "commands other than reads during the capture: {writes:?}");
    for needed in ["XRANGE", "SCAN", "HGETALL", "PTTL", "TIME"] {
        assert!(commands.iter().any(|c| c == needed), "MONITOR saw no {needed}: {commands:?}");
    }
    assert!(!commands.iter().any(|c| c == "KEYS"), "never KEYS");

    // The record: the commands it says it ran are the ones MONITOR saw, the lock held, the clock.
    let record = read_json(&out.join("capture.json"));
    let counted: u64 = record["commands"].as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(counted, commands.len() as u64, "the record counts every command sent\n{:#}", record["commands"]);
    let lock = record["locks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["job_id"] == seeded["active"])
        .unwrap_or_else(|| panic!("no lock of the active job {}: {:#}", seeded["active"], record["locks"]));
    assert_eq!(lock["token"], seeded["lock_token"], "the holder's token as BullMQ set it");
    let pttl = lock["pttl_ms"].as_i64().unwrap();
    assert!(pttl > 0 && pttl <= 600_000, "a lock of 10 min still held: {lock:#}");
    assert_eq!(record["start"]["redis_version"], record["end"]["redis_version"]);
    assert!(record["start"]["redis_version"].as_str().is_some_and(|v| !v.is_empty()), "{:#}", record["start"]);
    assert!(record["end"]["redis_time_us"].as_i64() >= record["start"]["redis_time_us"].as_i64());
    assert!(record["worker_options"].as_str().unwrap().contains("not store"), "{:#}", record["worker_options"]);
    assert_eq!(record["meta"]["fields"]["version"], format!("bullmq:{}", pinned_bullmq("5")));

    // Each job with the state BullMQ keeps it in.
    let jobs = read_lines(&out.join("jobs.jsonl"));
    let state_of =
        |id: &Value| -> Value { jobs.iter().find(|j| j["id"] == *id).map_or(Value::Null, |j| j["state"].clone()) };
    for id in seeded["completed"].as_array().unwrap() {
        assert_eq!(state_of(id), "completed", "job {id}");
    }
    for (key, state) in [("failed", "failed"), ("delayed", "delayed"), ("waiting", "waiting"), ("active", "active")] {
        assert_eq!(state_of(&seeded[key]), state, "job {} ({key})", seeded[key]);
    }
    let logs = read_lines(&out.join("job-logs.jsonl"));
    assert!(
        logs.iter()
            .any(|l| l["job_id"] == seeded["failed"]
                && l["lines"][0].as_str().is_some_and(|t| t.starts_with("reviewing"))),
        "{logs:#?}"
    );

    // The folder is a case analyze reads as it is.
    let analyzed = leasetrace(&["analyze", out_str, "--format", "json"]).run();
    assert_eq!(analyzed.code, 0, "{}", analyzed.stderr);
    let report = analyzed.json();
    assert_read_whole(&report, &["bullmq-events", "bullmq-jobs"]);
    let said: Vec<&str> = report["assumptions"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    let held = format!(
        "the lock of job {} (active) was held by {}",
        seeded["active"].as_str().unwrap(),
        seeded["lock_token"].as_str().unwrap()
    );
    assert!(said.iter().any(|a| a.contains(&held)), "the report names the held lock ({held}): {said:#?}");
    assert!(!said.iter().any(|a| a.contains("trimmed")), "nothing was trimmed: {said:#?}");
    let entries = std::fs::read_to_string(out.join("events.jsonl")).unwrap().lines().count();
    assert_eq!(record["stream"]["length"], entries, "the whole stream was written");
    assert_eq!(record["stream"]["captured"], entries);

    // Bounded: at most 2 job hashes, and the stream from a time after its last entry.
    let bounded = dir.path().join("bounded");
    let after = record["end"]["redis_time"].as_str().unwrap();
    let run = leasetrace(&[
        "capture",
        "--redis",
        &server.url(),
        "--queue",
        "pr-review",
        bounded.to_str().unwrap(),
        "--max-jobs",
        "2",
        "--since",
        after,
    ])
    .run();
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let limited = read_json(&bounded.join("capture.json"));
    assert_eq!(read_lines(&bounded.join("jobs.jsonl")).len(), 0, "every job's times are before --since");
    assert_eq!(limited["bounds"]["jobs_before_since"], jobs.len(), "{:#}", limited["bounds"]);
    assert_eq!(limited["stream"]["captured"], 0, "{:#}", limited["stream"]);
    let run = leasetrace(&[
        "capture",
        "--redis",
        &server.url(),
        "--queue",
        "pr-review",
        dir.path().join("two").to_str().unwrap(),
        "--max-jobs",
        "2",
    ])
    .run();
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(read_lines(&dir.path().join("two/jobs.jsonl")).len(), 2);
    let two = read_json(&dir.path().join("two/capture.json"));
    assert_eq!(two["bounds"]["jobs_beyond_max_jobs"], jobs.len() - 2, "{:#}", two["bounds"]);
    let report = leasetrace(&["analyze", dir.path().join("two").to_str().unwrap(), "--format", "json"]).run().json();
    let said: Vec<&str> = report["assumptions"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    let left = format!("{} job hash(es) of the queue were not captured (--max-jobs 2)", jobs.len() - 2);
    assert!(
        said.iter().any(|a| a.contains(&left)),
        "the report says the job hashes are incomplete ({left}): {said:#?}"
    );
}

#[test]
fn e2e_capture_of_a_wrong_queue_or_a_redis_without_bullmq_is_exit_2_with_the_reason() {
    if !services_ready() {
        return;
    }
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("case");
    let out_str = out.to_str().unwrap();

    // An empty Redis: no BullMQ queue at all.
    let run = leasetrace(&["capture", "--redis", &server.url(), "--queue", "pr-review", out_str]).run();
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("no BullMQ queue 'pr-review' here"), "{}", run.stderr);
    assert!(run.stderr.contains("no BullMQ queue has a meta hash under the prefix 'bull'"), "{}", run.stderr);
    assert!(run.stderr.contains(&format!("redis://127.0.0.1:{}/0", server.port)), "names the server: {}", run.stderr);
    assert!(!out.exists(), "nothing written");

    // A wrong queue name: the queues that are there are named.
    seed(&server, "pr-review", &[]);
    let run = leasetrace(&["capture", "--redis", &server.url(), "--queue", "pr-reveiw", out_str]).run();
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("no BullMQ queue 'pr-reveiw' here"), "{}", run.stderr);
    assert!(run.stderr.contains("queues under the prefix 'bull': pr-review"), "{}", run.stderr);
    assert!(!out.exists(), "nothing written");

    // A password in the URL is never shown, whatever the server answers.
    let secret = format!("redis://reader:s3cret-pass@127.0.0.1:{}/0", server.port);
    let run = leasetrace(&["capture", "--redis", &secret, "--queue", "pr-review", out_str]).run();
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(!run.stderr.contains("s3cret") && !run.stdout.contains("s3cret"), "{}", run.stderr);
    assert!(run.stderr.contains("connect"), "says the connection failed: {}", run.stderr);

    // No server on the port: the host and the failing step.
    drop(server);
    let run =
        leasetrace(&["capture", "--redis", "redis://127.0.0.1:1", "--queue", "q", out_str, "--timeout", "2"]).run();
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("redis://127.0.0.1:1/0: connect:"), "{}", run.stderr);
}

#[test]
fn e2e_capture_of_a_trimmed_stream_says_how_far_back_it_reaches_and_the_report_says_it_was_trimmed() {
    if !services_ready() {
        return;
    }
    // BullMQ trims with `XADD ... MAXLEN ~ maxLenEvents`: Redis removes whole nodes of the stream
    // only, 100 entries each by default. Nodes of 4 entries and a maxLen of 5 trim this small queue.
    let server = RedisServer::start_with(&["--stream-node-max-entries", "4"]);
    // 1.5 s between the first jobs and the entries that push theirs out: more than the 1 s the
    // report allows between a server's clock and Redis'.
    let seeded = seed(&server, "pr-review", &["5", "1500"]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("case");
    let out_str = out.to_str().unwrap();
    let run = leasetrace(&["capture", "--redis", &server.url(), "--queue", "pr-review", out_str]).run();
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let record = read_json(&out.join("capture.json"));
    let stream = &record["stream"];
    assert_eq!(stream["max_len_events"], "5", "{stream:#}");
    let length = stream["length"].as_u64().unwrap();
    let added = stream["entries_added"].as_u64().unwrap();
    assert_eq!(stream["entries_removed"], added - length, "{stream:#}");
    assert!(added > length, "Redis trimmed entries away\n{stream:#}");
    assert!(length < 20, "trimmed to about maxLenEvents: {stream:#}");
    assert_eq!(stream["captured"], length, "{stream:#}");
    let first = stream["first_id"].as_str().unwrap();
    assert_eq!(stream["captured_first_id"], first, "{stream:#}");

    // The first jobs finished before the stream's first remaining entry: the report says the
    // stream was trimmed, and names the job hash that shows it.
    let first_ms: i64 = first.split('-').next().unwrap().parse().unwrap();
    let jobs = read_lines(&out.join("jobs.jsonl"));
    let early = &seeded["completed"][0];
    let job = jobs.iter().find(|j| j["id"] == *early).expect("the first completed job");
    let finished: i64 = job["hash"]["finishedOn"].as_str().unwrap().parse().unwrap();
    assert!(finished + 1000 < first_ms, "job {early} finished at {finished}, the stream starts at {first_ms}");
    let analyzed = leasetrace(&["analyze", out_str, "--format", "json"]).run();
    assert_eq!(analyzed.code, 0, "{}", analyzed.stderr);
    let report = analyzed.json();
    let assumptions = report["assumptions"].as_array().unwrap();
    assert!(
        assumptions.iter().filter_map(Value::as_str).any(|a| a.contains("events.jsonl: the events stream starts at")
            && a.contains("jobs.jsonl")
            && a.contains("the stream was trimmed")),
        "no assumption says the captured stream was trimmed: {assumptions:#?}"
    );
    // And the record's own account, which the manifest declares: how much Redis had trimmed.
    let removed = format!("{} earlier entries had already been trimmed (or deleted), maxLenEvents 5", added - length);
    assert!(
        assumptions
            .iter()
            .filter_map(Value::as_str)
            .any(|a| a.contains("capture.json: when captured, the events stream bull:pr-review:events")
                && a.contains(&removed)
                && a.contains(first)),
        "no assumption from the capture record says the stream was trimmed ({removed}): {assumptions:#?}"
    );
}

#[test]
fn e2e_capture_over_tls_checks_the_certificate_and_reads_the_queue() {
    if !services_ready() {
        return;
    }
    // A CA and a server certificate of the test's own (openssl, as Redis' own TLS tests make them).
    let certs = tempfile::tempdir().unwrap();
    let at = |name: &str| certs.path().join(name).to_str().unwrap().to_string();
    std::fs::write(
        certs.path().join("ext.cnf"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    let openssl = |args: &[&str]| {
        let output = Command::new("openssl").args(args).current_dir(certs.path()).output();
        match output {
            Ok(output) => assert!(output.status.success(), "openssl {args:?}:\n{}", output_text(&output)),
            Err(error) if !in_ci(std::env::var_os("CI").as_deref()) => {
                let _ = std::io::stderr()
                    .write_all(format!("SKIPPED the TLS capture test: no openssl ({error})\n").as_bytes());
                return false;
            }
            Err(error) => panic!("openssl is needed for the TLS capture test: {error}"),
        }
        true
    };
    if !openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=leasetrace-test-ca",
    ]) {
        return;
    }
    openssl(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=localhost",
    ]);
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    ]);
    let tls_port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port().to_string();
    let (cert, key, ca) = (at("server.pem"), at("server.key"), at("ca.pem"));
    let server = RedisServer::start_with(&[
        "--tls-port",
        &tls_port,
        "--tls-cert-file",
        &cert,
        "--tls-key-file",
        &key,
        "--tls-ca-cert-file",
        &ca,
        "--tls-auth-clients",
        "no",
    ]);
    seed(&server, "pr-review", &[]);
    let url = format!("rediss://localhost:{tls_port}/0");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("case");

    // A CA this machine does not trust: refused, and said so.
    let mut refused = leasetrace(&["capture", "--redis", &url, "--queue", "pr-review", out.to_str().unwrap()]);
    refused.command.env_remove("SSL_CERT_FILE").env_remove("SSL_CERT_DIR");
    let refused = refused.run();
    assert_eq!(refused.code, 2, "{}{}", refused.stdout, refused.stderr);
    assert!(refused.stderr.contains(&url) && refused.stderr.contains("certificate"), "{}", refused.stderr);

    let mut trusted = leasetrace(&["capture", "--redis", &url, "--queue", "pr-review", out.to_str().unwrap()]);
    trusted.command.env("SSL_CERT_FILE", &ca);
    let trusted = trusted.run();
    assert_eq!(trusted.code, 0, "{}{}", trusted.stdout, trusted.stderr);
    let record = read_json(&out.join("capture.json"));
    assert_eq!(record["target"]["server"], url.as_str(), "{:#}", record["target"]);
    assert!(record["jobs"]["written"].as_u64().unwrap() > 0, "{:#}", record["jobs"]);
}

/// The stalled scenario's captures (mod.rs runs the harness with `--capture`): while the killed
/// worker's lock was held, the record shows its holder and remaining time as Redis had them; at
/// the export, the captured folder gives the findings the harness's own exports give.
pub(super) fn assert_captured_the_stalled_sweep(staged: &Staged, report: &Value) {
    let root = staged.dir.path();
    let job_id = staged.text("job_id");
    let dead = read_json(&root.join("capture-dead/capture.json"));
    let lock = dead["locks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["job_id"] == job_id)
        .unwrap_or_else(|| panic!("the capture after the kill has no lock of job {job_id}: {:#}", dead["locks"]));
    assert_eq!(lock["token"], staged.observed["lock_token_after_kill"], "the dead worker's token\n{lock:#}");
    let pttl = lock["pttl_ms"].as_i64().expect("a remaining time");
    assert!(
        pttl > 0 && pttl <= staged.ms("lock_pttl_after_kill"),
        "still held, read after the harness's PTTL: {lock:#}"
    );
    let expires = time(&lock["expires_at"], "expires_at");
    let off = (expires - epoch(staged.ms("lock_expires_at"))).num_milliseconds();
    assert!(off.abs() <= 100, "expires_at {expires} is {off} ms from the harness's PTTL reading\n{lock:#}");
    assert_eq!(lock["job_state"], "active", "the dead worker's job is still active in Redis\n{lock:#}");

    // At the export: the captured stream and job hashes in place of the harness's exports.
    let manifest = std::fs::read_to_string(root.join("leasetrace.toml")).unwrap();
    assert!(manifest.contains("path = \"events.json\"") && manifest.contains("path = \"jobs.jsonl\""), "{manifest}");
    let swapped = manifest
        .replace("path = \"events.json\"", "path = \"capture/events.jsonl\"")
        .replace("path = \"jobs.jsonl\"", "path = \"capture/jobs.jsonl\"");
    std::fs::write(root.join("leasetrace-captured.toml"), swapped).unwrap();
    let captured = staged.analyze_manifest("leasetrace-captured.toml");
    let summary = |report: &Value| -> Vec<(Value, Value)> {
        report["findings"].as_array().unwrap().iter().map(|f| (f["kind"].clone(), f["metrics"].clone())).collect()
    };
    assert_eq!(summary(&captured), summary(report), "the captured folder and the harness's exports disagree");
    let count = |report: &Value, kind: &str| -> Value {
        report["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["kind"] == kind)
            .map_or(Value::Null, |i| i["events"].clone())
    };
    for kind in ["bullmq-events", "bullmq-jobs"] {
        assert_eq!(count(&captured, kind), count(report, kind), "{kind}: the same events from both");
    }

    // And the folder alone, as capture wrote it.
    let alone = leasetrace(&["analyze", root.join("capture").to_str().unwrap(), "--format", "json"]).run();
    assert_eq!(alone.code, 0, "{}", alone.stderr);
    assert_read_whole(&alone.json(), &["bullmq-events", "bullmq-jobs"]);
}

#[test]
fn capture_gives_up_on_a_server_that_never_answers_and_names_the_command() {
    // A listener that accepts the connection and never replies: the read timeout, not a hang.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let holder = std::thread::spawn(move || {
        let (socket, _) = listener.accept().unwrap();
        std::thread::sleep(Duration::from_secs(3));
        drop(socket);
    });
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("case");
    let url = format!("redis://:hunter2@127.0.0.1:{port}/3");
    let started = Instant::now();
    let run =
        leasetrace(&["capture", "--redis", &url, "--queue", "q", out.to_str().unwrap(), "--timeout", "0.5"]).run();
    assert!(started.elapsed() < Duration::from_secs(3), "gave up within the timeout: {:?}", started.elapsed());
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains(&format!("redis://127.0.0.1:{port}/3: ")), "names the server: {}", run.stderr);
    assert!(!run.stderr.contains("hunter2"), "never the password: {}", run.stderr);
    assert!(run.stderr.contains(": connect: no answer within the --timeout of 0.5 s"), "{}", run.stderr);
    assert!(!out.exists(), "nothing written");
    holder.join().unwrap();
}

#[test]
fn capture_takes_the_url_from_the_environment_and_never_prints_it() {
    // Port 1 on loopback refuses the connection at once: the URL was read, and its password is
    // neither in the message nor in --help's text of the variable.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("case");
    let output = Command::new(env!("CARGO_BIN_EXE_leasetrace"))
        .args(["capture", "--queue", "q", out.to_str().unwrap()])
        .env("LEASETRACE_REDIS_URL", "redis://reader:hunter2@127.0.0.1:1/2")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("redis://127.0.0.1:1/2: "), "the server from the variable: {stderr}");
    assert!(!stderr.contains("hunter2"), "never the password: {stderr}");
    let help = Command::new(env!("CARGO_BIN_EXE_leasetrace"))
        .args(["capture", "--help"])
        .env("LEASETRACE_REDIS_URL", "redis://reader:hunter2@127.0.0.1:1/2")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("LEASETRACE_REDIS_URL") && !help.contains("hunter2"), "{help}");
}

#[test]
fn capture_refuses_a_queue_name_bullmq_refuses_and_a_url_that_is_not_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("case");
    let out = out.to_str().unwrap();
    let run = leasetrace(&["capture", "--redis", "redis://127.0.0.1:1", "--queue", "a:b", out]).run();
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("--queue 'a:b'") && run.stderr.contains("Queue name cannot contain :"),
        "{}",
        run.stderr
    );
    let run = leasetrace(&["capture", "--redis", "http://user:pw@host", "--queue", "q", out]).run();
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("not a Redis URL") && !run.stderr.contains("pw@"), "{}", run.stderr);
    let run = leasetrace(&["capture", "--redis", "redis://127.0.0.1:1", "--queue", "q", out, "--since", "09:50"]).run();
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("--since '09:50'"), "{}", run.stderr);
}

#[test]
fn a_capture_record_outside_the_case_folder_is_refused_like_a_source() {
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("case");
    std::fs::create_dir(&case).unwrap();
    std::fs::write(dir.path().join("capture.json"), r#"{"schema": "leasetrace.capture/v1"}"#).unwrap();
    std::fs::write(case.join("events.jsonl"), "").unwrap();
    std::fs::write(
        case.join("leasetrace.toml"),
        "capture = \"../capture.json\"\n[[sources]]\nkind = \"bullmq-events\"\npath = \"events.jsonl\"\nqueue = \"q\"\n",
    )
    .unwrap();
    let run = leasetrace(&["analyze", case.to_str().unwrap()]).run();
    assert_eq!(run.code, 2, "{}{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("capture (") && run.stderr.contains("outside the case folder"), "{}", run.stderr);
}
