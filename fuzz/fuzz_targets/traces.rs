//! `cargo +nightly fuzz run traces`: the invariants are in `leasetrace::fuzzing::traces` (docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| leasetrace::fuzzing::traces(data));
