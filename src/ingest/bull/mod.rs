//! Legacy Bull's own records that BullMQ's readers do not already take: `redis-cli MONITOR` output
//! (`monitor`), the one record of Bull's lock traffic, since Bull keeps no events stream. Bull's job
//! hashes, logs and settings are read by the job-hash, log and parameters readers (docs/inputs/bull.md).

pub mod monitor;

use super::EventFormat;

/// Bull's record formats, in the order they are tried (`ingest::FAMILIES`).
pub const FORMATS: &[&dyn EventFormat] = &[&monitor::RedisMonitor];
