//! The mechanics every reader shares, whatever its format: how bytes become numbered lines
//! (`lines`), how a gzip file is inflated member after member (`gzip`) on a thread of its own
//! (`read_ahead`), how a text is handed out in blocks of whole lines (`chunks`), how a source that can be read only once is kept for reading back (`spool`) or cut into
//! segments that two threads parse as it comes (`segments`),
//! how the lines a report cites are read back from their files (`read_back`), and the per-reader
//! cache in front of the interner (`recent`), and evidence read twice kept once (`repeats`). Nothing here knows what a ledger row or a log line
//! means.

pub mod chunks;
pub mod gzip;
pub mod lines;
pub mod read_ahead;
pub mod read_back;
pub mod recent;
pub mod repeats;
pub mod seek;
pub mod segments;
pub mod spool;
