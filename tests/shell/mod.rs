//! For a newcomer and a shell: a case folder read from inside it, `--color` and the variables
//! that choose colour, the width tables wrap to on a terminal that reports 0 columns, the shell
//! completions and man pages, and help that names no path of the source tree as if it were
//! installed. Terminals are real ptys (util-linux `script`), sized with `stty`.

use super::*;

/// An SGR escape sequence (`ESC [ … m`), the only codes leasetrace draws.
fn sgr() -> regex::Regex {
    regex::Regex::new("\x1b\\[[0-9;]*m").unwrap()
}

fn without_sgr(text: &str) -> String {
    sgr().replace_all(text, "").into_owned()
}

impl Leasetrace {
    fn dir(mut self, dir: &Path) -> Self {
        self.command.current_dir(dir);
        self
    }
}

/// Where `tool` is installed (on PATH), if it is.
fn installed(tool: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join(tool)).find(|path| path.is_file())
}

/// `tool`, which a check needs: when it is not installed, outside CI the check says on the
/// terminal that it was skipped (straight to stderr, which the test harness does not hold back)
/// and `None` is returned; with CI set it fails, as the real-BullMQ tests do.
fn needed(tool: &str, package: &str, check: &str) -> Option<PathBuf> {
    let found = installed(tool);
    if found.is_none() {
        assert!(
            !super::e2e::in_ci(std::env::var_os("CI").as_deref()),
            "{tool} is not installed (Debian: {package}) and CI is set: {check} cannot be skipped"
        );
        let line = format!("SKIPPED {check}: {tool} is not installed (Debian: {package})\n");
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
    found
}

// ---------------------------------------------------------------- a case folder, from inside

#[test]
fn analyze_inside_a_case_folder_reads_its_manifest() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT);
    let inside = leasetrace(&["analyze", "--format", "json"]).dir(&folder).run();
    assert_eq!(inside.code, 0, "{}", inside.stderr);
    let given = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run();
    let (inside, given) = (inside.json(), given.json());
    // The same case, the same findings; only the paths of their evidence are relative.
    let essence = |report: &Value| -> Vec<(Value, Value, Value)> {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["kind"].clone(), f["summary"].clone(), f["metrics"].clone()))
            .collect()
    };
    assert_eq!(essence(&inside), essence(&given));
    assert_eq!(essence(&inside).len(), 5);
    let paths: Vec<&str> = inside["inputs"].as_array().unwrap().iter().map(|i| i["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["ledger.csv", "server.log", "bullmq.json"], "paths relative to the folder");
    let assumptions = inside["assumptions"].as_array().unwrap();
    assert!(
        assumptions.iter().any(|a| a == "no CASE given: read the case of the current folder (leasetrace.toml)"),
        "the report says where the case came from: {assumptions:#?}"
    );

    // timeline and check take their case the same way.
    let timeline = leasetrace(&["timeline", "--format", "json"]).dir(&folder).run();
    assert_eq!(timeline.code, 0, "{}", timeline.stderr);
    let check = leasetrace(&["check"]).dir(&folder).run();
    assert_eq!(check.code, 1, "the incident fails the check:\n{}", check.stderr);
}

#[test]
fn sources_by_flag_inside_a_case_folder_do_not_mix_in_its_manifest() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT);
    let run = leasetrace(&["analyze", "--ledger", "ledger.csv", "--format", "json"]).dir(&folder).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let inputs = run.json()["inputs"].as_array().unwrap().clone();
    assert_eq!(inputs.len(), 1, "only the ledger given: {inputs:#?}");
}

#[test]
fn a_folder_without_a_manifest_says_so_and_how_to_make_one() {
    let empty = tempfile::tempdir().unwrap();
    let run = leasetrace(&["analyze"]).dir(empty.path()).run();
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("nothing to read: no leasetrace.toml in the current folder"), "{}", run.stderr);
    assert!(run.stderr.contains("leasetrace init FOLDER"), "{}", run.stderr);
}

// ---------------------------------------------------------------- colour

#[test]
fn color_always_paints_the_severities_and_changes_nothing_else() {
    let plain = leasetrace(&["analyze", INCIDENT, "--color", "never"]).run();
    let painted = leasetrace(&["analyze", INCIDENT, "--color", "always"]).run();
    assert_eq!((plain.code, painted.code), (0, 0), "{}{}", plain.stderr, painted.stderr);
    assert!(!plain.stdout.contains('\x1b'), "--color never draws no escape code");
    let codes = sgr().find_iter(&painted.stdout).count();
    // WARNING once, and 5 findings' severities: each painted and reset.
    assert_eq!(codes % 2, 0, "every code is reset:\n{}", painted.stdout);
    assert!(codes >= 12, "{codes} codes:\n{}", painted.stdout);
    let error = painted.stdout.lines().find(|l| l.contains("duplicate-selection at")).expect("the finding's line");
    assert!(sgr().is_match(error), "the severity is painted: {error:?}");
    assert_eq!(without_sgr(&painted.stdout), plain.stdout, "colour adds codes, nothing else");
}

#[test]
fn under_auto_a_pipe_gets_the_plain_bytes() {
    let plain = leasetrace(&["analyze", INCIDENT, "--color", "never"]).run();
    let auto = leasetrace(&["analyze", INCIDENT]).env("TERM", "xterm-256color").run();
    assert_eq!(auto.stdout, plain.stdout, "a pipe is not a terminal: no colour under auto");
    let clicolor = leasetrace(&["analyze", INCIDENT]).env("CLICOLOR", "1").run();
    assert_eq!(clicolor.stdout, plain.stdout, "CLICOLOR=1 colours terminals only");
}

#[test]
fn no_color_turns_colour_off_and_the_flag_turns_it_back_on() {
    let off = leasetrace(&["analyze", INCIDENT]).env("NO_COLOR", "1").env("CLICOLOR_FORCE", "1").run();
    assert!(!off.stdout.contains('\x1b'), "NO_COLOR wins over CLICOLOR_FORCE:\n{}", off.stdout);
    let on = leasetrace(&["analyze", INCIDENT, "--color", "always"]).env("NO_COLOR", "1").run();
    assert!(sgr().is_match(&on.stdout), "--color always wins over NO_COLOR (no-color.org)");
}

#[test]
fn clicolor_force_colours_a_pipe() {
    let forced = leasetrace(&["analyze", INCIDENT]).env("CLICOLOR_FORCE", "1").run();
    assert_eq!(forced.code, 0, "{}", forced.stderr);
    assert!(sgr().is_match(&forced.stdout), "CLICOLOR_FORCE=1 into a pipe:\n{}", forced.stdout);
    let zero = leasetrace(&["analyze", INCIDENT]).env("CLICOLOR_FORCE", "0").run();
    assert!(!zero.stdout.contains('\x1b'), "CLICOLOR_FORCE=0 forces nothing (bixense: != 0)");
    let never = leasetrace(&["analyze", INCIDENT, "--color", "never"]).env("CLICOLOR_FORCE", "1").run();
    assert!(!never.stdout.contains('\x1b'), "--color never wins over CLICOLOR_FORCE");
}

#[test]
fn clap_help_and_usage_errors_follow_the_flag_too() {
    let help = leasetrace(&["--color", "always", "--help"]).run();
    assert!(sgr().is_match(&help.stdout), "--color always colours --help:\n{}", help.stdout);
    assert!(!leasetrace(&["--help"]).run().stdout.contains('\x1b'), "a pipe under auto: plain help");
    let error = leasetrace(&["analyze", "--bogus", "--color=always"]).run();
    assert_eq!(error.code, 2);
    assert!(sgr().is_match(&error.stderr), "{}", error.stderr);
    let never = leasetrace(&["analyze", "--bogus", "--color", "never"]).env("CLICOLOR_FORCE", "1").run();
    assert!(!never.stderr.contains('\x1b'), "{}", never.stderr);
    // Without the flag, by the report's rules: CLICOLOR_FORCE=1 colours a pipe, =0 does not.
    let forced = leasetrace(&["--help"]).env("CLICOLOR_FORCE", "1").run();
    assert!(sgr().is_match(&forced.stdout), "{}", forced.stdout);
    let zero = leasetrace(&["--help"]).env("CLICOLOR_FORCE", "0").run();
    assert!(!zero.stdout.contains('\x1b'), "CLICOLOR_FORCE=0 forces nothing in help either");
}

#[test]
fn json_is_never_coloured() {
    let run = leasetrace(&["analyze", INCIDENT, "--format", "json", "--color", "always"]).run();
    assert!(!run.stdout.contains('\x1b'));
    run.json();
}

// ---------------------------------------------------------------- a real terminal

/// The binary on a real pty of `cols` columns (`stty cols`): `script` runs it, with stdin, stdout
/// and stderr on the pty. Returns what `stty size` said and the output, `\r\n` made `\n`.
#[cfg(target_os = "linux")]
fn on_a_pty(cols: u16, env: &[(&str, &str)], args: &[&str]) -> Option<(String, String)> {
    let script = needed("script", "bsdutils", "a check on a real terminal")?;
    let binary = env!("CARGO_BIN_EXE_leasetrace");
    let line = format!("stty cols {cols} rows 0; stty size; exec {binary} {}", args.join(" "));
    let mut command = Command::new(script);
    command.args(["-qec", &line, "/dev/null"]).current_dir(env!("CARGO_MANIFEST_DIR"));
    for name in ["NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "COLUMNS"] {
        command.env_remove(name);
    }
    command.env("TERM", "xterm-256color").envs(env.iter().copied()).stdin(Stdio::null());
    let output = command.output().expect("util-linux `script` runs (the pty tests need it)");
    assert!(output.status.success(), "script {line}: {}", output_text(&output));
    let text = String::from_utf8(output.stdout).unwrap().replace("\r\n", "\n");
    let (size, rest) = text.split_once('\n').expect("stty size printed a line");
    Some((size.to_string(), rest.to_string()))
}

#[cfg(target_os = "linux")]
fn output_text(output: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
}

/// The widest line of the tables (lines drawn with box characters), in columns.
#[cfg(target_os = "linux")]
fn table_width(text: &str) -> usize {
    without_sgr(text)
        .lines()
        .filter(|l| l.trim_start().starts_with(['┌', '│', '╞', '└']))
        .map(|l| l.chars().count())
        .max()
        .expect("the output has tables")
}

#[cfg(target_os = "linux")]
#[test]
fn a_terminal_of_0_columns_wraps_at_80_or_at_columns() {
    let Some((size, out)) = on_a_pty(0, &[], &["-q", "analyze", INCIDENT]) else { return };
    assert_eq!(size, "0 0", "the pty reports 0x0");
    assert_eq!(table_width(&out), 80, "80 columns, not one character per column:\n{out}");
    // At 80 columns the inputs' 8 columns do not fit: one record each (tests/layout); the metrics
    // grid does, with whole headers.
    assert!(
        out.contains("│ metric ") && out.contains("  kind: log · format: text"),
        "the header is whole words:\n{out}"
    );

    let Some((size, out)) = on_a_pty(0, &[("COLUMNS", "100")], &["-q", "analyze", INCIDENT]) else { return };
    assert_eq!(size, "0 0");
    assert_eq!(table_width(&out), 100, "COLUMNS when the terminal says 0:\n{out}");

    let Some((size, out)) = on_a_pty(120, &[("COLUMNS", "100")], &["-q", "analyze", INCIDENT]) else { return };
    assert_eq!(size, "0 120");
    assert_eq!(table_width(&out), 120, "a terminal that says its width is believed:\n{out}");
}

#[cfg(target_os = "linux")]
#[test]
fn on_a_terminal_the_headline_and_summaries_wrap_to_its_width_and_a_pipe_keeps_them_whole() {
    let Some((_, out)) = on_a_pty(100, &[("NO_COLOR", "1")], &["-q", "analyze", INCIDENT]) else { return };
    let widest = out.lines().map(|l| l.chars().count()).max().unwrap();
    let headline: Vec<&str> =
        out.split("What happened").nth(1).unwrap().split("\n\n").next().unwrap().lines().collect();
    assert!(headline.iter().all(|l| l.chars().count() <= 100), "{headline:#?}");
    assert!(headline.len() > 7, "the six headline lines wrapped to more: {headline:#?}");
    // A hanging indent under each line's lead, and ids are never cut at their hyphens.
    assert!(headline.iter().any(|l| l.starts_with("      by round run-0954-a")), "{headline:#?}");
    assert!(!out.contains("run-\n"), "{out}");
    // Only the evidence lines (file:line and the raw text, clipped) may run past the width.
    for line in out.lines().filter(|l| l.chars().count() > 100) {
        assert!(line.starts_with("      fixtures/"), "{line} ({widest})");
    }
    let piped = leasetrace(&["analyze", INCIDENT]).run().stdout;
    assert!(piped.contains("  ERROR [4] duplicate-selection: PR-4412 was selected by round run-0933-b at 09:54:05.70 and again by round run-0954-a at 09:54:06.36, 0.66 s apart; both rounds delivered an effect for it.\n"));
}

#[cfg(target_os = "linux")]
#[test]
fn on_a_terminal_auto_colours_unless_no_color() {
    let Some((_, out)) = on_a_pty(100, &[], &["-q", "analyze", INCIDENT]) else { return };
    assert!(sgr().is_match(&out), "auto on a terminal draws colour:\n{out}");
    let Some((_, out)) = on_a_pty(100, &[("NO_COLOR", "1")], &["-q", "analyze", INCIDENT]) else { return };
    assert!(!out.contains('\x1b'), "NO_COLOR on a terminal:\n{out}");
    let Some((_, out)) = on_a_pty(100, &[("TERM", "dumb")], &["-q", "analyze", INCIDENT]) else { return };
    assert!(!out.contains('\x1b'), "TERM=dumb:\n{out}");
    let Some((_, out)) = on_a_pty(100, &[("CLICOLOR", "0")], &["-q", "analyze", INCIDENT]) else { return };
    assert!(!out.contains('\x1b'), "CLICOLOR=0 on a terminal:\n{out}");
    let Some((_, out)) = on_a_pty(100, &[("NO_COLOR", "1")], &["-q", "--color", "always", "analyze", INCIDENT]) else {
        return;
    };
    assert!(sgr().is_match(&out), "--color always over NO_COLOR on a terminal:\n{out}");
}

// ---------------------------------------------------------------- completions and man pages

/// Every command a user can type, from the binary's own help.
fn commands() -> Vec<String> {
    let help = leasetrace(&["--help"]).run().stdout;
    let listed = help.split("Commands:\n").nth(1).unwrap().split("\n\n").next().unwrap();
    let names: Vec<String> =
        listed.lines().filter_map(|l| l.split_whitespace().next()).filter(|n| *n != "help").map(String::from).collect();
    assert!(names.len() >= 8, "{names:?}");
    names
}

#[test]
fn completion_scripts_parse_in_their_shells_and_name_every_command() {
    let commands = commands();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let run = leasetrace(&["completions", shell]).run();
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        for command in &commands {
            assert!(run.stdout.contains(command.as_str()), "the {shell} script has no {command}");
        }
        assert!(run.stdout.contains("color"), "the {shell} script has no --color");
        // Each shell's own parser, where it is installed: `-n` reads without running. Elvish and
        // PowerShell have no such mode (and no Debian package here): their scripts are checked for
        // what they name only.
        if ["elvish", "powershell"].contains(&shell) {
            continue;
        }
        let Some(binary) = installed(shell) else {
            assert_ne!(shell, "bash", "bash is needed to check the bash completion script");
            let _ =
                writeln!(std::io::stderr(), "shell: {shell} is not installed: its completion script was not parsed");
            continue;
        };
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join(format!("leasetrace.{shell}"));
        std::fs::write(&script, &run.stdout).unwrap();
        let parsed = Command::new(&binary).arg("-n").arg(&script).output().unwrap();
        assert!(
            parsed.status.success() && parsed.stderr.is_empty(),
            "{shell} -n refuses the script: {}",
            String::from_utf8_lossy(&parsed.stderr)
        );
    }
}

#[test]
fn the_bash_completion_completes_the_commands_and_the_color_values() {
    let script = leasetrace(&["completions", "bash"]).run().stdout;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("leasetrace.bash");
    std::fs::write(&path, script).unwrap();
    // What bash would offer after `leasetrace an<TAB>` and `leasetrace analyze --color <TAB>`.
    let complete = |words: &str| {
        let line = format!(
            "source {}; COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); COMP_LINE='{words}'; COMP_POINT=${{#COMP_LINE}}; _leasetrace leasetrace \"${{COMP_WORDS[-1]}}\" \"${{COMP_WORDS[-2]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            path.display()
        );
        let output = Command::new("bash").args(["-c", &line]).output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    };
    assert_eq!(complete("leasetrace an").trim(), "analyze");
    let mut colors: Vec<String> = complete("leasetrace analyze --color ''").lines().map(String::from).collect();
    colors.sort();
    assert_eq!(colors, ["always", "auto", "never"]);
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let run = leasetrace(&["completions", "tcsh"]).run();
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("possible values: bash, elvish, fish, powershell, zsh"), "{}", run.stderr);
}

/// `groff -man` renders `page` with every warning on; returns the text, panicking on a warning.
/// Without groff (said as skipped), the page's text with its roff requests and escapes removed:
/// what it says is still checked, not how it renders.
fn rendered(page: &str, what: &str) -> String {
    let Some(groff) = needed("groff", "groff-base", &format!("rendering {what} with groff")) else {
        let text: Vec<String> = page
            .lines()
            .filter(|line| !line.starts_with('.') || line.starts_with(".SH "))
            .map(|line| {
                line.trim_start_matches(".SH ")
                    .replace("\\-", "-")
                    .replace("\\fB", "")
                    .replace("\\fR", "")
                    .replace("\\fI", "")
            })
            .collect();
        return text.join("\n");
    };
    let mut child = Command::new(groff)
        .args(["-man", "-Tutf8", "-ww", "-rLL=100n"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(page.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success() && stderr.is_empty(), "groff warns about {what}: {stderr}");
    // groff's bold and underline by overstriking, undone.
    let text = String::from_utf8(output.stdout).unwrap();
    regex::Regex::new(".\x08").unwrap().replace_all(&text, "").into_owned()
}

#[test]
fn the_man_page_renders_and_lists_every_command() {
    let run = leasetrace(&["man"]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains(".TH leasetrace 1"), "{}", &run.stdout[..run.stdout.len().min(300)]);
    let text = rendered(&run.stdout, "leasetrace(1)");
    for section in [
        "NAME",
        "SYNOPSIS",
        "OPTIONS",
        "SUBCOMMANDS",
        "EXIT STATUS",
        "ENVIRONMENT",
        "FILES",
        "EXAMPLES",
        "SEE ALSO",
        "VERSION",
    ] {
        assert!(text.lines().any(|l| l == section), "no {section} section:\n{text}");
    }
    for command in commands() {
        assert!(text.contains(&format!("leasetrace-{command}(1)")), "leasetrace(1) does not list {command}:\n{text}");
    }
    assert!(!text.contains("leasetrace-help(1)"), "no page is listed that does not exist");
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("leasetrace docs TOPIC prints one"), "the page says where the documentation is:\n{text}");
}

#[test]
fn man_dir_writes_a_page_per_command_and_each_renders() {
    let dir = tempfile::tempdir().unwrap();
    let run = leasetrace(&["man", "--dir", dir.path().to_str().unwrap()]).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut written: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    written.sort();
    let mut expected: Vec<String> = commands().iter().map(|c| format!("leasetrace-{c}.1")).collect();
    expected.push("leasetrace.1".into());
    expected.sort();
    assert_eq!(written, expected);
    assert_eq!(run.stdout.lines().count(), expected.len(), "each path printed:\n{}", run.stdout);
    let analyze = std::fs::read_to_string(dir.path().join("leasetrace-analyze.1")).unwrap();
    let text = rendered(&analyze, "leasetrace-analyze(1)");
    for flag in ["--ledger", "--log-tz", "--format", "--color"] {
        assert!(text.contains(flag), "leasetrace-analyze(1) has no {flag}:\n{text}");
    }
    for page in &written {
        let text = rendered(&std::fs::read_to_string(dir.path().join(page)).unwrap(), page);
        for section in ["EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"] {
            assert!(text.lines().any(|l| l == section), "{page}: no {section} section:\n{text}");
        }
        assert!(text.contains("leasetrace docs"), "{page} says where the documentation is");
    }
    let check = rendered(&std::fs::read_to_string(dir.path().join("leasetrace-check.1")).unwrap(), "check");
    assert!(check.contains("at least one shown finding is at or above --fail-on"), "{check}");
    assert!(check.contains("FORCE_COLOR") && check.contains("--format github --format"), "{check}");
    let capture = rendered(&std::fs::read_to_string(dir.path().join("leasetrace-capture.1")).unwrap(), "capture");
    assert!(capture.contains("LEASETRACE_REDIS_URL") && capture.contains("OUT/capture.json"), "{capture}");
    // The page `leasetrace man COMMAND` prints is the one written.
    let printed = leasetrace(&["man", "analyze"]).run();
    assert_eq!(printed.stdout, analyze);
    let unknown = leasetrace(&["man", "nope"]).run();
    assert_eq!(unknown.code, 2);
    assert!(unknown.stderr.contains("expected one of timeline, analyze"), "{}", unknown.stderr);
}

#[test]
fn man_renders_with_man_itself_where_installed() {
    let Some(man) = needed("man", "man-db", "reading leasetrace(1) with man -l") else { return };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("leasetrace.1");
    std::fs::write(&page, leasetrace(&["man"]).run().stdout).unwrap();
    let output = Command::new(man).arg("-l").arg(&page).env("MANPAGER", "cat").env("MANWIDTH", "100").output().unwrap();
    assert!(output.status.success(), "man -l: {}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("leasetrace-analyze(1)"), "{text}");
}

// ---------------------------------------------------------------- help without the source tree

#[test]
fn help_names_no_path_of_the_source_tree_as_if_installed() {
    let mut texts = vec![("leasetrace --help".to_string(), leasetrace(&["--help"]).run().stdout)];
    for command in commands() {
        texts.push((format!("leasetrace {command} --help"), leasetrace(&[command.as_str(), "--help"]).run().stdout));
    }
    let root = &texts[0].1;
    assert!(root.contains("`leasetrace explain CODE`") && root.contains("`leasetrace docs TOPIC`"), "{root}");
    let check = &texts.iter().find(|(what, _)| what == "leasetrace check --help").unwrap().1;
    assert!(check.contains("Exit codes: 0 no shown finding at or above --fail-on; 1 at least one"), "{check}");
    for (what, text) in &texts {
        for line in text.lines() {
            // A path of the source tree is said as one ("… of the leasetrace source
            // distribution (docs/…)"), never as if it sat beside the binary.
            if ["docs/", "fixtures/", "tests/", "README", "src/"].iter().any(|path| line.contains(path)) {
                assert!(line.contains("source distribution"), "{what} sends the reader to a repo path: {line}");
            }
        }
    }
}

// ---------------------------------------------------------------- docs in the binary

#[test]
fn docs_answers_every_topic_without_the_source_tree() {
    // The binary alone, as `cargo install` leaves it, run far from the source.
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("leasetrace");
    std::fs::copy(env!("CARGO_BIN_EXE_leasetrace"), &binary).unwrap();
    let run = |args: &[&str]| {
        let output = Command::new(&binary).args(args).current_dir(dir.path()).output().unwrap();
        (
            output.status.code().unwrap(),
            String::from_utf8(output.stdout).unwrap(),
            String::from_utf8(output.stderr).unwrap(),
        )
    };
    let (code, list, _) = run(&["docs"]);
    assert_eq!(code, 0);
    let topics: Vec<&str> = list.lines().skip(1).filter_map(|line| line.split_whitespace().next()).collect();
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let mut pages = 0;
    for entry in walk(&docs) {
        if entry.extension().is_some_and(|ext| ext == "md") {
            pages += 1;
            let topic = entry.strip_prefix(&docs).unwrap().with_extension("").display().to_string();
            assert!(topics.contains(&topic.as_str()), "docs/{topic}.md is not carried: {list}");
            let (code, text, stderr) = run(&["docs", &topic]);
            assert_eq!(code, 0, "{stderr}");
            assert_eq!(text, std::fs::read_to_string(&entry).unwrap(), "{topic}");
        }
    }
    assert_eq!(topics.len(), pages, "{list}");
    // The forms a user copies from a message or the source.
    assert_eq!(run(&["docs", "docs/inputs/ledger.md"]).1, run(&["docs", "inputs/ledger"]).1);
    assert_eq!(run(&["docs", "stalled-rerun"]).1, run(&["docs", "findings/stalled-rerun"]).1);
    let (code, _, stderr) = run(&["docs", "inputs/ledgr"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("did you mean inputs/ledger"), "{stderr}");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}
