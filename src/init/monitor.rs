//! Recognising `redis-cli MONITOR` output (legacy Bull's lock traffic): told by its first line
//! (`OK`, then `<epoch seconds>.<micros> [<db> <client>] "command" …`), then read by the MONITOR
//! reader on the sample, as `analyze` will read it. Its times are the server's epoch seconds, so
//! the source needs no zone; its job moments say which job ids the folder's other files name.

use crate::ingest::EventFormat;
use crate::ingest::bull::monitor::RedisMonitor;

use super::sample::Sample;

/// Whether the sample's first line that is not redis-cli's `OK` is a MONITOR line.
pub fn looks_like(sample: &Sample) -> bool {
    sample
        .text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty() && *line != "OK")
        .is_some_and(|line| RedisMonitor.sniff(line))
}

/// The evidence of a recording, for init's report and the manifest's comment.
pub fn evidence(found: &super::trace::Found) -> String {
    format!(
        "redis-cli MONITOR output, {} of {} lines from Bull's lock scripts, {} events",
        found.used, found.lines, found.events
    )
}
