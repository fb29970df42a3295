//! `cargo +nightly fuzz run bullmq_params`: the invariants are in `leasetrace::fuzzing::bullmq_params` (docs/fuzzing.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| leasetrace::fuzzing::bullmq_params(data));
