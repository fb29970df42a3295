//! A JSON or YAML document as a tree whose nodes keep their lines, for readers that look for
//! settings wherever they sit in a larger config (the lock parameters file).
//!
//! Config dumps come from anywhere, so the tree is built to survive a hostile file: the caller caps
//! the text's size; nesting stops at `MAX_DEPTH` and the node count at `MAX_NODES`, both with an
//! error; a YAML alias is kept as a reference to its anchor, never a copy, so the "billion laughs"
//! file costs what its text costs; nothing here recurses on the document's shape (serde_json's own
//! recursion is capped by its own limit, the same as `MAX_DEPTH`).
//!
//! JSON is read by serde_json (its errors and strictness are JSON's) and YAML by saphyr-parser's
//! event stream (YAML 1.2, with the event's line). Scalars keep their text and whether they were
//! quoted; the reader decides what a value means.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// Deepest nesting read, in containers: serde_json's recursion limit (it refuses a 128th level).
pub const MAX_DEPTH: usize = 127;
/// Most values (scalars and containers) in one document: a config of worker options has a few
/// hundred; the cap keeps a huge flat array from costing a node per byte.
pub const MAX_NODES: usize = 200_000;

pub type NodeId = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    Json,
    Yaml,
}

impl Syntax {
    pub fn name(self) -> &'static str {
        match self {
            Syntax::Json => "json",
            Syntax::Yaml => "yaml",
        }
    }
}

#[derive(Debug)]
pub struct Node {
    /// 1-based line where the value starts (for a JSON value, where its token starts).
    pub line: u64,
    pub value: Value,
}

#[derive(Debug)]
pub enum Value {
    /// The text as written (a JSON number or literal as serde_json reads it), and whether it was
    /// a quoted string: `"12000"` is quoted, `12000` is not.
    Scalar {
        text: String,
        quoted: bool,
    },
    Sequence(Vec<NodeId>),
    Mapping(Vec<Entry>),
    /// A YAML alias: the anchored node it names.
    Alias(NodeId),
}

#[derive(Debug)]
pub struct Entry {
    /// The key's text, when the key is a scalar (YAML allows any node as a key).
    pub key: Option<String>,
    pub line: u64,
    pub value: NodeId,
}

/// A parsed document: an arena of nodes in document order (a container before its contents).
#[derive(Debug)]
pub struct Document {
    nodes: Vec<Node>,
    root: NodeId,
}

/// Why a text is not a document, with the line where the parser stopped.
#[derive(Debug, PartialEq)]
pub struct ParseError {
    pub line: Option<u64>,
    pub message: String,
}

impl Document {
    pub fn root(&self) -> NodeId {
        self.root
    }

    /// Nodes in the arena (ids are `0..len`).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    /// The node itself, or the anchored node an alias names (an alias never names an alias).
    pub fn resolve(&self, id: NodeId) -> NodeId {
        match self.node(id).value {
            Value::Alias(target) => target,
            _ => id,
        }
    }

    /// The entries of a mapping (through an alias), else none.
    pub fn entries(&self, id: NodeId) -> &[Entry] {
        match &self.node(self.resolve(id)).value {
            Value::Mapping(entries) => entries,
            _ => &[],
        }
    }

    /// The text of a scalar (through an alias).
    pub fn scalar(&self, id: NodeId) -> Option<(&str, bool)> {
        match &self.node(self.resolve(id)).value {
            Value::Scalar { text, quoted } => Some((text.as_str(), *quoted)),
            _ => None,
        }
    }

    pub fn parse(text: &str, syntax: Syntax) -> Result<Document, ParseError> {
        match syntax {
            Syntax::Json => parse_json(text),
            Syntax::Yaml => parse_yaml(text),
        }
    }
}

/// One step of a JSON pointer (RFC 6901): `~1` is `/`, `~0` is `~`.
pub fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The key a pointer token names.
pub fn unescape_token(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

struct Arena {
    nodes: Vec<Node>,
}

impl Arena {
    fn push(&mut self, line: u64, value: Value) -> Result<NodeId, String> {
        if self.nodes.len() >= MAX_NODES {
            return Err(format!("more than {MAX_NODES} values: too large for a config of worker options"));
        }
        self.nodes.push(Node { line, value });
        Ok(u32::try_from(self.nodes.len() - 1).expect("MAX_NODES fits in 32 bits"))
    }
}

// ---------------------------------------------------------------- YAML

fn parse_yaml(text: &str) -> Result<Document, ParseError> {
    use saphyr_parser::{Event, Parser, ScalarStyle};

    /// A container being filled, with the key read for its next value when it is a mapping.
    enum Open {
        Sequence(NodeId),
        Mapping(NodeId, Option<(Option<String>, u64)>),
    }
    let fail = |line: u64, message: String| ParseError { line: Some(line), message };
    let mut arena = Arena { nodes: Vec::new() };
    let mut anchors: rustc_hash::FxHashMap<usize, NodeId> = rustc_hash::FxHashMap::default();
    let mut stack: Vec<Open> = Vec::new();
    let mut documents: Vec<NodeId> = Vec::new();
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(|e| {
            // The scanner has a flow-nesting limit of its own (255), which it can meet before
            // this builder meets MAX_DEPTH: it reads ahead for keys.
            let message = if e.info() == "recursion limit exceeded" {
                format!("nested more than {MAX_DEPTH} levels deep")
            } else {
                format!("not YAML: {}", e.info())
            };
            fail(e.marker().line() as u64, message)
        })?;
        let line = span.start.line() as u64;
        let (id, anchor, opens) = match event {
            Event::Scalar(value, style, anchor, _tag) => {
                let quoted = !matches!(style, ScalarStyle::Plain);
                (arena.push(line, Value::Scalar { text: value.into_owned(), quoted }), anchor, false)
            }
            Event::Alias(anchor) => {
                let target =
                    *anchors.get(&anchor).ok_or_else(|| fail(line, "not YAML: an alias to no anchor".into()))?;
                (arena.push(line, Value::Alias(target)), 0, false)
            }
            Event::SequenceStart(anchor, _tag) => (arena.push(line, Value::Sequence(Vec::new())), anchor, true),
            Event::MappingStart(anchor, _tag) => (arena.push(line, Value::Mapping(Vec::new())), anchor, true),
            Event::SequenceEnd | Event::MappingEnd => {
                stack.pop();
                continue;
            }
            Event::StreamEnd => break,
            Event::Nothing | Event::StreamStart | Event::DocumentStart(_) | Event::DocumentEnd => continue,
        };
        let id = id.map_err(|message| fail(line, message))?;
        if anchor > 0 {
            anchors.insert(anchor, id);
        }
        match stack.last_mut() {
            None => documents.push(id),
            Some(Open::Sequence(parent)) => {
                if let Value::Sequence(items) = &mut arena.nodes[*parent as usize].value {
                    items.push(id);
                }
            }
            Some(Open::Mapping(parent, pending)) => match pending.take() {
                None => {
                    let key = match &arena.nodes[id as usize].value {
                        Value::Scalar { text, .. } => Some(text.clone()),
                        Value::Alias(target) => match &arena.nodes[*target as usize].value {
                            Value::Scalar { text, .. } => Some(text.clone()),
                            _ => None,
                        },
                        _ => None,
                    };
                    *pending = Some((key, line));
                }
                Some((key, key_line)) => {
                    if let Value::Mapping(entries) = &mut arena.nodes[*parent as usize].value {
                        entries.push(Entry { key, line: key_line, value: id });
                    }
                }
            },
        }
        if opens {
            if stack.len() >= MAX_DEPTH {
                return Err(fail(line, format!("nested more than {MAX_DEPTH} levels deep")));
            }
            stack.push(match arena.nodes[id as usize].value {
                Value::Sequence(_) => Open::Sequence(id),
                _ => Open::Mapping(id, None),
            });
        }
    }
    // Several documents in one stream (`---`) are read as one list, in their order.
    let root = match documents.len() {
        1 => documents[0],
        _ => arena.push(1, Value::Sequence(documents)).map_err(|message| fail(1, message))?,
    };
    Ok(Document { nodes: arena.nodes, root })
}

// ---------------------------------------------------------------- JSON

fn parse_json(text: &str) -> Result<Document, ParseError> {
    let (values, keys) = token_lines(text);
    let mut builder = JsonBuilder { arena: Arena { nodes: Vec::new() }, values, keys, next_value: 0, next_key: 0 };
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let root = NodeSeed(&mut builder).deserialize(&mut deserializer).and_then(|root| {
        deserializer.end()?;
        Ok(root)
    });
    let root = root.map_err(|e| {
        let message = if e.to_string().starts_with("recursion limit exceeded") {
            format!("nested more than {MAX_DEPTH} levels deep")
        } else {
            let text = e.to_string();
            // serde_json appends " at line L column C"; the line is given apart.
            let cut = text.rfind(" at line ").map_or(text.as_str(), |at| &text[..at]);
            format!("not JSON: {cut}")
        };
        ParseError { line: (e.line() > 0).then_some(e.line() as u64), message }
    })?;
    Ok(Document { nodes: builder.arena.nodes, root })
}

/// The lines of a valid JSON text's value starts and keys, each in document order: the order in
/// which serde_json hands them to the visitor below (a container before its contents, each key
/// before its value).
fn token_lines(text: &str) -> (Vec<u64>, Vec<u64>) {
    let bytes = text.as_bytes();
    let (mut values, mut keys) = (Vec::new(), Vec::new());
    let (mut line, mut i) = (1u64, 0usize);
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => line += 1,
            b'"' => {
                let mut end = i + 1;
                while end < bytes.len() && bytes[end] != b'"' {
                    end += if bytes[end] == b'\\' { 2 } else { 1 };
                }
                let next = bytes[(end + 1).min(bytes.len())..].iter().find(|b| !b.is_ascii_whitespace());
                if next == Some(&b':') {
                    keys.push(line);
                } else {
                    values.push(line);
                }
                i = end;
            }
            b'{' | b'[' => values.push(line),
            b'}' | b']' | b',' | b':' | b' ' | b'\t' | b'\r' => {}
            _ => {
                values.push(line);
                while i + 1 < bytes.len() && !b" \t\r\n,]}".contains(&bytes[i + 1]) {
                    i += 1;
                }
            }
        }
        i += 1;
    }
    (values, keys)
}

struct JsonBuilder {
    arena: Arena,
    values: Vec<u64>,
    keys: Vec<u64>,
    next_value: usize,
    next_key: usize,
}

impl JsonBuilder {
    fn take(lines: &[u64], next: &mut usize) -> u64 {
        let line = lines.get(*next).copied().unwrap_or(0);
        *next += 1;
        line
    }

    fn value_line(&mut self) -> u64 {
        Self::take(&self.values, &mut self.next_value)
    }

    fn push<E: de::Error>(&mut self, line: u64, value: Value) -> Result<NodeId, E> {
        self.arena.push(line, value).map_err(E::custom)
    }

    fn scalar<E: de::Error>(&mut self, text: String, quoted: bool) -> Result<NodeId, E> {
        let line = self.value_line();
        self.push(line, Value::Scalar { text, quoted })
    }
}

struct NodeSeed<'a>(&'a mut JsonBuilder);

impl<'de> DeserializeSeed<'de> for NodeSeed<'_> {
    type Value = NodeId;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<NodeId, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NodeSeed<'_> {
    type Value = NodeId;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<NodeId, E> {
        self.0.scalar(v.to_string(), false)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<NodeId, E> {
        self.0.scalar(v.to_string(), false)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<NodeId, E> {
        self.0.scalar(v.to_string(), false)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<NodeId, E> {
        self.0.scalar(v.to_string(), false)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<NodeId, E> {
        self.0.scalar(v.to_string(), true)
    }

    fn visit_unit<E: de::Error>(self) -> Result<NodeId, E> {
        self.0.scalar("null".into(), false)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NodeId, A::Error> {
        let line = self.0.value_line();
        let id = self.0.push(line, Value::Sequence(Vec::new()))?;
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(NodeSeed(self.0))? {
            items.push(item);
        }
        self.0.arena.nodes[id as usize].value = Value::Sequence(items);
        Ok(id)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NodeId, A::Error> {
        let line = self.0.value_line();
        let id = self.0.push(line, Value::Mapping(Vec::new()))?;
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let key_line = JsonBuilder::take(&self.0.keys, &mut self.0.next_key);
            let value = map.next_value_seed(NodeSeed(self.0))?;
            entries.push(Entry { key: Some(key), line: key_line, value });
        }
        self.0.arena.nodes[id as usize].value = Value::Mapping(entries);
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;

    fn keys_and_lines(document: &Document, id: NodeId) -> Vec<(String, u64)> {
        document.entries(id).iter().map(|e| (e.key.clone().unwrap_or_default(), e.line)).collect()
    }

    #[test]
    fn json_keys_and_values_keep_their_lines() {
        let text = "{\n  \"a\": {\"b\": 1,\n    \"c\": [\n      {\"d\": \"x:y\"}, 2]},\n  \"e\": \"q\\\"uote\"\n}";
        let document = Document::parse(text, Syntax::Json).unwrap();
        let root = document.root();
        assert_eq!(keys_and_lines(&document, root), [("a".into(), 2), ("e".into(), 5)]);
        let a = document.entries(root)[0].value;
        assert_eq!(keys_and_lines(&document, a), [("b".into(), 2), ("c".into(), 3)]);
        let Value::Sequence(items) = &document.node(document.entries(a)[1].value).value else { panic!() };
        assert_eq!(keys_and_lines(&document, items[0]), [("d".into(), 4)]);
        assert_eq!(document.scalar(document.entries(items[0])[0].value), Some(("x:y", true)));
        assert_eq!((document.scalar(items[1]), document.node(items[1]).line), (Some(("2", false)), 4));
        assert_eq!(document.scalar(document.entries(root)[1].value), Some(("q\"uote", true)));
    }

    #[test]
    fn json_duplicate_keys_are_all_kept() {
        let document = Document::parse("{\"a\": 1,\n\"a\": 2}", Syntax::Json).unwrap();
        assert_eq!(keys_and_lines(&document, document.root()), [("a".into(), 1), ("a".into(), 2)]);
    }

    #[test]
    fn json_errors_name_the_line() {
        let error = Document::parse("{\n\"a\": 1,\n}", Syntax::Json).unwrap_err();
        assert_eq!(error.line, Some(3));
        assert!(error.message.starts_with("not JSON: trailing comma"), "{}", error.message);
    }

    #[test]
    fn yaml_keys_keep_their_lines_and_quoting() {
        let text =
            "# worker options\nqueues:\n  sweep:\n    lockDuration: 12000\n    name: \"sweep\"\n  list: [1, '2']\n";
        let document = Document::parse(text, Syntax::Yaml).unwrap();
        let queues = document.entries(document.root())[0].value;
        let sweep = document.entries(queues)[0].value;
        assert_eq!(keys_and_lines(&document, sweep), [("lockDuration".into(), 4), ("name".into(), 5)]);
        assert_eq!(document.scalar(document.entries(sweep)[0].value), Some(("12000", false)));
        assert_eq!(document.scalar(document.entries(sweep)[1].value), Some(("sweep", true)));
        let Value::Sequence(list) = &document.node(document.entries(queues)[1].value).value else { panic!() };
        assert_eq!(document.scalar(list[1]), Some(("2", true)));
    }

    #[test]
    fn yaml_aliases_are_references_not_copies() {
        let text = "base: &w {lockDuration: 12000}\nsweep: *w\n";
        let document = Document::parse(text, Syntax::Yaml).unwrap();
        let entries = document.entries(document.root());
        assert!(matches!(document.node(entries[1].value).value, Value::Alias(_)));
        assert_eq!(document.resolve(entries[1].value), entries[0].value);
        assert_eq!(keys_and_lines(&document, entries[1].value), [("lockDuration".into(), 1)]);
    }

    #[test]
    fn a_billion_laughs_costs_what_its_text_costs() {
        // Nine levels of ten aliases each: 10^9 strings if the aliases were expanded.
        let mut text = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for level in 1..10 {
            let previous = format!("*a{}", level - 1);
            let _ = writeln!(text, "a{level}: &a{level} [{}]", [previous.as_str(); 10].join(", "));
        }
        let document = Document::parse(&text, Syntax::Yaml).unwrap();
        assert!(document.nodes.len() < 150, "{} nodes", document.nodes.len());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = |open: &str, close: &str| format!("{}{}", open.repeat(100_000), close.repeat(100_000));
        for (text, syntax) in
            [(deep("[", "]"), Syntax::Json), (deep("[", "]"), Syntax::Yaml), (deep("{\"a\":", "}"), Syntax::Json)]
        {
            let error = Document::parse(&text, syntax).unwrap_err();
            assert_eq!(error.message, format!("nested more than {MAX_DEPTH} levels deep"), "{syntax:?}");
        }
        // A block-style YAML nesting as well.
        let block: String = (0..200).map(|depth| " ".repeat(depth) + &format!("k{depth}:\n")).collect();
        let error = Document::parse(&block, Syntax::Yaml).unwrap_err();
        assert_eq!(error.message, format!("nested more than {MAX_DEPTH} levels deep"));
        assert_eq!(error.line, Some(MAX_DEPTH as u64 + 1));
        // Just under the cap is read.
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(Document::parse(&ok, Syntax::Json).is_ok());
        assert!(Document::parse(&ok, Syntax::Yaml).is_ok());
    }

    #[test]
    fn too_many_values_is_an_error() {
        let text = format!("[{}0]", "0,".repeat(MAX_NODES));
        for syntax in [Syntax::Json, Syntax::Yaml] {
            let error = Document::parse(&text, syntax).unwrap_err();
            assert!(error.message.contains(&format!("more than {MAX_NODES} values")), "{syntax:?}: {}", error.message);
        }
    }

    #[test]
    fn several_yaml_documents_are_one_list() {
        let document = Document::parse("a: 1\n---\nb: 2\n", Syntax::Yaml).unwrap();
        let Value::Sequence(documents) = &document.node(document.root()).value else { panic!() };
        assert_eq!(keys_and_lines(&document, documents[1]), [("b".into(), 3)]);
    }

    #[test]
    fn yaml_errors_name_the_line() {
        let error = Document::parse("a: 1\nb: [1, 2\nc: 3\n", Syntax::Yaml).unwrap_err();
        assert!(error.message.starts_with("not YAML: "), "{}", error.message);
        assert!(error.line.is_some());
    }

    #[test]
    fn pointer_tokens_escape_slash_and_tilde() {
        assert_eq!(pointer_token("a/b~c"), "a~1b~0c");
        assert_eq!(unescape_token("a~1b~0c"), "a/b~c");
    }
}
