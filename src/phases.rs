//! The benchmark's view into one run: with `LEASETRACE_PHASES` set, each phase of building a
//! report writes to standard error how long the run has taken so far and the memory it holds at
//! the phase's end and at most during the phase (`docs/performance.md`). Without it, nothing.
//!
//! The memory is Linux's `VmRSS` and `VmHWM`; the high-water mark is reset after each phase
//! (`/proc/self/clear_refs`), so each phase's own peak is shown. That reset also resets what
//! `getrusage` and GNU time report as the process's peak: a run measured for its peak is a run
//! without this variable.

use std::time::Instant;

/// A run's phases, timed from its start; inactive unless `LEASETRACE_PHASES` is set.
pub struct Phases {
    start: Option<Instant>,
}

impl Phases {
    pub fn from_env() -> Phases {
        Phases { start: std::env::var_os("LEASETRACE_PHASES").map(|_| Instant::now()) }
    }

    /// Writes `phase`'s line: the seconds since the start, and memory as `now`/`peak` MB.
    pub fn end(&self, phase: &str) {
        let Some(start) = self.start else { return };
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
                .map_or_else(|| "?".to_string(), |kb| format!("{:.1}", kb / 1024.0))
        };
        eprintln!(
            "leasetrace phase {phase:<10} {:>8.3} s  rss {} MB  peak {} MB",
            start.elapsed().as_secs_f64(),
            field("VmRSS:"),
            field("VmHWM:")
        );
        // Best effort: without it (not Linux, no /proc), each peak is the run's so far.
        let _ = std::fs::write("/proc/self/clear_refs", "5");
    }
}
