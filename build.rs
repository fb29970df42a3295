//! Every page of docs/ carried in the binary (`leasetrace docs TOPIC`): an installed binary has no
//! source tree beside it, and its messages and help cite these pages by topic. The list is made
//! from the folder itself, so a page added to docs/ cannot be left out.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn pages(dir: &Path, found: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.expect("a docs/ entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            pages(&path, found);
        } else if path.extension().is_some_and(|ext| ext == "md") {
            found.push(path);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let docs = root.join("docs");
    println!("cargo:rerun-if-changed=docs");
    let mut found = Vec::new();
    pages(&docs, &mut found);
    // By topic: a section's index before its pages (`findings`, then `findings/...`).
    found.sort_by_key(|path| path.with_extension(""));
    let mut code =
        String::from("/// Every docs/ page: (topic, text), in path order.\npub static PAGES: &[(&str, &str)] = &[\n");
    for path in &found {
        println!("cargo:rerun-if-changed={}", path.display());
        let topic = path.strip_prefix(&docs).expect("under docs/").with_extension("");
        let topic = topic.to_str().expect("a UTF-8 page name").replace('\\', "/");
        let _ = writeln!(code, "    ({topic:?}, include_str!({:?})),", path.display().to_string());
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo")).join("docs_pages.rs");
    std::fs::write(out, code).expect("OUT_DIR is writable");
}
