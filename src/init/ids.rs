//! Finding the job and run ids a log line names, among the ids other sources know.
//!
//! A line names an id when a word of it is the id (`repeat:pr-review-sweep:1791333180000`,
//! `run-0933-a`), or the value of a `key=value` pair (`id=42`), or a JSON key of the line. Short
//! or all-digit ids (BullMQ's `42`) are common numbers too (`status=429`, `42ms`): they count only
//! as the value of an id key, after the word `job`/`run`, or after `#`.

use std::collections::HashSet;

use crate::ingest::log::fields::Classified;

/// Keys whose value is a job or run id.
const ID_KEYS: &[&str] =
    &["id", "jobid", "job_id", "job.id", "job", "run", "run_id", "runid", "execution", "execution_id", "bull_id"];

/// The known ids a log line names, each once: in its keys, its message and the error it carries.
pub fn line_ids(line: &super::logs::LogLine, known: &HashSet<&str>) -> Vec<String> {
    let mut found = ids_in(&line.message, &line.fields, known);
    if let Some(error) = line.error.as_deref() {
        for id in ids_in(error, &Classified::default(), known) {
            if !found.contains(&id) {
                found.push(id);
            }
        }
    }
    found
}

/// The known ids the line names, each once.
pub fn ids_in(message: &str, fields: &Classified, known: &HashSet<&str>) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut add = |id: &str| {
        if known.contains(id) && !found.iter().any(|f| f == id) {
            found.push(id.to_string());
        }
    };
    for id in [&fields.job_id, &fields.run_id].into_iter().flatten() {
        add(id);
    }
    let mut previous = "";
    for token in message.split(|c: char| c.is_whitespace() || ",;()[]{}\"'<>".contains(c)) {
        if token.is_empty() {
            continue;
        }
        let (key, value) = match token.split_once('=') {
            Some((key, value)) if !key.is_empty() => (Some(key), value),
            _ => (None, token),
        };
        let hashed = value.strip_prefix('#');
        let value = hashed.unwrap_or(value).trim_end_matches(['.', ':', '!', '?']);
        if value.is_empty() {
            previous = token;
            continue;
        }
        let weak = value.len() < 6 || value.bytes().all(|b| b.is_ascii_digit());
        let keyed = key.is_some_and(|k| ID_KEYS.iter().any(|known| known.eq_ignore_ascii_case(k)));
        let after_word = key.is_none() && ["job", "run"].iter().any(|w| w.eq_ignore_ascii_case(previous));
        if !weak || keyed || after_word || hashed.is_some() {
            add(value);
        }
        previous = token;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_found_as_words_pairs_and_keys() {
        let known: HashSet<&str> = ["repeat:s:1791333180000", "42", "run-0933-a", "429"].into_iter().collect();
        let none = Classified::default();
        let ids = |m: &str| ids_in(m, &none, &known);
        assert_eq!(ids("job active id=repeat:s:1791333180000 pid=1"), ["repeat:s:1791333180000"]);
        assert_eq!(ids("selected pr=PR-1 run=run-0933-a."), ["run-0933-a"]);
        assert_eq!(ids("Job 42 failed: boom"), ["42"]);
        assert_eq!(ids("job #42 stalled"), ["42"]);
        assert_eq!(ids("GET /x 200 42ms status=429 took 42"), Vec::<String>::new(), "numbers are not ids");
        assert_eq!(ids("processing (repeat:s:1791333180000)"), ["repeat:s:1791333180000"]);
        let keys = Classified { job_id: Some("42".into()), ..Classified::default() };
        assert_eq!(ids_in("job active", &keys, &known), ["42"]);
    }
}
