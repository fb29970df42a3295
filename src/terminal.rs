//! What stdout allows: colour, and the width tables wrap to.
//!
//! Decided once, by the binary, from `--color`, the environment and whether stdout is a terminal;
//! renderers receive the result and never look at the environment themselves, so a library caller
//! or a test gets plain, unwrapped bytes unless it asks for more.
//!
//! Colour follows the conventions of no-color.org and bixense.com/clicolors, in the order the
//! anstream crate reads them (clap's choice), and clap's own `--help` and usage errors are coloured
//! by the same rules (`Cli::parse_args`), so that help and report agree:
//! 1. `--color always` / `--color never` win over the environment (a flag is the user's choice
//!    for this one run; no-color.org asks for exactly that);
//! 2. `NO_COLOR` set and not empty: no colour;
//! 3. `CLICOLOR_FORCE` set, not empty and not `0` (anstream takes `0` as set; bixense says
//!    `!= 0`): colour, even into a pipe or a file;
//!    `FORCE_COLOR` set and not empty (force-color.org), likewise, except `0` and `false`, which
//!    Node and many CI tools read as "no forcing" (they force nothing here, and forbid nothing);
//! 4. `CLICOLOR=0`: no colour;
//! 5. otherwise colour only when stdout is a terminal whose `TERM` is not `dumb`.
//!
//! Under `auto` with none of those variables set, output that is not a terminal is never coloured,
//! so a pipe, a file or a CI log gets the same bytes whatever the machine.
//!
//! Text from a case never controls the terminal: a ledger cell, a log line or a file name may
//! hold an escape sequence (ESC, an OSC that retitles the window or opens a link, a CSI that
//! clears the screen), a carriage return that overprints a finding, a bidi override that turns
//! the text after it around. Every human output and every error message shows such characters
//! as `visible` writes them (`\x1b`, `\r`, `<U+202E>`) before any colour of our own is added;
//! the formats made for programs (JSON, JSON Lines, SARIF, Timesketch) keep the exact text, which
//! their own escaping carries.

use std::borrow::Cow;
use std::ffi::OsString;
use std::io::{self, IsTerminal};

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorWhen {
    /// Colour on a terminal, as NO_COLOR, CLICOLOR_FORCE and CLICOLOR allow.
    #[default]
    Auto,
    /// Colour wherever the output goes, whatever the environment says.
    Always,
    /// No colour.
    Never,
}

/// The width tables wrap to when the terminal does not say one: the width of the terminals
/// of old, which every terminal still opens at.
pub const FALLBACK_WIDTH: u16 = 80;

/// What a renderer may do on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Terminal {
    /// Whether to draw colour (SGR escape codes).
    pub color: bool,
    /// The width, in columns, tables wrap to; `None` when stdout is not a terminal: tables then
    /// keep their natural width, so that output kept in a file or a ticket does not depend on the
    /// window it was made in.
    pub width: Option<u16>,
}

impl Terminal {
    /// No colour, no wrapping: what a program reading the output wants.
    pub fn plain() -> Self {
        Terminal::default()
    }

    /// What stdout allows, as `when` and the environment say.
    pub fn stdout(when: ColorWhen) -> Self {
        let terminal = io::stdout().is_terminal();
        let env = |name: &str| std::env::var_os(name);
        Terminal {
            color: color(when, terminal, env),
            // comfy-table asks the terminal (crossterm: TIOCGWINSZ on /dev/tty, else on stdout).
            width: terminal.then(|| wrap_width(comfy_table::Table::new().width(), env("COLUMNS"))),
        }
    }
}

/// The width of the terminal on stderr, where the progress bars are drawn (stdout may be a file
/// meanwhile), by the rules of `wrap_width`.
pub fn stderr_width() -> u16 {
    wrap_width(comfy_table::Table::new().use_stderr().width(), std::env::var_os("COLUMNS"))
}

/// Whether to colour, by the order in the module header. `env` reads an environment variable;
/// `terminal` says whether stdout is one.
pub fn color(when: ColorWhen, terminal: bool, env: impl Fn(&str) -> Option<OsString>) -> bool {
    let set = |name: &str| env(name).filter(|value| !value.is_empty());
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => {
            if set("NO_COLOR").is_some() {
                false
            } else if set("CLICOLOR_FORCE").is_some_and(|value| value != "0")
                || set("FORCE_COLOR").is_some_and(|value| value != "0" && value != "false")
            {
                true
            } else if env("CLICOLOR").is_some_and(|value| value == "0") {
                false
            } else {
                terminal && env("TERM").is_some_and(|term| term != "dumb")
            }
        }
    }
}

/// The width to wrap to on a terminal that reported `reported` columns (`None`: it could not be
/// asked). A terminal that reports 0 columns (a pty nobody sized: `script`, `docker exec -t`, some
/// CI runners) is not 0 columns wide: wrapping to 0 would draw one character per column. Then
/// `COLUMNS`, when it is a positive number, else 80.
pub fn wrap_width(reported: Option<u16>, columns: Option<OsString>) -> u16 {
    reported.filter(|&width| width > 0).unwrap_or_else(|| {
        columns
            .and_then(|text| text.to_str().and_then(|text| text.trim().parse::<u16>().ok()))
            .filter(|&width| width > 0)
            .unwrap_or(FALLBACK_WIDTH)
    })
}

/// Whether `c` must not reach a terminal as it is: a control character (C0, DEL, C1), a bidi
/// control (embeddings, overrides, isolates, marks), a line or paragraph separator, or another
/// invisible format character (soft hyphen, zero-width space, word joiner, invisible operators,
/// byte-order mark, interlinear annotation marks, tag characters). The zero-width joiner and
/// non-joiner are left alone: emoji sequences and several scripts (Persian, the Indic scripts)
/// need them, and they move nothing.
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{061C}'
                | '\u{180E}'
                | '\u{200B}'
                | '\u{200E}'..='\u{200F}'
                | '\u{2028}'..='\u{202E}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206F}'
                | '\u{FEFF}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{E0001}'
                | '\u{E0020}'..='\u{E007F}'
        )
}

/// `text` as a terminal may show it: every character `is_hidden` names written out, `\t`, `\n`
/// and `\r` for those three, `\x1b` for the other ASCII controls and DEL, `<U+202E>` for the rest
/// (C1 controls, bidi and format characters). Everything else is left as it is (a backslash too:
/// what is shown is for reading, not for parsing back). Borrowed when nothing needs it, as
/// nearly all text does.
pub fn visible(text: &str) -> Cow<'_, str> {
    if text.bytes().all(|b| (b' '..=b'~').contains(&b)) || !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        push_visible(&mut out, c);
    }
    Cow::Owned(out)
}

/// `visible` for text laid out on one line (a Markdown table cell, a chart label): a line break
/// (`\r\n`, `\n` or `\r`) or a tab is one space, the rest as `visible` writes it.
pub fn visible_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\r' | '\n' | '\t' => out.push(' '),
            c => push_visible(&mut out, c),
        }
    }
    Cow::Owned(out)
}

/// Keeps the lines of `text` (ended by `\n`, which the caller wrote) and makes each `visible`:
/// for a message laid out on several lines by leasetrace itself (an error listing files).
pub fn visible_lines(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && is_hidden(c)) {
        return Cow::Borrowed(text);
    }
    let lines: Vec<Cow<'_, str>> = text.split('\n').map(visible).collect();
    Cow::Owned(lines.join("\n"))
}

/// Appends `c` to `out` as `visible` writes it.
pub fn push_visible(out: &mut String, c: char) {
    use std::fmt::Write as _;
    match c {
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        c if c.is_ascii() && is_hidden(c) => {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        }
        c if is_hidden(c) => {
            let _ = write!(out, "<U+{:04X}>", u32::from(c));
        }
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_writes_out_what_would_control_the_terminal() {
        assert_eq!(visible("PR-OK (no duplicate)\rERROR"), "PR-OK (no duplicate)\\rERROR");
        assert_eq!(visible("\u{1b}]0;owned\u{7}"), "\\x1b]0;owned\\x07");
        assert_eq!(visible("\u{1b}[2J\0\u{7f}\t\n"), "\\x1b[2J\\x00\\x7f\\t\\n");
        assert_eq!(visible("abc\u{202E}fed\u{2066}x\u{2069}"), "abc<U+202E>fed<U+2066>x<U+2069>");
        assert_eq!(
            visible("\u{9b}31m \u{85} \u{feff} \u{200b} \u{2028} \u{e0041}"),
            "<U+009B>31m <U+0085> <U+FEFF> <U+200B> <U+2028> <U+E0041>"
        );
        // An OSC 8 link cut in the middle stays text: nothing is left open.
        assert_eq!(visible("\u{1b}]8;;https://x.example\u{1b}\\click"), "\\x1b]8;;https://x.example\\x1b\\click");
    }

    #[test]
    fn visible_leaves_text_alone_and_borrows_it() {
        for text in
            ["", "run-0933-b", "리뷰-1 · 09:54:05.70", "C:\\logs\\x.log", "👨\u{200d}👩\u{200d}👧", "می\u{200c}خواهم"]
        {
            assert!(matches!(visible(text), Cow::Borrowed(t) if t == text), "{text:?}");
            assert!(matches!(visible_line(text), Cow::Borrowed(t) if t == text), "{text:?}");
        }
    }

    #[test]
    fn visible_line_lays_line_breaks_and_tabs_as_spaces() {
        assert_eq!(visible_line("a\r\nb\nc\rd\te\u{1b}[0m"), "a b c d e\\x1b[0m");
    }

    #[test]
    fn visible_lines_keeps_the_callers_lines() {
        assert_eq!(visible_lines("files:\n  a\u{1b}[2J: x\n  b\r: y"), "files:\n  a\\x1b[2J: x\n  b\\r: y");
        assert!(matches!(visible_lines("a\nb"), Cow::Borrowed(_)));
    }

    #[test]
    fn nothing_visible_writes_is_hidden() {
        let every: String =
            (0u32..0x3000).chain(0xE0000..0xE0080).chain(0xFE00..0x10000).filter_map(char::from_u32).collect();
        assert!(!visible(&every).chars().any(is_hidden));
        assert!(!visible_line(&every).chars().any(is_hidden));
    }

    fn env<'a>(vars: &'a [(&str, &str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| vars.iter().find(|(key, _)| *key == name).map(|(_, value)| OsString::from(value))
    }

    const TERM: (&str, &str) = ("TERM", "xterm-256color");

    #[test]
    fn auto_colours_a_terminal_only() {
        assert!(color(ColorWhen::Auto, true, env(&[TERM])));
        assert!(!color(ColorWhen::Auto, false, env(&[TERM])), "a pipe or a file gets no colour");
        assert!(!color(ColorWhen::Auto, true, env(&[("TERM", "dumb")])));
        assert!(!color(ColorWhen::Auto, true, env(&[])), "no TERM: not a terminal that says it can");
    }

    #[test]
    fn no_color_and_clicolor_0_turn_it_off_under_auto() {
        assert!(!color(ColorWhen::Auto, true, env(&[TERM, ("NO_COLOR", "1")])));
        assert!(color(ColorWhen::Auto, true, env(&[TERM, ("NO_COLOR", "")])), "empty NO_COLOR is unset");
        assert!(!color(ColorWhen::Auto, true, env(&[TERM, ("CLICOLOR", "0")])));
        assert!(color(ColorWhen::Auto, true, env(&[TERM, ("CLICOLOR", "1")])));
    }

    #[test]
    fn clicolor_force_colours_a_pipe_unless_no_color() {
        assert!(color(ColorWhen::Auto, false, env(&[("CLICOLOR_FORCE", "1")])));
        assert!(color(ColorWhen::Auto, false, env(&[("CLICOLOR_FORCE", "1"), ("CLICOLOR", "0")])));
        assert!(!color(ColorWhen::Auto, false, env(&[("CLICOLOR_FORCE", "0")])), "bixense: != 0");
        assert!(!color(ColorWhen::Auto, false, env(&[("CLICOLOR_FORCE", "")])));
        assert!(!color(ColorWhen::Auto, false, env(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")])));
        // force-color.org: any value but the empty string; 0 and false force nothing.
        assert!(color(ColorWhen::Auto, false, env(&[("FORCE_COLOR", "1")])));
        assert!(color(ColorWhen::Auto, false, env(&[("FORCE_COLOR", "3"), ("CLICOLOR", "0")])));
        assert!(!color(ColorWhen::Auto, false, env(&[("FORCE_COLOR", "0")])));
        assert!(!color(ColorWhen::Auto, false, env(&[("FORCE_COLOR", "false")])));
        assert!(!color(ColorWhen::Auto, false, env(&[("FORCE_COLOR", "")])));
        assert!(!color(ColorWhen::Auto, false, env(&[("FORCE_COLOR", "1"), ("NO_COLOR", "1")])));
        assert!(!color(ColorWhen::Never, true, env(&[TERM, ("FORCE_COLOR", "1")])));
    }

    #[test]
    fn the_flag_wins_over_the_environment() {
        assert!(color(ColorWhen::Always, false, env(&[("NO_COLOR", "1"), ("CLICOLOR", "0")])));
        assert!(!color(ColorWhen::Never, true, env(&[TERM, ("CLICOLOR_FORCE", "1")])));
    }

    #[test]
    fn a_terminal_of_0_columns_wraps_at_columns_or_80() {
        assert_eq!(wrap_width(Some(132), Some("100".into())), 132, "a real width is the width");
        assert_eq!(wrap_width(Some(0), Some("100".into())), 100);
        assert_eq!(wrap_width(Some(0), Some(" 120 ".into())), 120);
        assert_eq!(wrap_width(None, Some("100".into())), 100);
        assert_eq!(wrap_width(Some(0), None), 80);
        for bad in ["0", "-5", "wide", "", "99999"] {
            assert_eq!(wrap_width(Some(0), Some(bad.into())), 80, "COLUMNS={bad:?}");
        }
    }
}
