//! `cargo +nightly fuzz run redis_monitor`: the invariants are in `leasetrace::fuzzing::redis_monitor` (docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| leasetrace::fuzzing::redis_monitor(data));
