//! `cargo +nightly fuzz run time`: the invariants are in `leasetrace::fuzzing::time` (docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| leasetrace::fuzzing::time(data));
