//! Text from the server made harmless to print: the names of keys and queues are the server's
//! choice, and a terminal obeys the escape sequences in them (ESC, BEL, CR, OSC titles, colour)
//! while U+202E reverses the text after it. Every message `capture` prints passes through
//! `visible` once, as a whole; which characters are written out is `terminal::is_hidden`'s list,
//! the one every human output uses.

/// `text` with each control character written out: C0 controls and DEL as `\x1b`, C1 controls
/// and the invisible characters that reorder or hide text (bidirectional controls, zero-width
/// characters, line and paragraph separators, a byte-order mark) as `U+202E`. Tabs too: a message
/// is one line of plain text.
pub fn visible(text: &str) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{0}'..='\u{1f}' | '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if hidden(c) => {
                let _ = write!(out, "U+{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// At most `chars` characters of `text`, and how much more there was: a name or a server's text in
/// a message is shown, never a megabyte of it.
pub fn clip(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((at, _)) => format!("{}... ({} bytes in all)", &text[..at], text.len()),
        None => text.to_string(),
    }
}

/// The characters that are not ASCII controls but still change how the text around them shows
/// (C1 controls, bidirectional controls, zero-width and other format characters): the house's
/// one list, `terminal::is_hidden`, of which the ASCII controls are written out by `visible`
/// in their own notation.
pub fn hidden(c: char) -> bool {
    !c.is_ascii() && crate::terminal::is_hidden(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_and_reordering_marks_are_written_out() {
        assert_eq!(visible("bull:q:\u{1b}]0;owned\u{7}\r\u{7f}:lock"), "bull:q:\\x1b]0;owned\\x07\\x0d\\x7f:lock");
        assert_eq!(visible("job-\u{202e}gpj.exe"), "job-U+202Egpj.exe");
        assert_eq!(visible("\u{9b}31m\u{200b}\u{feff}"), "U+009B31mU+200BU+FEFF");
        assert_eq!(visible("pr-review ü 日本 🙂"), "pr-review ü 日本 🙂", "printable text is left alone");
    }

    #[test]
    fn long_texts_are_clipped_with_their_size() {
        assert_eq!(clip("bull:q:1", 10), "bull:q:1");
        assert_eq!(clip("日本日本日本", 2), "日本... (18 bytes in all)");
    }
}
