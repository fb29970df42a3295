//! What each command's reply must look like, and what `capture` keeps of it.
//!
//! A reply of another shape is an error that says what was expected and what came (`expected an
//! array of stream entries, got an integer (42)`): read as empty, an integer in place of XRANGE's
//! page once made a capture of "0 entries" with no warning (issue 34). Texts are UTF-8 where
//! they can be; a byte that is not is replaced and `lossy` set, so the record can say which key
//! was not written faithfully.

use serde_json::{Map, Value as Json};

use super::escape::clip;
use super::resp::Reply;

/// A reply of the wrong shape: the message, `expected X, got Y`.
#[derive(Debug, Clone, PartialEq)]
pub struct Wrong(pub String);

impl std::fmt::Display for Wrong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn wrong(expected: &str, got: &Reply) -> Wrong {
    Wrong(format!("expected {expected}, got {}", got.kind()))
}

pub type Shaped<T> = Result<T, Wrong>;

/// A text: a bulk or simple string (and RESP3's verbatim string, read as bulk).
pub fn text(reply: Reply, expected: &str, lossy: &mut bool) -> Shaped<String> {
    match reply {
        Reply::Bulk(bytes) | Reply::Simple(bytes) => Ok(String::from_utf8(bytes).unwrap_or_else(|e| {
            *lossy = true;
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        })),
        other => Err(wrong(expected, &other)),
    }
}

/// GET: a text, or nil for a key that is not there.
pub fn optional_text(reply: Reply, expected: &str, lossy: &mut bool) -> Shaped<Option<String>> {
    match reply {
        Reply::Nil => Ok(None),
        other => text(other, expected, lossy).map(Some),
    }
}

/// PTTL, XLEN: an integer.
pub fn int(reply: &Reply, expected: &str) -> Shaped<i64> {
    match reply {
        Reply::Int(n) => Ok(*n),
        other => Err(wrong(expected, other)),
    }
}

/// An array (RESP3's sets and pushes are read as arrays too).
pub fn items(reply: Reply, expected: &str) -> Shaped<Vec<Reply>> {
    match reply {
        Reply::Array(items) => Ok(items),
        other => Err(wrong(expected, &other)),
    }
}

/// TIME: `[seconds, microseconds]` as texts of digits, in epoch microseconds.
pub fn time(reply: Reply) -> Shaped<i64> {
    const EXPECTED: &str = "[seconds, microseconds] (two texts of digits)";
    let got = reply.kind();
    let parts = items(reply, EXPECTED)?;
    let numbers: Vec<i64> = parts
        .iter()
        .filter_map(|part| match part {
            Reply::Bulk(digits) | Reply::Simple(digits) => std::str::from_utf8(digits).ok()?.parse().ok(),
            Reply::Int(n) => Some(*n),
            _ => None,
        })
        .collect();
    match numbers.as_slice() {
        [seconds, micros] if parts.len() == 2 && (0..1_000_000).contains(micros) && *seconds >= 0 => seconds
            .checked_mul(1_000_000)
            .and_then(|s| s.checked_add(*micros))
            .ok_or_else(|| Wrong(format!("expected {EXPECTED}, got seconds too large ({seconds})"))),
        _ => Err(Wrong(format!("expected {EXPECTED}, got {got}"))),
    }
}

/// TYPE: a type name (`hash`, `stream`, `none`, or a module's type: `ReJSON-RL`), at most 64
/// characters.
pub fn type_name(reply: Reply) -> Shaped<String> {
    const EXPECTED: &str = "a type name (string, list, set, zset, hash, stream or none)";
    let mut lossy = false;
    let name = text(reply, EXPECTED, &mut lossy)?;
    if name.is_empty() || name.len() > 64 || lossy {
        return Err(Wrong(format!("expected {EXPECTED}, got '{}'", clip(&name, 40))));
    }
    Ok(name)
}

/// SCAN: `[cursor, [key, ...]]`; the cursor is a number in a text (0 at the end).
pub fn scan(reply: Reply, lossy: &mut bool) -> Shaped<(String, Vec<String>)> {
    const EXPECTED: &str = "[cursor, [key, ...]]";
    let got = reply.kind();
    let mut parts = items(reply, EXPECTED)?.into_iter();
    let (Some(cursor), Some(keys), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(Wrong(format!("expected {EXPECTED}, got {got}")));
    };
    let cursor = text(cursor, "a cursor (a text of digits)", lossy)?;
    if cursor.is_empty() || cursor.len() > 20 || !cursor.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Wrong(format!("expected a cursor (a text of digits), got '{}'", clip(&cursor, 40))));
    }
    let keys = texts(keys, "an array of key names", lossy)?;
    Ok((cursor, keys))
}

/// LRANGE, SMEMBERS, SCAN's keys: an array of texts.
pub fn texts(reply: Reply, expected: &str, lossy: &mut bool) -> Shaped<Vec<String>> {
    items(reply, expected)?.into_iter().map(|item| text(item, &format!("{expected}: a text"), lossy)).collect()
}

/// ZRANGE ... WITHSCORES: `[member, score, ...]` (RESP2) or `[[member, score], ...]` (RESP3, the
/// score a double). BullMQ's scores are integers (epoch ms, or ms × 0x1000 + a counter for
/// `delayed`); one that is not is kept as no score.
pub fn scored(reply: Reply, lossy: &mut bool) -> Shaped<Vec<(String, Option<i64>)>> {
    const EXPECTED: &str = "an array of members and their scores";
    let list = items(reply, EXPECTED)?;
    let score = |reply: Reply, lossy: &mut bool| -> Shaped<Option<i64>> {
        match reply {
            Reply::Double(text) => Ok(text.parse::<i64>().ok()),
            Reply::Int(n) => Ok(Some(n)),
            other => Ok(text(other, "a score", lossy)?.parse().ok()),
        }
    };
    if list.first().is_some_and(|first| matches!(first, Reply::Array(_))) {
        list.into_iter()
            .map(|pair| {
                let mut parts = items(pair, "[member, score]")?.into_iter();
                match (parts.next(), parts.next(), parts.next()) {
                    (Some(member), Some(value), None) => Ok((text(member, "a member", lossy)?, score(value, lossy)?)),
                    _ => Err(Wrong("expected [member, score], got another number of items".into())),
                }
            })
            .collect()
    } else {
        if list.len() % 2 != 0 {
            return Err(Wrong(format!("expected {EXPECTED} (an even number of items), got {} items", list.len())));
        }
        let mut out = Vec::with_capacity(list.len() / 2);
        let mut list = list.into_iter();
        while let (Some(member), Some(value)) = (list.next(), list.next()) {
            out.push((text(member, "a member", lossy)?, score(value, lossy)?));
        }
        Ok(out)
    }
}

/// HGETALL and a stream entry's fields: `[field, value, ...]` (RESP2) or a map (RESP3), in the
/// server's order.
pub fn pairs(reply: Reply, expected: &str, lossy: &mut bool) -> Shaped<Vec<(String, String)>> {
    match reply {
        Reply::Map(map) => map
            .into_iter()
            .map(|(field, value)| Ok((text(field, "a field name", lossy)?, text(value, "a field's value", lossy)?)))
            .collect(),
        Reply::Array(list) => {
            if list.len() % 2 != 0 {
                return Err(Wrong(format!(
                    "expected {expected} (fields and values, an even number of items), got {} items",
                    list.len()
                )));
            }
            let mut out = Vec::with_capacity(list.len() / 2);
            let mut list = list.into_iter();
            while let (Some(field), Some(value)) = (list.next(), list.next()) {
                out.push((text(field, "a field name", lossy)?, text(value, "a field's value", lossy)?));
            }
            Ok(out)
        }
        other => Err(wrong(expected, &other)),
    }
}

/// One entry of the events stream, as XRANGE gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub id: String,
    pub fields: Vec<(String, String)>,
    /// A byte of the id or of a field was not UTF-8.
    pub lossy: bool,
}

impl Entry {
    /// The line of `events.jsonl`: the `xrange-json` shape the events reader takes.
    pub fn into_record(self) -> Json {
        let fields: Map<String, Json> = self.fields.into_iter().map(|(k, v)| (k, Json::String(v))).collect();
        serde_json::json!({"id": self.id, "fields": fields})
    }
}

/// XRANGE: `[[id, [field, value, ...]], ...]`; an id is `<ms>-<seq>`.
pub fn stream_page(reply: Reply) -> Shaped<Vec<Entry>> {
    items(reply, "an array of stream entries")?
        .into_iter()
        .map(|entry| {
            let got = entry.kind();
            let mut parts = items(entry, "a stream entry [id, [field, value, ...]]")?.into_iter();
            let (Some(id), Some(fields), None) = (parts.next(), parts.next(), parts.next()) else {
                return Err(Wrong(format!("expected a stream entry [id, [field, value, ...]], got {got}")));
            };
            let mut lossy = false;
            let id = text(id, "a stream entry's id", &mut lossy)?;
            if super::id_order(&id).is_none() {
                return Err(Wrong(format!("expected a stream entry's id (<ms>-<seq>), got '{}'", clip(&id, 40))));
            }
            let fields = pairs(fields, "a stream entry's fields", &mut lossy)?;
            Ok(Entry { id, fields, lossy })
        })
        .collect()
}

/// XINFO STREAM: `[name, value, ...]` or a map. Kept: numbers as numbers, texts as texts, an
/// entry (`first-entry`, `last-entry`) as its id, nil as null. The fields capture relies on must
/// have their types: `length` and `entries-added` integers, the entries arrays or nil.
pub fn stream_info(reply: Reply) -> Shaped<Map<String, Json>> {
    const EXPECTED: &str = "XINFO STREAM's fields and values";
    let list: Vec<(Reply, Reply)> = match reply {
        Reply::Map(map) => map,
        Reply::Array(list) if list.len() % 2 == 0 => {
            let mut out = Vec::with_capacity(list.len() / 2);
            let mut list = list.into_iter();
            while let (Some(name), Some(value)) = (list.next(), list.next()) {
                out.push((name, value));
            }
            out
        }
        other => return Err(wrong(EXPECTED, &other)),
    };
    let mut lossy = false;
    let mut info = Map::new();
    if !list.iter().any(|(name, _)| matches!(name, Reply::Bulk(t) | Reply::Simple(t) if t == b"length")) {
        return Err(Wrong("expected XINFO STREAM's fields to have the stream's length, got none".into()));
    }
    for (name, value) in list {
        let name = text(name, "a field name of XINFO STREAM", &mut lossy)?;
        let shown = match (name.as_str(), value) {
            ("length" | "entries-added" | "radix-tree-keys" | "radix-tree-nodes" | "groups", Reply::Int(n)) => n.into(),
            ("length" | "entries-added", other) => {
                return Err(Wrong(format!("expected XINFO STREAM's {name} to be an integer, got {}", other.kind())));
            }
            ("first-entry" | "last-entry", Reply::Nil) => Json::Null,
            ("first-entry" | "last-entry", Reply::Array(entry)) => match entry.into_iter().next() {
                Some(id) => Json::String(text(id, "an entry's id", &mut lossy)?),
                None => Json::Null,
            },
            ("first-entry" | "last-entry", other) => {
                return Err(Wrong(format!(
                    "expected XINFO STREAM's {name} to be an entry or nil, got {}",
                    other.kind()
                )));
            }
            (_, Reply::Int(n)) => n.into(),
            (_, Reply::Nil) => Json::Null,
            (_, Reply::Double(text) | Reply::BigNumber(text)) => Json::String(text),
            (_, Reply::Boolean(value)) => value.into(),
            (_, Reply::Bulk(bytes) | Reply::Simple(bytes)) => {
                Json::String(String::from_utf8_lossy(&bytes).into_owned())
            }
            // A field of a later Redis that capture does not read.
            (_, Reply::Array(_) | Reply::Map(_) | Reply::Error(_)) => continue,
        };
        info.insert(name, shown);
    }
    Ok(info)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(text: &str) -> Reply {
        Reply::Bulk(text.as_bytes().to_vec())
    }

    #[test]
    fn a_reply_of_another_type_says_what_was_expected_and_what_came() {
        assert_eq!(
            stream_page(Reply::Int(42)).unwrap_err().0,
            "expected an array of stream entries, got an integer (42)"
        );
        let mut lossy = false;
        assert_eq!(scan(Reply::Int(0), &mut lossy).unwrap_err().0, "expected [cursor, [key, ...]], got an integer (0)");
        assert_eq!(
            pairs(Reply::Int(7), "a job hash's fields and values", &mut lossy).unwrap_err().0,
            "expected a job hash's fields and values, got an integer (7)"
        );
        assert_eq!(
            pairs(Reply::Array(vec![bulk("name")]), "a hash", &mut lossy).unwrap_err().0,
            "expected a hash (fields and values, an even number of items), got 1 items"
        );
        assert_eq!(
            scan(Reply::Array(vec![bulk("x1"), Reply::Array(vec![])]), &mut lossy).unwrap_err().0,
            "expected a cursor (a text of digits), got 'x1'"
        );
        assert_eq!(
            time(Reply::Array(vec![bulk("1"), bulk("2000000")])).unwrap_err().0,
            "expected [seconds, microseconds] (two texts of digits), got an array of 2 items"
        );
        assert_eq!(
            stream_info(Reply::Array(vec![bulk("groups"), Reply::Int(0)])).unwrap_err().0,
            "expected XINFO STREAM's fields to have the stream's length, got none"
        );
        assert_eq!(
            stream_page(Reply::Array(vec![Reply::Array(vec![bulk("abc-1"), Reply::Array(vec![])])])).unwrap_err().0,
            "expected a stream entry's id (<ms>-<seq>), got 'abc-1'"
        );
        assert_eq!(
            stream_info(Reply::Array(vec![bulk("length"), bulk("5")])).unwrap_err().0,
            "expected XINFO STREAM's length to be an integer, got a bulk string of 1 bytes ('5')"
        );
    }

    #[test]
    fn the_shapes_of_both_protocols_are_read() {
        let mut lossy = false;
        let flat = Reply::Array(vec![bulk("7"), bulk("1791333180000"), bulk("8"), bulk("x")]);
        assert_eq!(scored(flat, &mut lossy).unwrap(), vec![("7".into(), Some(1_791_333_180_000)), ("8".into(), None)]);
        let nested = Reply::Array(vec![Reply::Array(vec![bulk("7"), Reply::Double("1791333180000".into())])]);
        assert_eq!(scored(nested, &mut lossy).unwrap(), vec![("7".into(), Some(1_791_333_180_000))]);
        let map = Reply::Map(vec![(Reply::Simple(b"name".to_vec()), bulk("send"))]);
        assert_eq!(pairs(map, "a hash", &mut lossy).unwrap(), vec![("name".into(), "send".into())]);
        let page = Reply::Array(vec![Reply::Array(vec![
            bulk("1-0"),
            Reply::Array(vec![bulk("event"), Reply::Bulk(b"act\xffive".to_vec())]),
        ])]);
        let entries = stream_page(page).unwrap();
        assert!(entries[0].lossy, "a byte that is not UTF-8 is said");
        assert_eq!(
            entries[0].clone().into_record(),
            serde_json::json!({"id": "1-0", "fields": {"event": "act\u{fffd}ive"}})
        );
        assert!(!lossy);
        assert_eq!(time(Reply::Array(vec![bulk("1791333180"), bulk("000123")])).unwrap(), 1_791_333_180_000_123);
    }
}
