//! Effect, retry and stuck-job findings: fixtures under fixtures/near-miss/* and fixtures/lease-*.

#[allow(unused_imports)]
use super::*;
