//! `cargo +nightly fuzz run lock_plan`: the invariants are in `leasetrace::fuzzing::lock_plan` (docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| leasetrace::fuzzing::lock_plan(data));
