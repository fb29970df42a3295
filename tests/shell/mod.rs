//! For a newcomer and a shell: a case folder read from inside it.

use super::*;

impl Leasetrace {
    fn dir(mut self, dir: &Path) -> Self {
        self.command.current_dir(dir);
        self
    }
}

// ---------------------------------------------------------------- a case folder, from inside

#[test]
fn analyze_inside_a_case_folder_reads_its_manifest() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT);
    let inside = leasetrace(&["analyze", "--format", "json"]).dir(&folder).run();
    assert_eq!(inside.code, 0, "{}", inside.stderr);
    let given = leasetrace(&["analyze", INCIDENT, "--format", "json"]).run();
    let (inside, given) = (inside.json(), given.json());
    // The same case, the same findings; only the paths of their evidence are relative.
    let essence = |report: &Value| -> Vec<(Value, Value, Value)> {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| (f["kind"].clone(), f["summary"].clone(), f["metrics"].clone()))
            .collect()
    };
    assert_eq!(essence(&inside), essence(&given));
    assert_eq!(essence(&inside).len(), 5);
    let paths: Vec<&str> = inside["inputs"].as_array().unwrap().iter().map(|i| i["path"].as_str().unwrap()).collect();
    assert_eq!(paths, ["ledger.csv", "server.log", "bullmq.json"], "paths relative to the folder");
    let assumptions = inside["assumptions"].as_array().unwrap();
    assert!(
        assumptions.iter().any(|a| a == "no CASE given: read the case of the current folder (leasetrace.toml)"),
        "the report says where the case came from: {assumptions:#?}"
    );

    // timeline and check take their case the same way.
    let timeline = leasetrace(&["timeline", "--format", "json"]).dir(&folder).run();
    assert_eq!(timeline.code, 0, "{}", timeline.stderr);
    let check = leasetrace(&["check"]).dir(&folder).run();
    assert_eq!(check.code, 1, "the incident fails the check:\n{}", check.stderr);
}

#[test]
fn sources_by_flag_inside_a_case_folder_do_not_mix_in_its_manifest() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join(INCIDENT);
    let run = leasetrace(&["analyze", "--ledger", "ledger.csv", "--format", "json"]).dir(&folder).run();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let inputs = run.json()["inputs"].as_array().unwrap().clone();
    assert_eq!(inputs.len(), 1, "only the ledger given: {inputs:#?}");
}

#[test]
fn a_folder_without_a_manifest_says_so_and_how_to_make_one() {
    let empty = tempfile::tempdir().unwrap();
    let run = leasetrace(&["analyze"]).dir(empty.path()).run();
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("nothing to read: no leasetrace.toml in the current folder"), "{}", run.stderr);
    assert!(run.stderr.contains("leasetrace init FOLDER"), "{}", run.stderr);
}
