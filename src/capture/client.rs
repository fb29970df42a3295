//! The one connection `capture` reads Redis through, and the reason it can only read.
//!
//! Every command goes through `Reader::query`/`Reader::pipeline`, which refuse any command that is
//! not in `READ_COMMANDS` before it is sent: a mistake in `capture` becomes an error, never a write
//! to a production Redis. Each command run is counted for the capture record. Errors name the
//! server as `target()` shows it (scheme, host, port, database: never the user or password) and
//! the command that failed.

use std::collections::BTreeMap;
use std::time::Duration;

use redis::{ConnectionAddr, ConnectionLike, IntoConnectionInfo, Value};

use crate::error::{Error, Result};

/// The only commands `capture` sends once connected. Each is read-only in Redis' own command table
/// (`COMMAND INFO <name>` lists the `readonly` flag for all of them; `INFO` and `TIME` have no key
/// and write nothing). Connecting may also send `AUTH` (credentials in the URL) and `SELECT`
/// (a database number in the URL), which change the connection, not the data; the client's
/// `CLIENT SETINFO` is switched off.
pub const READ_COMMANDS: &[&str] = &[
    "TIME", "INFO", "TYPE", "SCAN", "XINFO", "XLEN", "XRANGE", "HGETALL", "LRANGE", "LLEN", "ZRANGE", "ZCARD",
    "SMEMBERS", "SCARD", "GET", "PTTL", "EXISTS",
];

pub struct Reader {
    connection: redis::Connection,
    target: String,
    /// Commands sent, by name (a pipeline counts each of its commands).
    pub commands: BTreeMap<&'static str, u64>,
}

/// The server as the user may see it: `redis://host:port/db` or `rediss://...`, never credentials.
fn describe(info: &redis::ConnectionInfo) -> String {
    let db = info.redis_settings().db();
    match info.addr() {
        ConnectionAddr::Tcp(host, port) => format!("redis://{host}:{port}/{db}"),
        ConnectionAddr::TcpTls { host, port, .. } => format!("rediss://{host}:{port}/{db}"),
        ConnectionAddr::Unix(path) => format!("redis+unix://{}?db={db}", path.display()),
        // The enum is non-exhaustive: a future address kind still gets a name without secrets.
        #[allow(unreachable_patterns)]
        _ => format!("redis (database {db})"),
    }
}

/// What the URL says about authentication, for the record: never the values.
pub fn auth_kind(info: &redis::ConnectionInfo) -> &'static str {
    let settings = info.redis_settings();
    match (settings.username().is_some(), settings.password().is_some()) {
        (true, true) => "user and password",
        (false, true) => "password",
        (true, false) => "user",
        (false, false) => "none",
    }
}

/// The URL with its credentials cut out, for messages about a URL that could not be parsed.
pub fn redact(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let host = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
            format!("{scheme}://{host}")
        }
        None => "the --redis URL".to_string(),
    }
}

impl Reader {
    /// Connects within `timeout`, and sets `timeout` on every later read and write of the socket.
    pub fn connect(url: &str, timeout: Duration) -> Result<(Reader, &'static str)> {
        let info = url.into_connection_info().map_err(|e| {
            Error::usage(format!(
                "--redis {}: not a Redis URL ({e}): expected redis://[user:password@]host[:port][/db] or rediss://... for TLS",
                redact(url)
            ))
        })?;
        let info = info.clone().set_redis_settings(info.redis_settings().clone().set_skip_set_lib_name());
        let target = describe(&info);
        let auth = auth_kind(&info);
        let remote =
            |command: &str, message: String| Error::Remote { target: target.clone(), command: command.into(), message };
        let client = redis::Client::open(info).map_err(|e| remote("connect", e.to_string()))?;
        let connection = client.get_connection_with_timeout(timeout).map_err(|e| {
            let seconds = timeout.as_secs_f64();
            if e.is_timeout() {
                // The connection, AUTH or SELECT: the server took the connection and said nothing.
                remote(
                    "connect",
                    format!(
                        "no answer within the --timeout of {seconds} s ({e}): is this a Redis server, and is it busy?"
                    ),
                )
            } else {
                remote("connect", format!("{e} (within the --timeout of {seconds} s)"))
            }
        })?;
        connection.set_read_timeout(Some(timeout)).map_err(|e| remote("connect", e.to_string()))?;
        connection.set_write_timeout(Some(timeout)).map_err(|e| remote("connect", e.to_string()))?;
        Ok((Reader { connection, target, commands: BTreeMap::new() }, auth))
    }

    pub fn target(&self) -> &str {
        &self.target
    }

    fn allowed(&mut self, name: &str) -> Result<()> {
        let Some(known) = READ_COMMANDS.iter().find(|c| c.eq_ignore_ascii_case(name)) else {
            return Err(Error::Remote {
                target: self.target.clone(),
                command: name.to_string(),
                message: "refused: capture sends read-only commands only (a bug in leasetrace: please report it)"
                    .into(),
            });
        };
        *self.commands.entry(known).or_default() += 1;
        Ok(())
    }

    fn failed(&self, shown: &str, error: &redis::RedisError) -> Error {
        let message = if error.is_timeout() {
            format!("no answer within the timeout ({error}): a busy server, or raise --timeout")
        } else if error.to_string().contains("certificate") {
            // rustls checks the server's certificate at the first command, not at connect.
            format!(
                "{error}: the TLS certificate of the server was refused (rediss:// trusts the system's CA certificates; SSL_CERT_FILE=FILE names a CA file of your own)"
            )
        } else {
            error.to_string()
        };
        Error::Remote { target: self.target.clone(), command: shown.to_string(), message }
    }

    /// One command: `name` and its `args`. `shown` names it in an error (`XRANGE bull:q:events`).
    pub fn query(&mut self, name: &str, args: &[&str]) -> Result<Value> {
        self.allowed(name)?;
        let mut cmd = redis::cmd(name);
        for arg in args {
            cmd.arg(*arg);
        }
        let shown = shown(name, args);
        match self.connection.req_command(&cmd) {
            Ok(Value::ServerError(error)) => {
                Err(Error::Remote { target: self.target.clone(), command: shown, message: error.to_string() })
            }
            Ok(value) => Ok(value),
            Err(error) => Err(self.failed(&shown, &error)),
        }
    }

    /// Commands sent together in one round trip; each reply in order. A command the server refused
    /// comes back as `Err(message)` in its place (the others still count), a failed connection as
    /// the error of the whole batch.
    pub fn pipeline(&mut self, commands: &[(&str, Vec<String>)]) -> Result<Vec<std::result::Result<Value, String>>> {
        if commands.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        for (name, args) in commands {
            self.allowed(name)?;
            pipe.cmd(name);
            for arg in args {
                pipe.arg(arg.as_str());
            }
        }
        let (first, first_args) = &commands[0];
        let shown = format!(
            "{} (a pipeline of {} commands)",
            shown(first, &first_args.iter().map(String::as_str).collect::<Vec<_>>()),
            commands.len()
        );
        let replies: Vec<Value> = pipe.query(&mut self.connection).map_err(|e| self.failed(&shown, &e))?;
        Ok(replies
            .into_iter()
            .map(|value| match value {
                Value::ServerError(error) => Err(error.to_string()),
                value => Ok(value),
            })
            .collect())
    }
}

/// A command as an error shows it: its name and its first arguments (keys, ids), at most 3.
fn shown(name: &str, args: &[&str]) -> String {
    let mut text = name.to_string();
    for arg in args.iter().take(3) {
        text.push(' ');
        text.push_str(arg);
    }
    if args.len() > 3 {
        text.push_str(" ...");
    }
    text
}

// ---------------------------------------------------------------- reading replies

/// A reply as text: bulk strings as UTF-8 (a byte that is not is replaced, and `lossy` set).
pub fn text(value: &Value, lossy: &mut bool) -> Option<String> {
    match value {
        Value::BulkString(bytes) => Some(if let Ok(text) = std::str::from_utf8(bytes) {
            text.to_string()
        } else {
            *lossy = true;
            String::from_utf8_lossy(bytes).into_owned()
        }),
        Value::SimpleString(text) | Value::VerbatimString { text, .. } => Some(text.clone()),
        Value::Int(n) => Some(n.to_string()),
        Value::Okay => Some("OK".into()),
        _ => None,
    }
}

pub fn int(value: &Value) -> Option<i64> {
    match value {
        Value::Int(n) => Some(*n),
        Value::BulkString(bytes) => std::str::from_utf8(bytes).ok()?.parse().ok(),
        Value::SimpleString(text) => text.parse().ok(),
        _ => None,
    }
}

/// The items of an array reply (a set's members in RESP3 too).
pub fn items(value: &Value) -> &[Value] {
    match value {
        Value::Array(items) | Value::Set(items) => items,
        _ => &[],
    }
}

/// A flat `[field, value, ...]` reply (or a RESP3 map) as pairs, in the server's order.
pub fn pairs(value: &Value, lossy: &mut bool) -> Vec<(String, String)> {
    match value {
        Value::Map(map) => {
            map.iter().filter_map(|(k, v)| Some((text(k, lossy)?, text(v, lossy).unwrap_or_default()))).collect()
        }
        other => items(other)
            .chunks(2)
            .filter_map(|pair| match pair {
                [k, v] => Some((text(k, lossy)?, text(v, lossy).unwrap_or_default())),
                _ => None,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_reach_what_is_shown() {
        let info = "redis://reader:s3cret@10.0.0.5:6380/2".into_connection_info().unwrap();
        assert_eq!(describe(&info), "redis://10.0.0.5:6380/2");
        assert_eq!(auth_kind(&info), "user and password");
        let info = "rediss://:s3cret@cache.example.com/0".into_connection_info().unwrap();
        assert_eq!(describe(&info), "rediss://cache.example.com:6379/0");
        assert_eq!(auth_kind(&info), "password");
        assert_eq!(redact("redis://u:p@w@host:1/0"), "redis://host:1/0");
        assert!(!redact("nonsense:secret").contains("secret"));
    }

    #[test]
    fn no_command_that_writes_is_allowed() {
        // Redis' write commands and the scripting and admin ones that can write or block.
        for write in [
            "SET", "DEL", "EXPIRE", "HSET", "XADD", "XTRIM", "EVAL", "EVALSHA", "FCALL", "FLUSHALL", "CONFIG", "DEBUG",
            "KEYS", "MONITOR",
        ] {
            assert!(!READ_COMMANDS.iter().any(|c| c.eq_ignore_ascii_case(write)), "{write} must not be allowed");
        }
    }

    #[test]
    fn commands_are_shown_with_their_first_arguments() {
        assert_eq!(shown("XRANGE", &["bull:q:events", "-", "+", "COUNT", "1000"]), "XRANGE bull:q:events - + ...");
        assert_eq!(shown("TIME", &[]), "TIME");
    }
}
