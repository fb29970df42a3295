//! `cargo +nightly fuzz run server_log`: the invariants are in `leasetrace::fuzzing::server_log` (docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| leasetrace::fuzzing::server_log(data));
