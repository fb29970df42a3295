//! The inputs that found bugs under the fuzzer (fuzz/regressions/<target>/), and the seed
//! corpora made from the fixtures (fuzz/seeds/<target>/), through the same invariant checks as
//! the fuzz targets (`leasetrace::fuzzing`), on stable and in every `cargo test`. A crash the
//! fuzzer finds becomes a file under fuzz/regressions/ (docs/fuzzing.md).

use std::path::Path;

use leasetrace::fuzzing::TARGETS;

/// Runs every file under `fuzz/<corpus>/<target>/` through its target, naming the file that fails.
fn replay(corpus: &str) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz").join(corpus);
    let mut count = 0;
    for (target, run) in TARGETS {
        let Ok(entries) = std::fs::read_dir(root.join(target)) else { continue };
        let mut files: Vec<_> = entries.flatten().map(|entry| entry.path()).collect();
        files.sort();
        for file in files {
            let data = std::fs::read(&file).unwrap();
            assert!(
                std::panic::catch_unwind(|| run(&data)).is_ok(),
                "{} fails the invariants of the {target} target (message above)",
                file.display()
            );
            count += 1;
        }
    }
    count
}

/// The replay below, in a process of its own: it runs whole cases in this process, and a child
/// spawned later by a test beside it would report this process's memory as its own peak
/// (`ru_maxrss` keeps the high-water mark across `exec`), failing the memory bounds of
/// tests/hostile/long_lines.rs.
#[test]
fn fuzz_regressions_and_seed_corpora_hold_every_target_invariant() {
    let name = "hostile::fuzz_regressions::replay_every_corpus";
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", name, "--nocapture", "--test-threads=1"])
        .output()
        .unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success() && said.contains("1 passed"), "{said}");
}

/// One test for both corpora: the `case` and `bullmq_params` targets write their input to one
/// scratch folder per process, which two tests at once would share. Run by the test above.
#[test]
#[ignore = "run in its own process by fuzz_regressions_and_seed_corpora_hold_every_target_invariant"]
fn replay_every_corpus() {
    let regressions = replay("regressions");
    assert!(regressions >= 2, "only {regressions} files under fuzz/regressions/");
    let seeds = replay("seeds");
    // The seeds are there: a corpus folder renamed away would make this test pass on nothing.
    assert!(seeds >= 100, "only {seeds} seeds under fuzz/seeds/");
    for (target, _) in TARGETS {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds").join(target);
        assert!(std::fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_some()), "no seeds for {target}");
    }
    // The scratch folders of this process (`fuzzing::scratch`).
    let prefix = format!("leasetrace-fuzz-{}-", std::process::id());
    for entry in std::fs::read_dir(std::env::temp_dir()).unwrap().flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            std::fs::remove_dir_all(entry.path()).unwrap();
        }
    }
}
