//! Hostile input (issue 18): input that users really produce, or that a case folder handed over
//! from someone else holds, read by the real binary.

mod capture;
mod confine;
mod fuzz_regressions;
mod line_ends;
mod long_lines;
mod repeats;
pub mod terminal;

/// The tests that bound the binary's peak memory (long_lines, capture), in a test process of their
/// own, one at a time: a child's `ru_maxrss` starts from the high-water mark of the process that
/// spawned it (Linux keeps it across `exec`), so in the shared test process, where other tests
/// hold whole reports, a child would report their memory as its own peak.
#[test]
fn memory_bounds_hold_in_a_process_of_their_own() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--test-threads=1", "hostile::long_lines::", "hostile::capture::"])
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    let passed = said
        .lines()
        .find_map(|line| line.strip_prefix("test result: ok. "))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse::<u32>().ok());
    assert!(output.status.success() && passed.is_some_and(|n| n >= 20), "{said}");
}
