//! Text laid out to a width without losing any of it: the two tools the human formats share when
//! a line is longer than the room it has.
//!
//! A cited line is evidence: a reader compares it with the file, so laying it out may move it onto
//! several lines but never drops, changes or reorders a character (`pieces`). A path is a place:
//! what a reader needs is the file and the line, so when it must be shorter it loses its leading
//! folders, never its file name (`shorten_path`).

use std::borrow::Cow;

use unicode_width::UnicodeWidthChar;

/// What stands for the folders `shorten_path` leaves out.
pub const ELLIPSIS: &str = "…";

/// The width of `text` in terminal columns.
pub fn width(text: &str) -> usize {
    if text.is_ascii() { text.len() } else { unicode_width::UnicodeWidthStr::width(text) }
}

/// `path` in at most `max` columns, shortened from the left by whole folders
/// (`…/exports/server.log`). The file name is always kept whole, even when it alone is wider than
/// `max`: a line number is looked up in a file, and a cut name names no file.
pub fn shorten_path(path: &str, max: usize) -> Cow<'_, str> {
    if width(path) <= max {
        return Cow::Borrowed(path);
    }
    let separators: Vec<usize> = path.match_indices(['/', '\\']).map(|(at, _)| at).collect();
    let Some(&last) = separators.last() else { return Cow::Borrowed(path) };
    // From the longest tail (fewest folders left out) to the file name alone.
    let start =
        separators.iter().copied().find(|&at| width(ELLIPSIS) + width(&path[at..]) <= max && at > 0).unwrap_or(last);
    Cow::Owned(format!("{ELLIPSIS}{}", &path[start..]))
}

/// `text` cut into consecutive pieces, the first at most `first` columns wide and the others at
/// most `rest`, whose concatenation is `text` exactly. A piece ends after the last space that fits
/// (the space stays at its end), or, in a run with no space, at the last character that fits; a
/// character wider than the room is placed alone, so that the cutting always moves on.
pub fn pieces(text: &str, first: usize, rest: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut remaining = text;
    let mut room = first.max(1);
    while width(remaining) > room {
        let mut used = 0;
        let mut cut = 0;
        let mut after_space = None;
        for (at, c) in remaining.char_indices() {
            let w = c.width().unwrap_or(0);
            if used + w > room {
                break;
            }
            used += w;
            cut = at + c.len_utf8();
            if c == ' ' {
                after_space = Some(cut);
            }
        }
        if cut == 0 {
            // One character wider than the room: alone on its line.
            cut = remaining.chars().next().map_or(remaining.len(), char::len_utf8);
        } else if let Some(space) = after_space.filter(|&space| space < remaining.len()) {
            cut = space;
        }
        out.push(&remaining[..cut]);
        remaining = &remaining[cut..];
        room = rest.max(1);
    }
    if !remaining.is_empty() || out.is_empty() {
        out.push(remaining);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_loses_folders_from_the_left_and_never_its_file_name() {
        let path = "/var/incidents/2026-10-07/exports/server.log";
        assert_eq!(shorten_path(path, 80), path);
        assert_eq!(shorten_path(path, 31), "…/2026-10-07/exports/server.log");
        assert_eq!(shorten_path(path, 30), "…/exports/server.log");
        assert_eq!(shorten_path(path, 22), "…/exports/server.log");
        assert_eq!(shorten_path(path, 12), "…/server.log");
        assert_eq!(shorten_path(path, 3), "…/server.log", "the file name stays whole");
        assert_eq!(shorten_path("server.log", 3), "server.log", "nothing to leave out");
        assert_eq!(shorten_path("C:\\logs\\day\\x.log", 12), "…\\day\\x.log");
    }

    #[test]
    fn pieces_put_back_together_are_the_text() {
        let texts = [
            "2026-10-07T00:54:05.700Z,run-0933-b,repeat:pr-review-sweep:1791333180000,2026-10-07T00:33:00.000Z",
            "{\"level\":30,\"time\":1791333180000,\"msg\":\"job active\",\"jobId\":\"repeat:pr-review-sweep\"}",
            "words  with  double  spaces and a trailing one ",
            "리뷰-1 · 09:54:05.70 👨\u{200d}👩\u{200d}👧 wide characters",
            "",
            "x",
        ];
        for text in texts {
            for (first, rest) in [(1, 1), (2, 2), (10, 6), (20, 30), (100, 100)] {
                let cut = pieces(text, first, rest);
                assert_eq!(cut.concat(), text, "{text:?} at {first}/{rest}");
                for (i, piece) in cut.iter().enumerate() {
                    let room = if i == 0 { first } else { rest };
                    assert!(width(piece) <= room.max(2), "{piece:?} wider than {room}");
                }
            }
        }
    }

    #[test]
    fn pieces_end_after_a_space_when_one_fits() {
        assert_eq!(pieces("job active for PR-4412", 12, 12), ["job active ", "for PR-4412"]);
        assert_eq!(pieces("abcdefghij", 4, 3), ["abcd", "efg", "hij"]);
    }
}
