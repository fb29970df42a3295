//! The one connection `capture` reads Redis through, and the reason it can only read.
//!
//! Every command goes through `Reader::query`/`Reader::pipeline`, which refuse any command that is
//! not in `READ_COMMANDS` before it is sent: a mistake in `capture` becomes an error, never a write
//! to a production Redis. Each command run is counted for the capture record. Replies are read by
//! `resp`, each within `--max-reply-bytes`, and every wait within `--timeout` and `--deadline`
//! (`transport`). Errors name the server as `Target::shown` does (scheme, host, port, database:
//! never the user or password) and the command that failed, on one line, with the server's
//! texts (key names, its error messages) made visible (`escape::visible`).
//!
//! Why not a client crate: redis-rs, which capture used before, reads a bulk string's whole
//! length as its header says and a line until its end, with no ceiling, so a hostile or broken
//! server could make it take all memory (issue 34). What capture needs of a client is small:
//! a URL, a socket (TLS with rustls), `AUTH`, `SELECT`, commands written as RESP arrays, replies
//! read with a ceiling.

use std::collections::BTreeMap;
use std::io::{BufReader, Write};
use std::rc::Rc;
use std::time::Duration;

use super::escape::{clip, visible};
use super::resp::{self, ReadError, Reply};
use super::shape::{Shaped, Wrong};
use super::target::Target;
use super::transport::{self, Clock, Limit, Stream};
use crate::error::{Error, Result};

/// The only commands `capture` sends once connected. Each is read-only in Redis' own command table
/// (`COMMAND INFO <name>` lists the `readonly` flag for all of them; `INFO` and `TIME` have no key
/// and write nothing). Connecting may also send `AUTH` (credentials in the URL) and `SELECT`
/// (a database number in the URL), which change the connection, not the data.
pub const READ_COMMANDS: &[&str] = &[
    "TIME", "INFO", "TYPE", "SCAN", "XINFO", "XLEN", "XRANGE", "HGETALL", "LRANGE", "LLEN", "ZRANGE", "ZCARD",
    "SMEMBERS", "SCARD", "GET", "PTTL", "EXISTS",
];

/// What bounds a capture's reading.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Each wait for the server.
    pub timeout: Duration,
    /// The whole capture, connecting included.
    pub deadline: Duration,
    /// What one reply may make capture hold (`resp::read`).
    pub max_reply_bytes: u64,
}

/// Why a pipeline's reader of replies stopped: a reply of the wrong shape (or a record made of it
/// that is too long), which the pipeline names with its command, or an error of its own (a file
/// that could not be written).
#[derive(Debug)]
pub enum Stop {
    Reply(Wrong),
    Error(Error),
}

impl From<Wrong> for Stop {
    fn from(wrong: Wrong) -> Stop {
        Stop::Reply(wrong)
    }
}

impl From<Error> for Stop {
    fn from(error: Error) -> Stop {
        Stop::Error(error)
    }
}

pub struct Reader {
    connection: BufReader<Stream>,
    target: String,
    clock: Rc<Clock>,
    max_reply_bytes: u64,
    /// Commands sent, by name (a pipeline counts each of its commands).
    pub commands: BTreeMap<&'static str, u64>,
}

/// A command as RESP writes it: an array of bulk strings.
fn encode(out: &mut Vec<u8>, name: &str, args: &[&str]) {
    out.extend_from_slice(format!("*{}\r\n", args.len() + 1).as_bytes());
    for part in std::iter::once(name).chain(args.iter().copied()) {
        out.extend_from_slice(format!("${}\r\n", part.len()).as_bytes());
        out.extend_from_slice(part.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
}

impl Reader {
    /// Connects within the limits, then logs in (`AUTH`) and picks the database (`SELECT`) as the
    /// URL says. A failure is `connect: ...`.
    pub fn connect(target: &Target, limits: Limits) -> Result<Reader> {
        let clock = Clock::new(limits.timeout, limits.deadline);
        let shown = target.shown();
        let stream = transport::connect(target, &clock).map_err(|failure| {
            let message = match failure.io {
                Some(kind) if is_timeout(kind) => redis_timed_out(&clock, "the connection"),
                _ => failure.message,
            };
            remote(&shown, "connect", &message)
        })?;
        let mut reader = Reader {
            connection: BufReader::with_capacity(64 << 10, stream),
            target: shown,
            clock,
            max_reply_bytes: limits.max_reply_bytes,
            commands: BTreeMap::new(),
        };
        if let Some(password) = &target.password {
            let mut args = Vec::new();
            if let Some(user) = &target.user {
                args.push(user.as_str());
            }
            args.push(password.as_str());
            reader.login("AUTH", &args)?;
        }
        if target.db != 0 {
            reader.login("SELECT", &[&target.db.to_string()])?;
        }
        Ok(reader)
    }

    /// `AUTH` or `SELECT`: `+OK`, or a `connect:` error that never shows the arguments.
    fn login(&mut self, name: &str, args: &[&str]) -> Result<()> {
        let mut request = Vec::new();
        encode(&mut request, name, args);
        let reply = self.send(&request).and_then(|()| self.receive()).map_err(|why| {
            let message = match why {
                ReadError::Io(error) if is_timeout(error.kind()) => {
                    redis_timed_out(&self.clock, &format!("the reply to {name}"))
                }
                other => format!("{name}: {other}"),
            };
            self.error("connect", &message)
        })?;
        match reply {
            Reply::Simple(ok) if ok == b"OK" => Ok(()),
            Reply::Error(refusal) => Err(self.error("connect", &format!("{name} refused: {}", refused(&refusal)))),
            other => Err(self.error("connect", &format!("{name}: expected +OK, got {}", other.kind()))),
        }
    }

    pub fn target(&self) -> &str {
        &self.target
    }

    /// The error of `command`, on one line, with the server's texts made visible.
    pub fn error(&self, command: &str, message: &str) -> Error {
        remote(&self.target, command, message)
    }

    /// A reply of the wrong shape, as the error of the command it answered.
    pub fn wrong(&self, command: &str, wrong: &Wrong) -> Error {
        self.error(command, &wrong.0)
    }

    /// What stopped the reading of `command`'s reply, as its error.
    pub fn stopped(&self, command: &str, stop: Stop) -> Error {
        match stop {
            Stop::Reply(wrong) => self.wrong(command, &wrong),
            Stop::Error(error) => error,
        }
    }

    /// One command whose reply must have the shape `shape` reads: what it keeps of it, or the
    /// error of the command (`XRANGE bull:q:events ...: expected an array of stream entries, got
    /// an integer (42)`).
    pub fn ask<T>(&mut self, name: &str, args: &[&str], shape: impl FnOnce(Reply) -> Shaped<T>) -> Result<T> {
        let reply = self.query(name, args)?;
        shape(reply).map_err(|wrong| self.wrong(&shown(name, args), &wrong))
    }

    fn allowed(&mut self, name: &str) -> Result<()> {
        let Some(known) = READ_COMMANDS.iter().find(|c| c.eq_ignore_ascii_case(name)) else {
            return Err(self.error(
                name,
                "refused: capture sends read-only commands only (a bug in leasetrace: please report it)",
            ));
        };
        *self.commands.entry(known).or_default() += 1;
        Ok(())
    }

    fn send(&mut self, request: &[u8]) -> std::result::Result<(), ReadError> {
        let stream = self.connection.get_mut();
        stream.write_all(request).and_then(|()| stream.flush()).map_err(ReadError::Io)
    }

    fn receive(&mut self) -> std::result::Result<Reply, ReadError> {
        resp::read(&mut self.connection, self.max_reply_bytes)
    }

    /// A failure to send or read, as the error of `shown`: which time limit ran out, or what
    /// was wrong with the reply.
    fn failed(&self, shown: &str, why: ReadError) -> Error {
        let message = match why {
            ReadError::Io(error) if is_timeout(error.kind()) => redis_timed_out(&self.clock, "the reply"),
            other => other.to_string(),
        };
        self.error(shown, &message)
    }

    /// One command: `name` and its `args`. An error reply is the error of the command, named as
    /// `shown` names it (`XRANGE bull:q:events - + ...`).
    pub fn query(&mut self, name: &str, args: &[&str]) -> Result<Reply> {
        self.allowed(name)?;
        let shown = shown(name, args);
        let mut request = Vec::new();
        encode(&mut request, name, args);
        match self.send(&request).and_then(|()| self.receive()) {
            Ok(Reply::Error(refusal)) => Err(self.error(&shown, &refused(&refusal))),
            Ok(reply) => Ok(reply),
            Err(why) => Err(self.failed(&shown, why)),
        }
    }

    /// Commands sent together in one round trip; each reply handed to `each` as it is read (so
    /// that only one is held at a time), with its index. A command the server refused comes as
    /// `Err(message)` in its place; a failed connection, a reply that is not one, or one `each`
    /// stops at is the error of the whole batch, naming the command whose reply it was.
    pub fn pipeline(
        &mut self,
        commands: &[(&str, Vec<String>)],
        mut each: impl FnMut(usize, std::result::Result<Reply, String>) -> std::result::Result<(), Stop>,
    ) -> Result<()> {
        if commands.is_empty() {
            return Ok(());
        }
        let mut request = Vec::new();
        for (name, args) in commands {
            self.allowed(name)?;
            encode(&mut request, name, &args.iter().map(String::as_str).collect::<Vec<_>>());
        }
        let shown_at = |i: usize| {
            let (name, args) = &commands[i];
            format!(
                "{} (reply {} of a pipeline of {})",
                shown(name, &args.iter().map(String::as_str).collect::<Vec<_>>()),
                i + 1,
                commands.len()
            )
        };
        self.send(&request).map_err(|why| self.failed(&shown_at(0), why))?;
        for i in 0..commands.len() {
            let reply = match self.receive() {
                Ok(Reply::Error(refusal)) => Err(refused(&refusal)),
                Ok(reply) => Ok(reply),
                Err(why) => return Err(self.failed(&shown_at(i), why)),
            };
            each(i, reply).map_err(|stop| self.stopped(&shown_at(i), stop))?;
        }
        Ok(())
    }
}

/// A server's error reply as a message quotes it: its first 1000 characters.
fn refused(text: &[u8]) -> String {
    clip(&String::from_utf8_lossy(text), 1000)
}

pub(crate) fn is_timeout(kind: std::io::ErrorKind) -> bool {
    matches!(kind, std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
}

/// Which time limit ran out while waiting for `what` from a `store` server, and what to do
/// about it (`more`: what else makes the capture smaller).
pub(crate) fn timed_out(clock: &Clock, what: &str, store: &str, more: &str) -> String {
    let seconds = |d: Duration| d.as_secs_f64();
    match clock.fired() {
        Some(Limit::Deadline) => format!(
            "the --deadline of {} s passed while waiting for {what} (the capture ran {:.1} s): nothing was written; raise --deadline for {more}",
            seconds(clock.deadline),
            seconds(clock.elapsed())
        ),
        _ => format!(
            "no answer within the --timeout of {} s (waiting for {what}): is this a {store} server, and is it busy? (or raise --timeout)",
            seconds(clock.timeout)
        ),
    }
}

/// A Redis capture's words for `timed_out`.
fn redis_timed_out(clock: &Clock, what: &str) -> String {
    timed_out(clock, what, "Redis", "a big queue or a slow server")
}

/// The one way capture's errors are made: the server's texts in them made visible.
pub(crate) fn remote(target: &str, command: &str, message: &str) -> Error {
    Error::Remote { target: visible(target), command: visible(command), message: visible(message) }
}

/// A command as an error shows it: its name and its first arguments (keys, ids), at most 3.
fn shown(name: &str, args: &[&str]) -> String {
    let mut text = name.to_string();
    for arg in args.iter().take(3) {
        text.push(' ');
        text.push_str(&clip(arg, 200));
    }
    if args.len() > 3 {
        text.push_str(" ...");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn commands_are_written_as_arrays_of_bulk_strings() {
        let mut out = Vec::new();
        encode(&mut out, "HGETALL", &["bull:q:1"]);
        assert_eq!(out, b"*2\r\n$7\r\nHGETALL\r\n$8\r\nbull:q:1\r\n");
    }

    #[test]
    fn the_servers_texts_are_shown_visibly_in_errors() {
        let error = remote("redis://h:1/0", "HGETALL bull:q:\u{1b}[2J", "expected x, got '\u{202e}'").to_string();
        assert_eq!(error, "redis://h:1/0: HGETALL bull:q:\\x1b[2J: expected x, got 'U+202E'");
    }
}
