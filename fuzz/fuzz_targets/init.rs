//! `cargo +nightly fuzz run init`: the invariants are in `leasetrace::fuzzing::init` (docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| leasetrace::fuzzing::init(data));
