//! What a newcomer is told when a first command goes wrong (issue 35): a file where a case folder
//! is expected and the reverse, a gzip file as a case, a path that does not exist, a misspelt
//! zone, a zone abbreviation or an offset, a clock time given to any time flag; and the
//! report's Assumptions saying each thing once. Each test asserts the exit code and the words
//! that name the fix.

use super::*;

/// The first phrase of four words that `text` says twice, if any.
fn repeated_phrase(text: &str) -> Option<String> {
    let words: Vec<&str> = text
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| ",;:()".contains(c)))
        .filter(|w| !w.is_empty())
        .collect();
    let phrases: Vec<String> = words.windows(4).map(|w| w.join(" ")).collect();
    phrases.iter().enumerate().find(|(at, phrase)| phrases[at + 1..].contains(phrase)).map(|(_, p)| p.clone())
}

#[test]
fn no_assumption_says_a_phrase_twice() {
    let mut checked = 0;
    for fixture in [INCIDENT, CLEAN, REAL_STALLED, REAL_LIMIT, REAL_REPLICA_DIED, REAL_LIMIT_LOGGED] {
        let run = leasetrace(&["analyze", fixture, "--format", "json"]).run();
        assert_eq!(run.code, 0, "{fixture}: {}", run.stderr);
        for line in run.json()["assumptions"].as_array().unwrap() {
            let line = line.as_str().unwrap();
            assert_eq!(repeated_phrase(line), None, "{fixture}: {line}");
            checked += 1;
        }
    }
    assert!(checked > 10, "{checked} assumptions");
    assert_eq!(
        repeated_phrase("BullMQ version not given: stall-limit model: BullMQ version not given: assumed"),
        Some("BullMQ version not given".into()),
        "the line of issue 35"
    );
}

/// A usage error (exit 2, nothing on stdout) whose message holds every one of `needles`.
fn refused(args: &[&str], needles: &[&str]) -> String {
    let run = leasetrace(args).run();
    assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
    assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
    for needle in needles {
        assert!(run.stderr.contains(needle), "{args:?}: no '{needle}' in {}", run.stderr);
    }
    run.stderr
}

const INCIDENT_LOG: &str = "fixtures/incident-2026-10-07/server.log";

#[test]
fn a_misspelt_zone_gets_a_did_you_mean() {
    refused(
        &["analyze", "--log", INCIDENT_LOG, "--log-tz", "Asia/Seol"],
        &["--log-tz: unknown time zone 'Asia/Seol': did you mean Asia/Seoul?"],
    );
    refused(&["analyze", INCIDENT, "--tz", "europe/berln"], &["did you mean Europe/Berlin?"]);
    refused(&["analyze", INCIDENT, "--tz", "Seoul"], &["did you mean Asia/Seoul?"]);
}

#[test]
fn a_zone_abbreviation_names_the_iana_zones_it_may_mean_and_never_picks_one() {
    refused(&["analyze", INCIDENT, "--tz", "KST"], &["'KST' is an abbreviation", "Asia/Seoul (+09:00)"]);
    refused(&["analyze", "--log", INCIDENT_LOG, "--log-tz", "JST"], &["--log-tz: 'JST'", "Asia/Tokyo"]);
    let ist = refused(
        &["analyze", INCIDENT, "--tz", "IST"],
        &["several zones", "Asia/Kolkata (+05:30)", "Europe/Dublin", "Asia/Jerusalem", "yours to say"],
    );
    assert!(!ist.contains("read as"), "{ist}");
    refused(&["analyze", INCIDENT, "--tz", "PDT"], &["America/Los_Angeles (-08:00, -07:00 in daylight saving)"]);
    refused(&["analyze", INCIDENT, "--tz", "CET"], &["Europe/Berlin (+01:00, +02:00 in daylight saving)"]);
    refused(&["analyze", INCIDENT, "--tz", "Z"], &["UTC"]);
}

#[test]
fn an_offset_is_refused_naming_the_zones_at_it_and_the_fixed_offset_zone() {
    for offset in ["+09:00", "UTC+9", "+0900"] {
        refused(
            &["analyze", "--log", INCIDENT_LOG, "--log-tz", offset],
            &["is an offset, not a zone", "daylight saving", "Asia/Seoul (+09:00)", "Asia/Tokyo", "Etc/GMT-9"],
        );
    }
    refused(
        &["analyze", INCIDENT, "--tz=-0800"],
        &["America/Los_Angeles (-08:00, -07:00 in daylight saving)", "Etc/GMT+8"],
    );
    // The fixed-offset zone the refusal names is taken.
    let run = leasetrace(&["analyze", INCIDENT, "--tz", "Etc/GMT-9", "--format", "json"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.json()["display_tz"], "Etc/GMT-9");
}

/// One instant, 09:33:00 KST on the incident's date, in every form a time flag takes.
const ACTIVATION_FORMS: &[&str] = &[
    "09:33:00",
    "09:33",
    "2026-10-07 09:33:00",
    "2026-10-07 09:33",
    "2026-10-07T09:33:00",
    "2026-10-07T09:33:00+09:00",
    "2026-10-07T09:33+09:00",
    "2026-10-07T00:33:00Z",
    "2026-10-07T00:33:00.000Z",
    "1791333180000",
];

#[test]
fn every_time_flag_takes_the_forms_since_takes_read_alike() {
    // The incident's manifest declares display_tz = "Asia/Seoul": a local time is read there, a
    // clock time on the case's one date.
    for form in ACTIVATION_FORMS {
        let run = leasetrace(&["lock", INCIDENT, "--activated-at", form, "--died-at", form, "--format", "json"]).run();
        assert_eq!(run.code, 0, "lock --activated-at {form}: {}", run.stderr);
        let plan = run.json();
        assert_eq!(plan["activated_at"], "2026-10-07T00:33:00.000Z", "--activated-at {form}");
        assert_eq!(plan["died_at"], "2026-10-07T00:33:00.000Z", "--died-at {form}");
        for flag in ["--since", "--until"] {
            let run = leasetrace(&["analyze", INCIDENT, flag, form, "--format", "json"]).run();
            assert_eq!(run.code, 0, "analyze {flag} {form}: {}", run.stderr);
        }
    }
    // The incident's rerun at 09:53:00 is after --since in every form and before --until.
    let since = leasetrace(&["analyze", INCIDENT, "--since", "09:33", "--format", "json"]).run().json();
    let also = leasetrace(&["analyze", INCIDENT, "--since", "2026-10-07T00:33:00Z", "--format", "json"]).run().json();
    assert_eq!(since["findings"], also["findings"]);
}

#[test]
fn a_clock_time_without_a_case_to_date_it_says_to_give_the_date() {
    refused(
        &["lock", "--activated-at", "09:33:00", "--tz", "Asia/Seoul"],
        &[
            "--activated-at '09:33:00': a clock time alone is on the case's date",
            "give the date too",
            "'2026-10-07 09:33:00'",
        ],
    );
    refused(
        &["capture", "/nonexistent/out", "--redis", "redis://127.0.0.1:1", "--queue", "q", "--since", "09:50"],
        &[
            "--since '09:50': a clock time alone is on the case's date",
            "capture reads a live server",
            "give the date too",
        ],
    );
    // A local time with no display zone to read it in names the flag that declares one.
    refused(&["lock", "--activated-at", "2026-10-07 09:33"], &["--activated-at '2026-10-07 09:33'", "--tz ZONE"]);
    refused(
        &["lock", INCIDENT, "--activated-at", "nine thirty"],
        &["--activated-at 'nine thirty' is not a time", "09:50 (on the case's date"],
    );
}

const INCIDENT_LEDGER: &str = "fixtures/incident-2026-10-07/ledger.csv";

#[test]
fn a_log_given_as_the_case_says_it_is_a_log_and_how_to_read_it() {
    let message = refused(
        &["analyze", INCIDENT_LOG],
        &[
            "fixtures/incident-2026-10-07/server.log: this looks like a server log (text), not a case",
            "To read one file, give it with --log: `leasetrace analyze --log fixtures/incident-2026-10-07/server.log --log-tz ZONE`",
            "leasetrace init FOLDER",
        ],
    );
    assert!(!message.contains("invalid manifest"), "{message}");
}

#[test]
fn a_ledger_given_as_the_case_says_it_is_a_ledger_and_how_to_read_it() {
    refused(
        &["check", INCIDENT_LEDGER],
        &[
            "this looks like a run ledger (csv), not a case",
            "`leasetrace analyze --ledger fixtures/incident-2026-10-07/ledger.csv`",
        ],
    );
    refused(
        &["timeline", "fixtures/incident-2026-10-07/bullmq.json"],
        &["this looks like BullMQ lock parameters", "--params fixtures/incident-2026-10-07/bullmq.json"],
    );
}

#[test]
fn a_gzip_file_given_as_the_case_is_looked_into_and_read_with_its_flag() {
    let dir = tempfile::tempdir().unwrap();
    let gz = crate::gzipped_incident_log(dir.path());
    let shown = gz.display().to_string();
    let message = refused(
        &["analyze", &shown],
        &[
            "this looks like a server log (text), gzip-compressed, not a case",
            &format!("`leasetrace analyze --log {shown} --log-tz ZONE`"),
        ],
    );
    assert!(!message.contains("binary data"), "{message}");
    // A gzip file with no source in it still says how a compressed source is read.
    let other = dir.path().join("notes.gz");
    let mut encoder =
        flate2::write::GzEncoder::new(std::fs::File::create(&other).unwrap(), flate2::Compression::fast());
    encoder.write_all(b"just some words\n").unwrap();
    encoder.finish().unwrap();
    refused(
        &["analyze", other.to_str().unwrap()],
        &["a gzip-compressed file, not a case", "with the flag of its kind: `leasetrace analyze --log"],
    );
}

#[test]
fn a_folder_given_to_a_file_flag_says_how_a_folder_is_read() {
    for flag in ["--log", "--ledger", "--events", "--jobs", "--trace", "--params"] {
        let message = refused(
            &["analyze", flag, INCIDENT],
            &[
                &format!("{INCIDENT}: is a folder: {flag} reads one file"),
                &format!("to read the case folder it is: `leasetrace analyze {INCIDENT}`"),
            ],
        );
        assert!(!message.contains("os error"), "{message}");
    }
    // A folder without a manifest: init drafts one.
    let dir = tempfile::tempdir().unwrap();
    let shown = dir.path().display().to_string();
    refused(
        &["timeline", "--log", &shown],
        &[
            "is a folder: --log reads one file",
            &format!("`leasetrace analyze {shown}` once it holds a leasetrace.toml (`leasetrace init {shown}`"),
        ],
    );
}

#[test]
fn a_path_that_does_not_exist_is_named_with_the_nearest_names_and_no_init() {
    let case = refused(
        &["analyze", "fixtures/incident-2026-10-7"],
        &["fixtures/incident-2026-10-7: no such file or folder", "did you mean fixtures/incident-2026-10-07?"],
    );
    assert!(!case.contains("init"), "no init for a path that does not exist: {case}");
    let far = refused(
        &["analyze", "no-such-folder/deeper/case"],
        &["no such file or folder", "the nearest folder that exists is the current folder"],
    );
    assert!(!far.contains("init"), "{far}");
    refused(
        &["analyze", "--log", "fixtures/incident-2026-10-07/sever.log", "--log-tz", "Asia/Seoul"],
        &[
            "sever.log: no such file or folder; expected a file for --log",
            "did you mean fixtures/incident-2026-10-07/server.log?",
        ],
    );
    let init =
        refused(&["init", "no-such-folder"], &["no-such-folder: no such file or folder; expected a folder of exports"]);
    assert!(!init.contains("not a folder"), "{init}");
}

#[test]
fn standard_input_as_the_case_says_to_give_it_with_a_flag() {
    refused(
        &["analyze", "-"],
        &["'-' (standard input) is read as a source, not as a case", "`leasetrace analyze --log -`"],
    );
}

#[test]
fn init_given_a_file_says_what_it_looks_like() {
    refused(
        &["init", INCIDENT_LOG],
        &["this looks like a server log (text), not a folder", "`leasetrace analyze --log"],
    );
}

#[test]
fn a_file_that_is_neither_manifest_nor_source_keeps_the_manifest_error_and_says_what_case_is() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "just some words\n").unwrap();
    refused(
        &["analyze", notes.to_str().unwrap()],
        &[
            "notes.txt:1: invalid manifest",
            "CASE is a case folder holding leasetrace.toml",
            "`leasetrace analyze --log FILE`",
        ],
    );
    // A manifest with a mistake is a manifest: its own error, no source hint.
    let manifest = dir.path().join("leasetrace.toml");
    std::fs::write(&manifest, "display_tz\n").unwrap();
    let message = refused(&["analyze", manifest.to_str().unwrap()], &["leasetrace.toml:1: invalid manifest"]);
    assert!(!message.contains("--log FILE"), "{message}");
}

/// `capture` reads Redis or PostgreSQL: which one is said by a flag or by the one environment
/// variable set, never guessed; a flag that means nothing for the store asked for is refused by
/// name, before anything is sent.
#[test]
fn capture_is_told_which_store_to_read_and_refuses_a_flag_of_the_other_store() {
    let out = tempfile::tempdir().unwrap();
    let case = out.path().join("case");
    let case = case.to_str().unwrap();
    let capture = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = vec!["capture", case, "--queue", "q"];
        all.extend(args);
        let mut run = leasetrace(&all).env_remove("LEASETRACE_REDIS_URL").env_remove("LEASETRACE_POSTGRES_URL");
        for (name, value) in env {
            run = run.env(name, value);
        }
        let run = run.run();
        assert_eq!(run.code, 2, "{args:?}: {}{}", run.stdout, run.stderr);
        run.stderr
    };
    let says = |stderr: String, part: &str| assert!(stderr.contains(part), "no {part:?} in {stderr}");
    says(
        capture(&[], &[]),
        "give --redis URL or --postgres URL (or set LEASETRACE_REDIS_URL or LEASETRACE_POSTGRES_URL)",
    );
    says(
        capture(
            &[],
            &[
                ("LEASETRACE_REDIS_URL", "redis://127.0.0.1:9"),
                ("LEASETRACE_POSTGRES_URL", "postgres://127.0.0.1:9/db"),
            ],
        ),
        "both LEASETRACE_REDIS_URL and LEASETRACE_POSTGRES_URL are set",
    );
    says(
        capture(&["--prefix", "x"], &[("LEASETRACE_POSTGRES_URL", "postgres://127.0.0.1:9/db")]),
        "--prefix is for a capture from Redis only",
    );
    says(
        capture(&["--redis", "redis://127.0.0.1:9", "--until", "2026-10-07T01:00:00Z"], &[]),
        "--until: a Redis capture reads to the present",
    );
    says(
        capture(&["--redis", "redis://127.0.0.1:9", "--schema", "x"], &[]),
        "--schema is for a capture from PostgreSQL only",
    );
    says(capture(&["--postgres", "redis://127.0.0.1:9"], &[]), "not a PostgreSQL URL");
    says(
        capture(&["--postgres", "postgres://u:pw@127.0.0.1:9/db?options=-cx"], &[]),
        "?options=: a parameter capture does not take",
    );
    says(
        capture(&["--redis", "redis://127.0.0.1:9", "--postgres", "postgres://127.0.0.1:9/db"], &[]),
        "cannot be used with",
    );
    says(
        capture(&["--postgres", "postgres://127.0.0.1:9/db", "--ledger-query", "SELECT 1"], &[]),
        "--ledger-time-column",
    );
    says(
        capture(
            &[
                "--postgres",
                "postgres://127.0.0.1:9/db",
                "--since",
                "2026-10-07T01:00:00Z",
                "--until",
                "2026-10-07T00:00:00Z",
            ],
            &[],
        ),
        "is not after --since",
    );
    says(
        capture(&["--redis", "redis://127.0.0.1:9", "--bull", "5.1.0"], &[]),
        "expected legacy Bull's version, 3.x or 4.x",
    );
    says(
        capture(&["--postgres", "postgres://u@127.0.0.1:9/db", "--bull", "4.16.5"], &[]),
        "--bull is for a capture from Redis",
    );
    let password = capture(&["--postgres", "postgres://u:s3cret@127.0.0.1:9/db?sslmode=sometimes"], &[]);
    assert!(!password.contains("s3cret"), "{password}");
    assert!(!out.path().join("case").exists(), "nothing written");
}
