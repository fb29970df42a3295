//! BullMQ's lock parameters, in BullMQ's own names and units (milliseconds).
//!
//! Defaults are BullMQ v5's worker defaults (see docs/inputs.md for the source lines); each value
//! remembers where it came from so that the report can say which numbers were assumed.

use serde::Serialize;

/// BullMQ v5 `Worker` default: `lockDuration: 30000`.
pub const DEFAULT_LOCK_DURATION_MS: u64 = 30_000;
/// BullMQ v5 `Worker` default: `stalledInterval: 30000`.
pub const DEFAULT_STALLED_INTERVAL_MS: u64 = 30_000;
/// BullMQ v5 `Worker` default: `maxStalledCount: 1`.
pub const DEFAULT_MAX_STALLED_COUNT: u64 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ParamOrigin {
    /// Not given anywhere: BullMQ v5's default.
    Default,
    /// `lockRenewTime` not given: half of `lockDuration`, as BullMQ computes it.
    HalfOfLockDuration,
    /// Read from the lock parameters file.
    File,
    /// Given on the command line.
    Flag,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LockParams {
    pub lock_duration: u64,
    pub lock_renew_time: u64,
    pub stalled_interval: u64,
    pub max_stalled_count: u64,
    /// BullMQ version the parameters file names, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(skip)]
    pub origins: ParamOrigins,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamOrigins {
    pub lock_duration: ParamOrigin,
    pub lock_renew_time: ParamOrigin,
    pub stalled_interval: ParamOrigin,
    pub max_stalled_count: ParamOrigin,
}

impl Default for LockParams {
    fn default() -> Self {
        LockParams {
            lock_duration: DEFAULT_LOCK_DURATION_MS,
            lock_renew_time: DEFAULT_LOCK_DURATION_MS / 2,
            stalled_interval: DEFAULT_STALLED_INTERVAL_MS,
            max_stalled_count: DEFAULT_MAX_STALLED_COUNT,
            version: None,
            origins: ParamOrigins {
                lock_duration: ParamOrigin::Default,
                lock_renew_time: ParamOrigin::HalfOfLockDuration,
                stalled_interval: ParamOrigin::Default,
                max_stalled_count: ParamOrigin::Default,
            },
        }
    }
}

/// Values given for some parameters; the rest fall back to BullMQ's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParamOverrides {
    pub lock_duration: Option<u64>,
    pub lock_renew_time: Option<u64>,
    pub stalled_interval: Option<u64>,
    pub max_stalled_count: Option<u64>,
    pub version: Option<String>,
}

impl LockParams {
    /// Applies file values, then flag values, over BullMQ's defaults. `lockRenewTime` follows
    /// `lockDuration` unless it was given itself, as in BullMQ.
    pub fn resolve(file: &ParamOverrides, flags: &ParamOverrides) -> LockParams {
        fn pick(flag: Option<u64>, file: Option<u64>) -> Option<(u64, ParamOrigin)> {
            flag.map(|v| (v, ParamOrigin::Flag)).or(file.map(|v| (v, ParamOrigin::File)))
        }
        let defaults = LockParams::default();
        let (lock_duration, lock_duration_origin) =
            pick(flags.lock_duration, file.lock_duration).unwrap_or((defaults.lock_duration, ParamOrigin::Default));
        let (lock_renew_time, renew_origin) = pick(flags.lock_renew_time, file.lock_renew_time)
            .unwrap_or((lock_duration / 2, ParamOrigin::HalfOfLockDuration));
        let (stalled_interval, stalled_origin) = pick(flags.stalled_interval, file.stalled_interval)
            .unwrap_or((defaults.stalled_interval, ParamOrigin::Default));
        let (max_stalled_count, max_origin) = pick(flags.max_stalled_count, file.max_stalled_count)
            .unwrap_or((defaults.max_stalled_count, ParamOrigin::Default));
        LockParams {
            lock_duration,
            lock_renew_time,
            stalled_interval,
            max_stalled_count,
            version: flags.version.clone().or_else(|| file.version.clone()),
            origins: ParamOrigins {
                lock_duration: lock_duration_origin,
                lock_renew_time: renew_origin,
                stalled_interval: stalled_origin,
                max_stalled_count: max_origin,
            },
        }
    }

    /// Each parameter with its BullMQ name, value and origin, for reports.
    pub fn entries(&self) -> [(&'static str, u64, ParamOrigin); 4] {
        [
            ("lockDuration", self.lock_duration, self.origins.lock_duration),
            ("lockRenewTime", self.lock_renew_time, self.origins.lock_renew_time),
            ("stalledInterval", self.stalled_interval, self.origins.stalled_interval),
            ("maxStalledCount", self.max_stalled_count, self.origins.max_stalled_count),
        ]
    }
}

impl ParamOrigin {
    pub fn describe(self) -> &'static str {
        match self {
            ParamOrigin::Default => "BullMQ v5 default",
            ParamOrigin::HalfOfLockDuration => "lockDuration / 2 (BullMQ default)",
            ParamOrigin::File => "lock parameters file",
            ParamOrigin::Flag => "command line",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renew_time_follows_lock_duration_unless_given() {
        let file = ParamOverrides { lock_duration: Some(1_178_000), ..ParamOverrides::default() };
        let params = LockParams::resolve(&file, &ParamOverrides::default());
        assert_eq!(params.lock_renew_time, 589_000);
        assert_eq!(params.origins.lock_renew_time, ParamOrigin::HalfOfLockDuration);
        assert_eq!(params.stalled_interval, 30_000);
        assert_eq!(params.origins.stalled_interval, ParamOrigin::Default);
    }

    #[test]
    fn flags_override_the_file() {
        let file = ParamOverrides {
            lock_duration: Some(1_178_000),
            stalled_interval: Some(30_000),
            ..ParamOverrides::default()
        };
        let flags = ParamOverrides { lock_duration: Some(60_000), ..ParamOverrides::default() };
        let params = LockParams::resolve(&file, &flags);
        assert_eq!(params.lock_duration, 60_000);
        assert_eq!(params.origins.lock_duration, ParamOrigin::Flag);
        assert_eq!(params.lock_renew_time, 30_000);
        assert_eq!(params.origins.stalled_interval, ParamOrigin::File);
    }
}
