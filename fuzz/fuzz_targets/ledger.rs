//! `cargo +nightly fuzz run ledger`: the invariants are in `leasetrace::fuzzing::ledger` (docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| leasetrace::fuzzing::ledger(data));
