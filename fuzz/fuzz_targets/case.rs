//! `cargo +nightly fuzz run case`: the invariants are in `leasetrace::fuzzing::case` (docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| leasetrace::fuzzing::case(data));
