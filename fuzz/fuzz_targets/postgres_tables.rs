//! `cargo +nightly fuzz run postgres_tables`: the invariants are in `leasetrace::fuzzing::postgres_tables` (docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| leasetrace::fuzzing::postgres_tables(data));
