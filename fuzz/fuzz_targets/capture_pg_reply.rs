//! `cargo +nightly fuzz run capture_pg_reply`: the invariants are in `leasetrace::fuzzing::capture_pg_reply` (docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| leasetrace::fuzzing::capture_pg_reply(data));
