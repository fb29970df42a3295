//! `cargo +nightly fuzz run bullmq_records`: the invariants are in `leasetrace::fuzzing::bullmq_records` (docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| leasetrace::fuzzing::bullmq_records(data));
