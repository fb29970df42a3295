//! Hostile input (issue 18): input that users really produce, or that a case folder handed over
//! from someone else holds, read by the real binary.

mod capture;
mod confine;
mod fuzz_regressions;
mod line_ends;
mod long_lines;
mod terminal;
