//! `leasetrace explain [CODE]`: a finding's documentation (What it does / Why is this bad? /
//! Example, as in docs/findings/), or with no CODE one line per finding, from the detectors'
//! registry. An unknown code is a usage error naming the known ones.

use std::fmt::Write as _;

use crate::detect;
use crate::error::Error;

pub fn run(code: Option<&str>) -> Result<u8, Error> {
    let mut text = String::new();
    if let Some(code) = code {
        let detector = detect::find(code).ok_or_else(|| {
            let codes: Vec<&str> = detect::DETECTORS.iter().map(|d| d.code()).collect();
            Error::usage(format!("unknown finding '{code}': expected one of {}", codes.join(", ")))
        })?;
        text.push_str(detector.doc());
    } else {
        for detector in detect::DETECTORS {
            let _ = writeln!(text, "{:<22} {}", detector.code(), first_sentence(detector.doc()));
        }
    }
    super::write_stdout(false, |out| out.write_all(text.as_bytes()))?;
    Ok(0)
}

/// The doc's one-line summary: the first paragraph after its heading.
fn first_sentence(doc: &str) -> &str {
    doc.lines().map(str::trim).find(|line| !line.is_empty() && !line.starts_with('#')).unwrap_or("")
}
