//! `leasetrace docs [TOPIC]`: a page of the documentation carried in the binary (`crate::docs`),
//! as Markdown on stdout, or with no TOPIC one line per page: its topic and title. An unknown
//! topic is a usage error naming the nearest ones.

use std::fmt::Write as _;

use crate::docs;
use crate::error::Error;

pub fn run(topic: Option<&str>) -> Result<u8, Error> {
    let text = if let Some(asked) = topic {
        let topic = docs::resolve(asked).map_err(Error::usage)?;
        docs::page(topic).unwrap_or_default().to_string()
    } else {
        let width = docs::PAGES.iter().map(|(topic, _)| topic.len()).max().unwrap_or(0);
        let mut text =
            String::from("Topics (leasetrace docs TOPIC prints one; each is docs/TOPIC.md of the source):\n");
        for (topic, page) in docs::PAGES {
            let _ = writeln!(text, "  {topic:<width$}  {}", docs::title(page));
        }
        text
    };
    super::write_stdout(false, |out| out.write_all(text.as_bytes()))?;
    Ok(0)
}
