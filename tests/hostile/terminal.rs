//! Text from a case never controls the terminal (issue 34): a ledger cell, a log line or a file
//! name holding ESC, BEL, NUL, CR, an OSC (window title, link), a CSI (clear screen) or a bidi
//! override reaches every human output and every error message written out (`\x1b`, `\r`,
//! `<U+202E>`), while the formats for programs keep the exact text. Checked on pipes for every
//! format, and on a pseudo-terminal for what a person sees: the table, an error message and
//! `init`'s report.

use std::path::Path;

use leasetrace::terminal::is_hidden;

use crate::{INCIDENT, leasetrace};

/// What the case hides in its texts: a window title (OSC 0), a link (OSC 8) whose text says
/// "click", a clear screen (CSI 2J), a bell and a right-to-left override.
pub const PAYLOAD: &str = "\u{1b}]0;owned\u{7}\u{1b}]8;;http://evil.example/\u{1b}\\click\u{1b}[2J\u{202E}";
/// The item of the incident's duplicate selection, made to overprint its own finding.
pub const ITEM: &str = "PR-OK (no duplicate)\rERROR [4] duplicate-selection";
/// The log's file name.
pub const LOG_NAME: &str = "server\u{1b}]0;name\u{7}\u{202E}.log";

/// The incident, with `ITEM` and `PAYLOAD` as the duplicated item (a quoted CSV cell), `PAYLOAD`
/// at the end of every log line and the log named `LOG_NAME`.
pub fn hostile_case() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT);
    let read = |name: &str| std::fs::read_to_string(from.join(name)).unwrap();
    let ledger = read("ledger.csv").replace(",PR-4412,", &format!(",\"{ITEM}{PAYLOAD}\","));
    std::fs::write(dir.path().join("ledger.csv"), ledger).unwrap();
    let mut log = String::new();
    for line in read("server.log").lines() {
        log.push_str(line);
        log.push_str(" note=");
        log.push_str(PAYLOAD);
        log.push('\n');
    }
    std::fs::write(dir.path().join(LOG_NAME), log).unwrap();
    std::fs::write(dir.path().join("bullmq.json"), read("bullmq.json")).unwrap();
    let manifest = read("leasetrace.toml").replace(
        "path = \"server.log\"",
        "path = \"server\\u001B]0;name\\u0007\\u202E.log\"   # LOG_NAME, escaped as TOML",
    );
    std::fs::write(dir.path().join("leasetrace.toml"), manifest).unwrap();
    dir
}

/// The characters of `text` that would control a terminal (its own line ends aside).
pub fn hidden(text: &str) -> Vec<char> {
    text.chars().filter(|&c| c != '\n' && is_hidden(c)).collect()
}

/// `text` without the SGR colour codes leasetrace writes (`ESC [ 1 m`, `ESC [ 31 m`, `ESC [ 0 m`).
pub fn without_colour(text: &str) -> String {
    regex::Regex::new(r"\x1b\[[0-9;]*m").unwrap().replace_all(text, "").into_owned()
}

#[test]
fn case_text_reaches_every_human_format_written_out() {
    let dir = hostile_case();
    let case = dir.path().to_str().unwrap();
    for format in ["table", "markdown", "github", "mermaid", "svg", "html"] {
        let run = leasetrace(&["analyze", case, "--format", format]).run();
        assert_eq!(run.code, 0, "{format}: {}", run.stderr);
        assert_eq!(
            hidden(&run.stdout),
            Vec::<char>::new(),
            "{format} let a control character through:\n{}",
            run.stdout
        );
        // The SVG and the Mermaid chart draw only the lanes' names: the item is in the others.
        if !matches!(format, "mermaid" | "svg") {
            assert!(run.stdout.contains("PR-OK (no duplicate)\\rERROR [4]"), "{format}:\n{}", run.stdout);
        }
    }
    let table = leasetrace(&["analyze", case]).run().stdout;
    // The item, the evidence lines and the file name: all there, written out.
    assert!(
        table
            .contains("duplicate-selection\\x1b]0;owned\\x07\\x1b]8;;http://evil.example/\\x1b\\click\\x1b[2J<U+202E>")
    );
    assert!(table.contains("note=\\x1b]0;owned\\x07"), "a log line's evidence:\n{table}");
    assert!(table.contains("server\\x1b]0;name\\x07<U+202E>.log:348"), "the log's name:\n{table}");
    // The quoted `\r` ends no line (the file's lines end with `\n`): the second selection is on
    // line 19, where an editor shows it, as in the fixture.
    assert!(table.contains("/ledger.csv:19  2026-10-07 09:54:06.36  item-selected"), "{table}");
    assert_eq!(leasetrace(&["analyze", case, "--color", "never"]).run().stdout, table);
}

#[test]
fn colour_is_painted_on_text_already_made_visible() {
    let dir = hostile_case();
    let run = leasetrace(&["analyze", dir.path().to_str().unwrap(), "--color", "always"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("\u{1b}[1m\u{1b}[31mERROR\u{1b}[0m"), "our colour is there:\n{}", run.stdout);
    // Every ESC is one of our SGR codes; taking them out gives the plain table byte for byte.
    assert_eq!(hidden(&without_colour(&run.stdout)), Vec::<char>::new());
    assert_eq!(without_colour(&run.stdout), leasetrace(&["analyze", dir.path().to_str().unwrap()]).run().stdout);
}

#[test]
fn the_formats_for_programs_keep_the_exact_text() {
    let dir = hostile_case();
    let case = dir.path().to_str().unwrap();
    let report = leasetrace(&["analyze", case, "--format", "json"]).run().json();
    let item = crate::finding(&report, "duplicate-selection")["metrics"]["item"].as_str().unwrap().to_string();
    assert_eq!(item, format!("{ITEM}{PAYLOAD}"));
    assert!(
        report["inputs"].as_array().unwrap().iter().any(|input| input["path"].as_str().unwrap().ends_with(LOG_NAME))
    );
    let sarif = leasetrace(&["check", case, "--format", "sarif"]).run();
    assert!(sarif.stdout.contains("\\u001b]0;owned\\u0007"), "SARIF escapes as JSON does");
    let jsonl = leasetrace(&["analyze", case, "--format", "jsonl"]).run().stdout;
    assert!(jsonl.lines().any(|line| line.contains("\\rERROR [4] duplicate-selection\\u001b]0;owned")));
}

#[test]
fn an_error_quoting_a_file_name_and_its_content_writes_them_out() {
    let dir = tempfile::tempdir().unwrap();
    let name = "ledger\u{1b}[2J\u{202E}.csv";
    let path = dir.path().join(name);
    std::fs::write(&path, format!("at,run_id,event\n\"2026-10-07 {PAYLOAD}\r\",r1,round_started\n")).unwrap();
    let run = leasetrace(&["timeline", "--ledger", path.to_str().unwrap()]).run();
    assert_eq!(run.code, 2);
    assert_eq!(hidden(&run.stderr), Vec::<char>::new(), "{:?}", run.stderr);
    assert!(
        run.stderr
            .contains("ledger\\x1b[2J<U+202E>.csv:2: column 'at': malformed timestamp '2026-10-07 \\x1b]0;owned\\x07")
    );
    assert!(run.stderr.ends_with('\n') && run.stderr.lines().count() == 1, "one line: {:?}", run.stderr);
}

/// Runs leasetrace on a pseudo-terminal, as a person does: stdout, or stderr when `on_stderr`,
/// is the terminal (120 columns, `TERM=xterm-256color`, so colour is on), the other a pipe.
/// Returns the bytes the terminal received. The terminal is raw: its line discipline adds no
/// `\r` of its own, so a `\r` in the bytes came from leasetrace.
#[cfg(unix)]
pub fn on_a_terminal(args: &[&str], on_stderr: bool) -> (i32, Vec<u8>) {
    on_a_terminal_of(120, args, on_stderr)
}

/// `on_a_terminal`, on a terminal `columns` wide.
#[cfg(unix)]
pub fn on_a_terminal_of(columns: u16, args: &[&str], on_stderr: bool) -> (i32, Vec<u8>) {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let (master, slave) = pty::open(columns);
    let mut command = Command::new(env!("CARGO_BIN_EXE_leasetrace"));
    command.current_dir(env!("CARGO_MANIFEST_DIR")).args(args).env("TERM", "xterm-256color").stdin(Stdio::null());
    for name in ["NO_COLOR", "CLICOLOR_FORCE", "CLICOLOR", "COLUMNS"] {
        command.env_remove(name);
    }
    let terminal = Stdio::from(slave);
    if on_stderr {
        command.stderr(terminal).stdout(Stdio::null());
    } else {
        command.stdout(terminal).stderr(Stdio::null());
    }
    let mut child = command.spawn().expect("the binary runs");
    // The command holds the terminal's other end: dropped, the child's are the last, and the
    // read below ends when the child exits.
    drop(command);
    let mut received = Vec::new();
    let mut master = std::fs::File::from(master);
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        match master.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => received.extend_from_slice(&chunk[..read]),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            // Linux says EIO once every other end is closed.
            Err(error) if error.raw_os_error() == Some(libc::EIO) => break,
            Err(error) => panic!("reading the terminal: {error}"),
        }
    }
    let status = child.wait().unwrap();
    (status.code().expect("exited normally"), received)
}

#[cfg(unix)]
mod pty {
    use std::os::fd::{FromRawFd, OwnedFd};

    /// A raw pseudo-terminal of `columns` columns: its master and slave ends.
    #[allow(unsafe_code)]
    pub fn open(columns: u16) -> (OwnedFd, OwnedFd) {
        let (mut master, mut slave) = (-1, -1);
        let size = libc::winsize { ws_row: 40, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0 };
        // SAFETY: openpty writes the two descriptors it opens into `master` and `slave`; it takes
        // no name buffer (null), no settings (null) and reads `size` only during the call.
        let opened = unsafe {
            libc::openpty(&raw mut master, &raw mut slave, std::ptr::null_mut(), std::ptr::null(), &raw const size)
        };
        assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors were just opened by openpty and are owned by nothing else.
        let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        let fd = std::os::fd::AsRawFd::as_raw_fd(&slave);
        // SAFETY: a zeroed termios is a valid value to fill; tcgetattr fills it from the open
        // descriptor `fd`, cfmakeraw changes its flags, tcsetattr reads it during the call.
        unsafe {
            let mut settings: libc::termios = std::mem::zeroed();
            assert_eq!(libc::tcgetattr(fd, &raw mut settings), 0, "tcgetattr: {}", std::io::Error::last_os_error());
            // Raw: no `\n` → `\r\n` on output, so every byte read is one leasetrace wrote.
            libc::cfmakeraw(&raw mut settings);
            assert_eq!(libc::tcsetattr(fd, libc::TCSANOW, &raw const settings), 0, "tcsetattr");
        }
        (master, slave)
    }
}

#[cfg(unix)]
#[test]
fn the_table_on_a_terminal_holds_no_control_character_from_the_case() {
    let dir = hostile_case();
    let (code, received) = on_a_terminal(&["analyze", dir.path().to_str().unwrap()], false);
    assert_eq!(code, 0);
    let text = String::from_utf8(received).unwrap();
    assert!(text.contains("\u{1b}[1m\u{1b}[31mERROR\u{1b}[0m"), "a terminal gets colour:\n{text}");
    let plain = without_colour(&text);
    assert_eq!(hidden(&plain), Vec::<char>::new(), "{plain}");
    for forbidden in ['\u{1b}', '\u{7}', '\r', '\0', '\u{202E}', '\u{9b}'] {
        assert!(!plain.contains(forbidden), "{forbidden:?} reached the terminal");
    }
    // The summary is wrapped to the terminal's width, so the item may be cut at its spaces.
    assert!(plain.contains("\\rERROR"), "{plain}");
    assert!(plain.contains("duplicate-selection\\x1b]0;owned\\x07"), "{plain}");
}

#[cfg(unix)]
#[test]
fn an_error_on_a_terminal_holds_no_control_character_from_the_case() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger\u{1b}]0;name\u{7}.csv");
    std::fs::write(&path, format!("at,run_id,event\n\"2026-10-07 {PAYLOAD}\r\",r1,round_started\n")).unwrap();
    let (code, received) = on_a_terminal(&["timeline", "-q", "--ledger", path.to_str().unwrap()], true);
    assert_eq!(code, 2);
    let text = String::from_utf8(received).unwrap();
    assert_eq!(hidden(&text), Vec::<char>::new(), "{text:?}");
    assert!(text.contains("ledger\\x1b]0;name\\x07.csv:2: column 'at': malformed timestamp"), "{text:?}");
}

#[test]
fn lock_writes_out_what_its_notes_quote_of_a_parameters_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("params\u{1b}[2J.json");
    std::fs::write(&path, r#"{"queues": {"pr\u001b]0;owned\u0007\u202e": {"lockDuration": 30000}}}"#).unwrap();
    let run = leasetrace(&["lock", "--params", path.to_str().unwrap(), "--activated-at", "2026-10-07T09:33:00Z"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(hidden(&run.stdout), Vec::<char>::new(), "{}", run.stdout);
    assert!(
        run.stdout.contains(
            "params\\x1b[2J.json: lock parameters (lockDuration) read from /queues/pr\\x1b]0;owned\\x07<U+202E>"
        ),
        "{}",
        run.stdout
    );
}

#[cfg(unix)]
#[test]
fn init_on_a_terminal_writes_file_names_out() {
    let dir = tempfile::tempdir().unwrap();
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT);
    std::fs::copy(from.join("ledger.csv"), dir.path().join("ledger\u{1b}]0;owned\u{7}\r\u{202E}.csv")).unwrap();
    std::fs::write(dir.path().join("notes\u{1b}[2J.txt"), "\u{1b}]0;owned\u{7}\n").unwrap();
    let (code, received) = on_a_terminal(&["init", dir.path().to_str().unwrap()], false);
    assert_eq!(code, 0);
    let text = String::from_utf8(received).unwrap();
    assert_eq!(hidden(&text), Vec::<char>::new(), "{text:?}");
    assert!(text.contains("  ledger\\x1b]0;owned\\x07\\r<U+202E>.csv "), "{text}");
    assert!(text.contains("  notes\\x1b[2J.txt"), "the file left out too: {text}");
}
