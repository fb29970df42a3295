//! The documentation carried in the binary: every page of the source's docs/ folder, by topic
//! (its path under docs/ without `.md`: `inputs/ledger`, `findings/stalled-rerun`). Messages,
//! help texts and the SARIF rules cite pages as `leasetrace docs TOPIC`, which answers without the
//! source tree (`cargo install` copies only the binary).

include!(concat!(env!("OUT_DIR"), "/docs_pages.rs"));

/// The text of `topic`.
pub fn page(topic: &str) -> Option<&'static str> {
    PAGES.iter().find(|(name, _)| *name == topic).map(|(_, text)| *text)
}

/// A page's title: its first heading, without the `#`.
pub fn title(text: &str) -> &str {
    text.lines().find_map(|line| line.strip_prefix("# ")).map_or("", str::trim)
}

/// The topic a user's words name: the topic itself; a path as the source cites it
/// (`docs/inputs/ledger.md`, with or without an `#anchor`); or a page's own name when only one page
/// has it (`ledger`, `stalled-rerun`). `Err` says why not: no such page (with the nearest topics),
/// or several pages of that name.
pub fn resolve(asked: &str) -> Result<&'static str, String> {
    let wanted = asked.trim().split('#').next().unwrap_or("");
    let wanted = wanted.strip_prefix("docs/").unwrap_or(wanted);
    let wanted = wanted.strip_suffix(".md").unwrap_or(wanted).trim_matches('/');
    if let Some((topic, _)) = PAGES.iter().find(|(topic, _)| *topic == wanted) {
        return Ok(topic);
    }
    let named: Vec<&'static str> =
        PAGES.iter().map(|(topic, _)| *topic).filter(|topic| topic.rsplit('/').next() == Some(wanted)).collect();
    match named.as_slice() {
        [one] => Ok(one),
        [] => {
            let mut near: Vec<(usize, &str)> = PAGES
                .iter()
                .map(|(topic, _)| {
                    let name = topic.rsplit('/').next().unwrap_or(topic);
                    (strsim::levenshtein(wanted, topic).min(strsim::levenshtein(wanted, name)), *topic)
                })
                .collect();
            near.sort_unstable();
            let near: Vec<&str> =
                near.iter().take_while(|(distance, _)| *distance <= 3).take(3).map(|(_, t)| *t).collect();
            let hint = if near.is_empty() { String::new() } else { format!(" (did you mean {}?)", near.join(", ")) };
            Err(format!(
                "no documentation page '{}'{hint}: `leasetrace docs` lists every topic",
                crate::terminal::visible(asked)
            ))
        }
        several => Err(format!("'{wanted}' names several pages: {}; give one of them", several.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_of_the_source_is_carried() {
        assert!(PAGES.len() >= 40, "{}", PAGES.len());
        assert!(page("inputs/ledger").is_some_and(|text| title(text).contains("ledger")));
        assert!(page("findings/stalled-rerun").is_some());
        assert!(page("json").is_some_and(|text| text.contains("leasetrace.report/v")));
    }

    #[test]
    fn topics_are_found_by_path_citation_and_unique_name() {
        assert_eq!(resolve("inputs/ledger"), Ok("inputs/ledger"));
        assert_eq!(resolve("docs/inputs/ledger.md"), Ok("inputs/ledger"));
        assert_eq!(resolve("docs/inputs/log.md#5a-worker-settings-in-logs"), Ok("inputs/log"));
        assert_eq!(resolve("stalled-rerun"), Ok("findings/stalled-rerun"));
        assert_eq!(resolve("inputs"), Ok("inputs"));
        let error = resolve("inputs/ledgr").unwrap_err();
        assert!(error.contains("did you mean inputs/ledger"), "{error}");
        assert!(resolve("\u{1b}[2J").unwrap_err().contains("\\x1b[2J"));
    }

    /// Every `leasetrace docs TOPIC` the source cites (messages, help texts, the manifests init and
    /// capture write), and every page path left in a string a user reads, across src/.
    fn citations() -> (Vec<(String, String)>, Vec<String>) {
        fn walk(dir: &std::path::Path, files: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, files);
                } else if path.extension().is_some_and(|ext| ext == "rs") {
                    files.push(path);
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        walk(&root.join("src"), &mut files);
        let topic = regex::Regex::new(r"leasetrace docs ([a-z0-9][a-z0-9/_-]*[a-z0-9])").unwrap();
        let path = regex::Regex::new(r"docs/[a-z0-9/_-]+\.md").unwrap();
        let (mut cited, mut paths) = (Vec::new(), Vec::new());
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let name = file.strip_prefix(root).unwrap().display().to_string();
            let help = name.ends_with("cli.rs");
            for (number, line) in (1..).zip(text.lines()) {
                let code = line.trim_start();
                // Comments are for the source's readers, except the help texts clap makes of cli.rs's.
                let comment = code.starts_with("//") && !(help && code.starts_with("/// "));
                for found in topic.captures_iter(line) {
                    cited.push((format!("{name}:{number}"), found[1].to_string()));
                }
                if !comment
                    && !code.contains("include_str!")
                    && !code.contains("help_uri")
                    && !code.contains("assert")
                    && path.is_match(line)
                {
                    paths.push(format!("{name}:{number}: {}", line.trim()));
                }
            }
        }
        (cited, paths)
    }

    #[test]
    fn every_page_a_message_cites_is_carried_by_the_binary() {
        let (cited, paths) = citations();
        assert!(cited.len() >= 12, "{cited:?}");
        for (place, topic) in &cited {
            assert!(page(topic).is_some(), "{place}: `leasetrace docs {topic}`: no such page in docs/");
        }
        assert!(
            paths.is_empty(),
            "cite pages as `leasetrace docs TOPIC`, which an installed binary answers: {paths:#?}"
        );
    }
}
