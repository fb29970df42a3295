//! What to tell someone whose path is not the kind of thing the place they gave it reads: the
//! commonest first mistakes. A file given as the case (`analyze server.log`) is looked at as
//! `init` looks at files, and the message says what it looks like and the command that reads it;
//! a folder given to a file flag (`--log logs/`) says how a folder is read; a path that does not
//! exist is named, with the nearest folder that does and the names there that are close to it,
//! and never sent to `init`, which would only fail on it in turn.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::config::MANIFEST;
use crate::ingest::SourceKind;

/// The path as a shell word: as written when that is safe to paste, else in single quotes.
fn word(path: &Path) -> String {
    let text = path.display().to_string();
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_alphanumeric() || "._/-+:@%,=".contains(c)) {
        text
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

fn gzip(path: &Path) -> bool {
    let mut magic = [0u8; 2];
    std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic)).is_ok()
        && magic == [0x1f, 0x8b]
}

/// The message for a file given as the case that is not a manifest (it did not read as one), when
/// its content shows what it is instead: a source, or a gzip file. `None` leaves the manifest
/// reader's own error, which is then the better one (a manifest with a mistake in it).
pub fn file_as_case(case: &Path) -> Option<String> {
    // A file named as a manifest is one with a mistake in it: the TOML error says where.
    if case.extension().is_some_and(|e| e.eq_ignore_ascii_case("toml")) {
        return None;
    }
    file_as_folder(case, &format!("not a case: a case is a folder holding {MANIFEST} (or that manifest itself)"))
}

/// `file_as_case` for any place that takes a folder (`init`); `is_not` says what the place takes.
pub fn file_as_folder(case: &Path, is_not: &str) -> Option<String> {
    // Only a regular file is looked into: a FIFO or a device would block the read or never end.
    if !case.is_file() {
        return None;
    }
    let shown = word(case);
    let compressed = if gzip(case) { ", gzip-compressed" } else { "" };
    let draft = "to make a case of it, put it in a folder (with the other exports) and run `leasetrace init FOLDER` (leasetrace docs init)";
    match crate::init::looks_like(case) {
        Some((kind, what, needs_zone)) => {
            let read = match kind {
                SourceKind::BullmqParams => format!(
                    "`leasetrace lock --params {shown} --activated-at TIME`, or beside the sources it explains: `leasetrace analyze --log LOG --params {shown}`"
                ),
                SourceKind::Log if needs_zone => format!(
                    "`leasetrace analyze --log {shown} --log-tz ZONE` (its times have no UTC offset: ZONE is the IANA zone it was written in, e.g. Asia/Seoul)"
                ),
                _ => format!("`leasetrace analyze {} {shown}`", kind.flag()),
            };
            Some(format!(
                "{}: this looks like {what}{compressed}, {is_not}. To read one file, give it with {}: {read}; {draft}",
                case.display(),
                kind.flag()
            ))
        }
        None if !compressed.is_empty() => Some(format!(
            "{}: a gzip-compressed file, {is_not}. A compressed source is read where a file is, with the flag of its kind: `leasetrace analyze --log {shown}` (or --ledger, --events, --jobs, --trace); {draft}",
            case.display()
        )),
        None => None,
    }
}

/// The hint added to the manifest reader's error for a file given as the case that neither reads
/// as a manifest nor looks like a source (`file_as_case` is `None`), unless it is named `.toml`.
pub fn not_a_manifest_hint(case: &Path) -> Option<&'static str> {
    (!case.extension().is_some_and(|e| e.eq_ignore_ascii_case("toml"))).then_some(
        "CASE is a case folder holding leasetrace.toml, or that manifest; if this file is a source, give it with its flag instead: `leasetrace analyze --log FILE` (or --ledger, --events, --jobs, --trace, --params; leasetrace docs inputs)",
    )
}

/// The message for a folder given to a flag that reads one file (`--log`, `--ledger`, ...).
pub fn folder_as_source(folder: &Path, flag: &str) -> String {
    let shown = word(folder);
    let case = if folder.join(MANIFEST).is_file() {
        format!("to read the case folder it is: `leasetrace analyze {shown}`")
    } else {
        format!(
            "to read a case folder: `leasetrace analyze {shown}` once it holds a {MANIFEST} (`leasetrace init {shown}` drafts one from its files; leasetrace docs init)"
        )
    };
    format!(
        "{}: is a folder: {flag} reads one file (repeat {flag} for several, e.g. {flag} {}/a.log {flag} {}/b.log); {case}",
        folder.display(),
        folder.display(),
        folder.display()
    )
}

/// The message for a path that does not exist: it is named, with the nearest folder that exists
/// and the names there close to the one given. `what` is what was expected there.
pub fn missing(path: &Path, what: &str) -> String {
    if path.as_os_str() == "-" {
        return "'-' (standard input) is read as a source, not as a case: give it with the flag of its kind, e.g. `leasetrace analyze --log -` (or --ledger -, --events -, --jobs -, --trace -, --params -)".to_string();
    }
    let mut message = format!("{}: no such file or folder; expected {what}", path.display());
    // The deepest ancestor that exists, and the first part of the path that does not.
    let mut missing_part = path.file_name().map(std::ffi::OsStr::to_os_string);
    let mut ancestor = path.parent().map(Path::to_path_buf);
    while let Some(folder) = &ancestor {
        let here = if folder.as_os_str().is_empty() { Path::new(".") } else { folder.as_path() };
        if here.is_dir() {
            break;
        }
        missing_part = folder.file_name().map(std::ffi::OsStr::to_os_string);
        ancestor = folder.parent().map(Path::to_path_buf);
    }
    let Some(folder) = ancestor else { return message };
    let shown_folder =
        if folder.as_os_str().is_empty() { "the current folder".to_string() } else { folder.display().to_string() };
    let near = missing_part.map(|part| near_names(&folder, &part.to_string_lossy())).unwrap_or_default();
    match near.as_slice() {
        [] if folder != path.parent().map(Path::to_path_buf).unwrap_or_default() => {
            let _ = write!(message, "; the nearest folder that exists is {shown_folder}");
        }
        [] => {}
        names => {
            let names: Vec<String> = names.iter().map(|n| word(&folder.join(n))).collect();
            let _ = write!(message, "; did you mean {}?", names.join(" or "));
        }
    }
    message
}

/// Entries of `folder` whose names are within a few edits of `name` (case aside): at most three,
/// the nearest first. A folder of thousands is looked at no further than its first 10,000 entries.
fn near_names(folder: &Path, name: &str) -> Vec<String> {
    let here = if folder.as_os_str().is_empty() { Path::new(".") } else { folder };
    let Ok(entries) = std::fs::read_dir(here) else { return Vec::new() };
    let wanted = name.to_lowercase();
    if wanted.chars().count() > 200 {
        return Vec::new();
    }
    let allowed = (wanted.chars().count() / 4).clamp(1, 3);
    let mut close: Vec<(usize, String)> = entries
        .take(10_000)
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|entry| !entry.starts_with('.'))
        .filter_map(|entry| {
            let d = crate::spelling::edit_distance(&wanted, &entry.to_lowercase());
            (d <= allowed).then_some((d, entry))
        })
        .collect();
    close.sort();
    close.into_iter().take(3).map(|(_, entry)| entry).collect()
}

/// Every path a flag names, checked before anything is read: a folder or a path that does not
/// exist is an error that says what to do.
pub fn check_flag_paths(paths: &[(&str, &PathBuf)]) -> Result<(), String> {
    for (flag, path) in paths {
        if path.as_os_str() == "-" {
            continue;
        }
        if path.is_dir() {
            return Err(folder_as_source(path, flag));
        }
        if std::fs::symlink_metadata(path).is_err() {
            return Err(missing(path, &format!("a file for {flag}")));
        }
    }
    Ok(())
}
