//! `cargo +nightly fuzz run rules`: the invariants are in `leasetrace::fuzzing::rules` (docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| leasetrace::fuzzing::rules(data));
