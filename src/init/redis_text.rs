//! The tokens `redis-cli` prints for a reply: one per line when stdout is not a terminal
//! (`event` / `active`), or numbered and quoted on a terminal (`1) "event"`, `   2) "active"`,
//! nested replies indented, `1) 1) "1791333180000-0"`).

/// The tokens of the sample, each with its line, numbering and quotes removed.
pub fn tokens(text: &str) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    for (index, line) in text.split('\n').enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line).trim();
        if line.is_empty() || line.starts_with("(empty") || line == "(nil)" {
            continue;
        }
        out.push((index as u64 + 1, unquote(strip_numbering(line))));
    }
    out
}

/// `1) 2) "x"` → `"x"`.
fn strip_numbering(mut line: &str) -> &str {
    loop {
        let digits = line.bytes().take_while(u8::is_ascii_digit).count();
        match line[digits..].strip_prefix(')') {
            Some(rest) if digits > 0 && (rest.is_empty() || rest.starts_with(' ')) => line = rest.trim_start(),
            _ => return line,
        }
    }
}

/// redis-cli's quoted form: `"a \"b\""` → `a "b"`; anything else as it is.
fn unquote(token: &str) -> String {
    let Some(inner) = token.strip_prefix('"').and_then(|t| t.strip_suffix('"')).filter(|_| token.len() >= 2) else {
        return token.to_string();
    };
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_terminal_forms_give_the_same_tokens() {
        let plain = tokens("1791333180000-0\nevent\nactive\n");
        let terminal = tokens("1) 1) \"1791333180000-0\"\n   2) 1) \"event\"\n      2) \"active\"\n");
        let values = |t: &[(u64, String)]| t.iter().map(|(_, v)| v.clone()).collect::<Vec<_>>();
        assert_eq!(values(&plain), values(&terminal));
        assert_eq!(values(&tokens("1) \"say \\\"hi\\\"\"\n(empty array)\n")), ["say \"hi\""]);
        assert_eq!(values(&tokens("10)\n\"")), ["", "\""], "odd input is kept as text, never a panic");
    }
}
