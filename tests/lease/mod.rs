//! Lease-ledger findings (fencing, takeovers): fixtures under fixtures/lease-* and fixtures/near-miss/*.

#[allow(unused_imports)]
use super::*;
