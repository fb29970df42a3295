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
//! 4. `CLICOLOR=0`: no colour;
//! 5. otherwise colour only when stdout is a terminal whose `TERM` is not `dumb`.
//!
//! Under `auto` with none of those variables set, output that is not a terminal is never coloured,
//! so a pipe, a file or a CI log gets the same bytes whatever the machine.

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
            } else if set("CLICOLOR_FORCE").is_some_and(|value| value != "0") {
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

#[cfg(test)]
mod tests {
    use super::*;

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
