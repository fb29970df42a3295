//! The one session `capture --postgres` reads the database through, and the reasons it can only
//! read.
//!
//! Three locks, each enough on its own: the session starts with `default_transaction_read_only`
//! on (every transaction of it is read-only, the server refuses any write); the capture is one
//! `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY` transaction, ended by `ROLLBACK`; and every
//! statement goes through `Session::allowed` before it is sent, which lets through only that
//! `BEGIN`, `SELECT`, `SHOW`, `COPY (...) TO STDOUT` and `ROLLBACK` (a mistake in capture becomes an
//! error, never a statement sent). Statements are sent by the simple query protocol, one at a
//! time, and counted for the capture record.
//!
//! The protocol's messages are made and parsed by `postgres-protocol` (the crate under
//! tokio-postgres, with SCRAM-SHA-256 and MD5 authentication); the framing is capture's own, for
//! the same reason as the Redis client's: every message is read within `--max-reply-bytes`, its
//! length checked before its body is read, and every wait within `--timeout` and `--deadline`
//! (`transport::Clock`). `COPY ... TO STDOUT` hands each row to the caller as it arrives, so a
//! table of any size costs one row of memory.

use std::collections::BTreeMap;
use std::io::{BufReader, Read, Write};
use std::rc::Rc;

use bytes::BytesMut;
use fallible_iterator::FallibleIterator;
use postgres_protocol::authentication::sasl::{ChannelBinding, SCRAM_SHA_256, ScramSha256};
use postgres_protocol::message::{backend::Message, frontend};

use super::target::{Address, PgTarget, SslMode};
use crate::capture::client::{self, Limits, is_timeout, remote};
use crate::capture::escape::{clip, visible};
use crate::capture::transport::{self, Check, Clock, Stream};
use crate::error::{Error, Result};

/// The statements capture may send, by their first words: what `allowed` checks.
pub const STATEMENTS: &[&str] =
    &["BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "SELECT ", "SHOW ", "COPY (", "ROLLBACK"];

/// A message's type byte and length field.
const HEADER: usize = 5;

/// The session's settings, sent with the startup message: read-only, and the output's form fixed
/// whatever the server's defaults (ISO dates, UTC, UTF-8), so that every export reads alike.
fn startup_settings(target: &PgTarget, limits: &Limits) -> Vec<(&'static str, String)> {
    vec![
        ("user", target.user.clone()),
        ("database", target.dbname.clone()),
        ("application_name", "leasetrace capture".into()),
        ("client_encoding", "UTF8".into()),
        ("DateStyle", "ISO, YMD".into()),
        ("TimeZone", "UTC".into()),
        ("IntervalStyle", "iso_8601".into()),
        ("extra_float_digits", "3".into()),
        ("default_transaction_read_only", "on".into()),
        // A statement may take what is left of the deadline; waiting on another session's lock
        // (a migration holding the table) no longer than one --timeout.
        ("statement_timeout", limits.deadline.as_millis().to_string()),
        ("lock_timeout", limits.timeout.as_millis().to_string()),
    ]
}

/// A row of a small result, each cell as text (`None`: NULL).
pub type Row = Vec<Option<String>>;

/// A small result: its columns (name and type OID, as `RowDescription` gives them) and rows.
#[derive(Debug, Default)]
pub struct Answer {
    pub columns: Vec<(String, u32)>,
    pub rows: Vec<Row>,
}

/// Whether `statement` is one capture may send (`STATEMENTS`; a COPY only to the client).
pub fn is_reading(statement: &str) -> bool {
    let upper = statement.trim_start().to_ascii_uppercase();
    let copy_out = upper.starts_with("COPY (") && upper.trim_end().contains(") TO STDOUT");
    STATEMENTS.iter().any(|start| upper.starts_with(start)) && (!upper.starts_with("COPY") || copy_out)
}

/// What a failed message read was.
pub(crate) enum Failure {
    Io(std::io::Error),
    /// Not a message of the protocol, or one too long; the text says which.
    Protocol(String),
}

pub struct Session {
    connection: BufReader<Stream>,
    target: String,
    clock: Rc<Clock>,
    max_message: u64,
    /// The server's `ParameterStatus` values (`server_version`, `TimeZone`, ...).
    pub parameters: BTreeMap<String, String>,
    /// Every statement sent, in order, for the record.
    pub statements: Vec<String>,
    /// How the connection is protected, for the record.
    pub tls: &'static str,
}

impl Session {
    /// Connects within the limits, asks for TLS as `sslmode` says, logs in, and waits for the
    /// server to be ready. A failure is `connect: ...`.
    pub fn connect(target: &PgTarget, limits: Limits) -> Result<Session> {
        let clock = Clock::new(limits.timeout, limits.deadline);
        let shown = target.shown();
        let fail = |message: String| remote(&shown, "connect", &message);
        let connect_error = |failure: transport::ConnectError, clock: &Clock| match failure.io {
            Some(kind) if is_timeout(kind) => timed_out(clock, "the connection"),
            _ => failure.message,
        };
        let (stream, tls) = match &target.address {
            Address::Unix { socket, .. } => {
                (transport::unix(socket, &clock).map_err(|f| fail(connect_error(f, &clock)))?, "none (Unix socket)")
            }
            Address::Tcp { host, ip, port } => {
                let mut plain = transport::tcp(host, *port, &clock).map_err(|f| fail(connect_error(f, &clock)))?;
                if target.sslmode == SslMode::Disable {
                    (Stream::Plain(plain), "none (sslmode=disable)")
                } else {
                    let mut request = BytesMut::new();
                    frontend::ssl_request(&mut request);
                    plain.write_all(&request).and_then(|()| plain.flush()).map_err(|e| fail(e.to_string()))?;
                    // One byte, read unbuffered: whatever follows it belongs to TLS (CVE-2021-23222).
                    let mut answer = [0u8; 1];
                    plain.read_exact(&mut answer).map_err(|e| {
                        fail(if is_timeout(e.kind()) {
                            timed_out(&clock, "the answer to SSLRequest")
                        } else {
                            e.to_string()
                        })
                    })?;
                    match (answer[0], target.sslmode) {
                        (b'S', mode) => {
                            let (check, said) = match mode {
                                SslMode::VerifyFull => {
                                    (Check::Full, "TLS, certificate and host name checked (sslmode=verify-full)")
                                }
                                SslMode::VerifyCa => {
                                    (Check::Chain, "TLS, certificate checked, host name not (sslmode=verify-ca)")
                                }
                                _ => (
                                    Check::Encryption,
                                    "TLS, the server's certificate not checked (sslmode=prefer or require, as libpq; verify-full checks it)",
                                ),
                            };
                            let config = transport::tls_config(check, target.sslrootcert.as_deref())
                                .map_err(|f| fail(f.message))?;
                            let trust = "sslmode=verify-full checks the chain to the system's CA certificates, SSL_CERT_FILE's, or ?sslrootcert=FILE's, and the host name; verify-ca the chain alone; require nothing";
                            let stream = transport::secure(plain, host, *ip, config, trust)
                                .map_err(|f| fail(connect_error(f, &clock)))?;
                            (stream, said)
                        }
                        (b'N', SslMode::Prefer) => {
                            (Stream::Plain(plain), "none (the server offers no TLS; sslmode=prefer)")
                        }
                        (b'N', mode) => {
                            return Err(fail(format!(
                                "the server offers no TLS, and sslmode={} requires it",
                                mode.name()
                            )));
                        }
                        (other, _) => {
                            return Err(fail(format!(
                                "answered SSLRequest with {}: is this a PostgreSQL server?",
                                visible(&String::from_utf8_lossy(&[other]))
                            )));
                        }
                    }
                }
            }
        };
        let mut session = Session {
            connection: BufReader::with_capacity(64 << 10, stream),
            target: shown,
            clock,
            max_message: limits.max_reply_bytes,
            parameters: BTreeMap::new(),
            statements: Vec::new(),
            tls,
        };
        session.start(target, &limits)?;
        Ok(session)
    }

    pub fn target(&self) -> &str {
        &self.target
    }

    /// The error of `statement`, on one line, with the server's texts made visible.
    pub fn error(&self, statement: &str, message: &str) -> Error {
        remote(&self.target, &shown(statement), message)
    }

    fn start(&mut self, target: &PgTarget, limits: &Limits) -> Result<()> {
        let settings = startup_settings(target, limits);
        let mut out = BytesMut::new();
        frontend::startup_message(settings.iter().map(|(k, v)| (*k, v.as_str())), &mut out)
            .map_err(|e| self.error("connect", &e.to_string()))?;
        self.send(&out, "connect")?;
        let mut scram: Option<ScramSha256> = None;
        let password = || {
            target.password.clone().ok_or_else(|| {
                "the server asks for a password: give it in the URI (postgres://USER:PASSWORD@...), PGPASSWORD or the password file (~/.pgpass)".to_string()
            })
        };
        loop {
            let message = self.receive("connect")?;
            let mut out = BytesMut::new();
            match message {
                Message::AuthenticationCleartextPassword => {
                    let password = password().map_err(|m| self.error("connect", &m))?;
                    frontend::password_message(password.as_bytes(), &mut out)
                        .map_err(|e| self.error("connect", &e.to_string()))?;
                }
                Message::AuthenticationMd5Password(body) => {
                    let password = password().map_err(|m| self.error("connect", &m))?;
                    let hash = postgres_protocol::authentication::md5_hash(
                        target.user.as_bytes(),
                        password.as_bytes(),
                        body.salt(),
                    );
                    frontend::password_message(hash.as_bytes(), &mut out)
                        .map_err(|e| self.error("connect", &e.to_string()))?;
                }
                Message::AuthenticationSasl(body) => {
                    let mechanisms: Vec<String> = body
                        .mechanisms()
                        .map(|m| Ok(m.to_string()))
                        .collect()
                        .map_err(|e| self.error("connect", &e.to_string()))?;
                    if !mechanisms.iter().any(|m| m == SCRAM_SHA_256) {
                        return Err(self.error(
                            "connect",
                            &format!(
                                "the server offers SASL {} only: capture speaks SCRAM-SHA-256",
                                mechanisms.join(", ")
                            ),
                        ));
                    }
                    let password = password().map_err(|m| self.error("connect", &m))?;
                    let state = ScramSha256::new(password.as_bytes(), ChannelBinding::unsupported());
                    frontend::sasl_initial_response(SCRAM_SHA_256, state.message(), &mut out)
                        .map_err(|e| self.error("connect", &e.to_string()))?;
                    scram = Some(state);
                }
                Message::AuthenticationSaslContinue(body) => {
                    let state =
                        scram.as_mut().ok_or_else(|| self.error("connect", "SASL continued before it began"))?;
                    state.update(body.data()).map_err(|e| self.error("connect", &format!("SCRAM: {e}")))?;
                    frontend::sasl_response(state.message(), &mut out)
                        .map_err(|e| self.error("connect", &e.to_string()))?;
                }
                Message::AuthenticationSaslFinal(body) => {
                    let state = scram.as_mut().ok_or_else(|| self.error("connect", "SASL ended before it began"))?;
                    state.finish(body.data()).map_err(|e| {
                        self.error("connect", &format!("SCRAM: the server did not prove it knows the password ({e})"))
                    })?;
                }
                Message::AuthenticationKerberosV5
                | Message::AuthenticationScmCredential
                | Message::AuthenticationGss
                | Message::AuthenticationSspi
                | Message::AuthenticationGssContinue(_) => {
                    return Err(self.error(
                        "connect",
                        "the server asks for Kerberos, GSSAPI or SSPI: capture logs in with a password (SCRAM-SHA-256, MD5, clear text over TLS) or trust/peer",
                    ));
                }
                Message::ParameterStatus(body) => self.parameter(&body),
                Message::AuthenticationOk | Message::BackendKeyData(_) | Message::NoticeResponse(_) => {}
                Message::ReadyForQuery(_) => return Ok(()),
                Message::ErrorResponse(body) => return Err(self.error("connect", &server_error(&body))),
                _ => return Err(self.error("connect", "an unexpected message while logging in")),
            }
            if !out.is_empty() {
                self.send(&out, "connect")?;
            }
        }
    }

    fn parameter(&mut self, body: &postgres_protocol::message::backend::ParameterStatusBody) {
        if let (Ok(name), Ok(value)) = (body.name(), body.value())
            && self.parameters.len() < 64
        {
            self.parameters.insert(clip(name, 64), clip(value, 200));
        }
    }

    /// Refuses, before it is sent, any statement that is not one of `STATEMENTS`.
    fn allowed(&mut self, statement: &str) -> Result<()> {
        if !is_reading(statement) {
            return Err(self.error(
                statement,
                "refused: capture sends read-only statements only (a bug in leasetrace: please report it)",
            ));
        }
        self.statements.push(statement.to_string());
        Ok(())
    }

    /// A statement whose result is small (`SELECT`, `BEGIN`, `ROLLBACK`): its rows, each within
    /// `--max-reply-bytes` together.
    pub fn rows(&mut self, statement: &str) -> Result<Answer> {
        self.allowed(statement)?;
        let mut out = BytesMut::new();
        frontend::query(statement, &mut out).map_err(|e| self.error(statement, &e.to_string()))?;
        self.send(&out, statement)?;
        let mut answer = Answer::default();
        let mut held = 0u64;
        let mut failed = None;
        loop {
            match self.receive(statement)? {
                Message::DataRow(body) => {
                    held += body.buffer().len() as u64;
                    if held > self.max_message {
                        return Err(self.error(
                            statement,
                            &format!(
                                "the answer holds more than --max-reply-bytes ({})",
                                crate::capture::size(self.max_message)
                            ),
                        ));
                    }
                    let row = row_of(&body).map_err(|why| self.error(statement, &why))?;
                    answer.rows.push(row);
                }
                Message::ErrorResponse(body) => failed = Some(server_error(&body)),
                Message::ParameterStatus(body) => self.parameter(&body),
                Message::RowDescription(body) => {
                    answer.columns = columns_of(&body).map_err(|why| self.error(statement, &why))?;
                }
                Message::CommandComplete(_)
                | Message::EmptyQueryResponse
                | Message::NoticeResponse(_)
                | Message::NotificationResponse(_) => {}
                Message::CopyOutResponse(_) | Message::CopyData(_) | Message::CopyDone => {
                    return Err(self.error(statement, "the server began a COPY where rows were expected"));
                }
                Message::ReadyForQuery(_) => break,
                _ => return Err(self.error(statement, "an unexpected message in the answer")),
            }
        }
        match failed {
            Some(message) => Err(self.error(statement, &message)),
            None => Ok(answer),
        }
    }

    /// `COPY (...) TO STDOUT`: each row's bytes handed to `each` as it arrives (one row a
    /// message: PostgreSQL sends a row a `CopyData`); the number of rows.
    pub fn copy_out(
        &mut self,
        statement: &str,
        mut each: impl FnMut(&[u8]) -> std::result::Result<(), String>,
    ) -> Result<u64> {
        self.allowed(statement)?;
        let mut out = BytesMut::new();
        frontend::query(statement, &mut out).map_err(|e| self.error(statement, &e.to_string()))?;
        self.send(&out, statement)?;
        let mut count = 0u64;
        let mut failed = None;
        loop {
            match self.receive(statement)? {
                Message::CopyData(body) => {
                    if failed.is_none() {
                        match each(body.data()) {
                            Ok(()) => count += 1,
                            // The rest of the rows are read and dropped: the session stays in step.
                            Err(why) => failed = Some(why),
                        }
                    }
                }
                Message::ErrorResponse(body) => {
                    failed.get_or_insert(server_error(&body));
                }
                Message::ParameterStatus(body) => self.parameter(&body),
                Message::CopyOutResponse(_)
                | Message::CopyDone
                | Message::CommandComplete(_)
                | Message::NoticeResponse(_)
                | Message::NotificationResponse(_) => {}
                Message::ReadyForQuery(_) => break,
                _ => return Err(self.error(statement, "an unexpected message in a COPY")),
            }
        }
        match failed {
            Some(message) => Err(self.error(statement, &message)),
            None => Ok(count),
        }
    }

    /// Says goodbye; the transaction, if one is open, ends with the session (rolled back).
    pub fn close(mut self) {
        let mut out = BytesMut::new();
        frontend::terminate(&mut out);
        let _ = self.connection.get_mut().write_all(&out);
        let _ = self.connection.get_mut().flush();
    }

    fn send(&mut self, bytes: &[u8], statement: &str) -> Result<()> {
        let stream = self.connection.get_mut();
        stream.write_all(bytes).and_then(|()| stream.flush()).map_err(|e| self.failed(statement, Failure::Io(e)))
    }

    fn receive(&mut self, statement: &str) -> Result<Message> {
        self.read_message().map_err(|why| self.failed(statement, why))
    }

    fn read_message(&mut self) -> std::result::Result<Message, Failure> {
        read_message(&mut self.connection, self.max_message)
    }

    fn failed(&self, statement: &str, why: Failure) -> Error {
        let message = match why {
            Failure::Io(error) if is_timeout(error.kind()) => timed_out(&self.clock, "the answer"),
            Failure::Io(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => {
                "the server closed the connection".to_string()
            }
            Failure::Io(error) => error.to_string(),
            Failure::Protocol(text) => text,
        };
        self.error(statement, &message)
    }
}

/// One message of the server, its length checked against `max_message` before its body is read.
pub(crate) fn read_message(input: &mut impl Read, max_message: u64) -> std::result::Result<Message, Failure> {
    let mut header = [0u8; HEADER];
    input.read_exact(&mut header).map_err(Failure::Io)?;
    let length = i32::from_be_bytes([header[1], header[2], header[3], header[4]]);
    let body = u64::try_from(length)
        .ok()
        .and_then(|n| n.checked_sub(4))
        .ok_or_else(|| Failure::Protocol(format!("a message of length {length}: is this a PostgreSQL server?")))?;
    if body > max_message {
        return Err(Failure::Protocol(format!(
            "a message of {} (type {}), more than --max-reply-bytes ({}): refused before it is read",
            crate::capture::size(body),
            visible(&String::from_utf8_lossy(&header[..1])),
            crate::capture::size(max_message)
        )));
    }
    let body = usize::try_from(body).map_err(|_| Failure::Protocol("a message too long".into()))?;
    let mut buffer = BytesMut::with_capacity(HEADER + body);
    buffer.extend_from_slice(&header);
    buffer.resize(HEADER + body, 0);
    input.read_exact(&mut buffer[HEADER..]).map_err(Failure::Io)?;
    match Message::parse(&mut buffer) {
        Ok(Some(message)) => Ok(message),
        Ok(None) => Err(Failure::Protocol("a message cut short".into())),
        Err(e) => Err(Failure::Protocol(format!("not a message of PostgreSQL's protocol ({e})"))),
    }
}

/// A `DataRow`'s cells as text (`None`: NULL), or why it is not a row.
pub(crate) fn row_of(body: &postgres_protocol::message::backend::DataRowBody) -> std::result::Result<Row, String> {
    body.ranges()
        .map(|range| Ok(range.map(|r| String::from_utf8_lossy(&body.buffer()[r]).into_owned())))
        .collect()
        .map_err(|e| format!("a malformed row: {e}"))
}

/// A `RowDescription`'s columns, or why it is not one.
pub(crate) fn columns_of(
    body: &postgres_protocol::message::backend::RowDescriptionBody,
) -> std::result::Result<Vec<(String, u32)>, String> {
    body.fields()
        .map(|field| Ok((field.name().to_string(), field.type_oid())))
        .collect()
        .map_err(|e| format!("a malformed row description: {e}"))
}

/// What the fuzz target (and nothing else) makes of one message: each part capture reads of it.
#[doc(hidden)]
pub fn digest(input: &mut impl Read, max_message: u64) -> std::result::Result<String, String> {
    let message = read_message(input, max_message).map_err(|failure| match failure {
        Failure::Io(error) => error.to_string(),
        Failure::Protocol(text) => text,
    })?;
    Ok(match message {
        Message::DataRow(body) => format!("{:?}", row_of(&body)?),
        Message::RowDescription(body) => format!("{:?}", columns_of(&body)?),
        Message::ErrorResponse(body) => server_error(&body),
        Message::ParameterStatus(body) => format!("{:?} {:?}", body.name().ok(), body.value().ok()),
        Message::CopyData(body) => format!("{} bytes", body.data().len()),
        Message::CommandComplete(body) => format!("{:?}", body.tag().ok()),
        Message::AuthenticationSasl(body) => {
            let mechanisms: std::result::Result<Vec<String>, _> =
                body.mechanisms().map(|m| Ok(m.to_string())).collect();
            format!("{:?}", mechanisms.map_err(|e| e.to_string())?)
        }
        Message::AuthenticationMd5Password(body) => format!("{:?}", body.salt()),
        _ => String::from("other"),
    })
}

/// A server's `ErrorResponse` as a message quotes it: `ERROR 42P01: relation "x" does not exist
/// (hint: ...)`, each part clipped.
fn server_error(body: &postgres_protocol::message::backend::ErrorResponseBody) -> String {
    use std::fmt::Write;
    let mut fields = body.fields();
    let (mut severity, mut code, mut message, mut detail, mut hint) = (None, None, None, None, None);
    while let Ok(Some(field)) = fields.next() {
        let value = clip(&String::from_utf8_lossy(field.value_bytes()), 1000);
        match field.type_() {
            b'V' => severity = Some(value),
            b'S' if severity.is_none() => severity = Some(value),
            b'C' => code = Some(value),
            b'M' => message = Some(value),
            b'D' => detail = Some(value),
            b'H' => hint = Some(value),
            _ => {}
        }
    }
    let mut text = format!(
        "{} {}: {}",
        severity.unwrap_or_else(|| "ERROR".into()),
        code.unwrap_or_else(|| "?".into()),
        message.unwrap_or_default()
    );
    if let Some(detail) = detail {
        let _ = write!(text, " ({detail})");
    }
    if let Some(hint) = hint {
        let _ = write!(text, " (hint: {hint})");
    }
    text
}

/// A PostgreSQL capture's words for `client::timed_out`.
fn timed_out(clock: &Clock, what: &str) -> String {
    client::timed_out(clock, what, "PostgreSQL", "a big table or a slow server, or narrow --since/--until")
}

/// A statement as an error shows it: its first 200 characters, on one line.
fn shown(statement: &str) -> String {
    clip(&statement.split_whitespace().collect::<Vec<_>>().join(" "), 200)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn only_reading_statements_are_let_through() {
        let allowed = is_reading;
        for read in [
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
            "SELECT 1",
            "COPY (SELECT * FROM bullmq.event) TO STDOUT WITH (FORMAT csv, HEADER)",
            "ROLLBACK",
            "SHOW server_version",
        ] {
            assert!(allowed(read), "{read}");
        }
        for write in [
            "BEGIN",
            "INSERT INTO x VALUES (1)",
            "UPDATE bullmq.job SET state = 'x'",
            "DELETE FROM bullmq.event",
            "COPY bullmq.job FROM STDIN",
            "COPY (SELECT 1) TO '/tmp/x'",
            "COMMIT",
            "CREATE TABLE x ()",
            "SET default_transaction_read_only = off",
            "WITH d AS (DELETE FROM x RETURNING *) SELECT * FROM d",
        ] {
            assert!(!allowed(write), "{write}");
        }
    }

    #[test]
    fn the_session_is_read_only_before_any_statement() {
        let target = super::super::target::PgTarget::parse(
            "postgres://u@h/db",
            &super::super::target::Environment { os_user: None, pgpassword: None, passfile: None },
        )
        .unwrap();
        let limits =
            Limits { timeout: Duration::from_secs(10), deadline: Duration::from_secs(300), max_reply_bytes: 1 << 20 };
        let settings = startup_settings(&target, &limits);
        assert!(settings.contains(&("default_transaction_read_only", "on".into())));
        assert!(settings.contains(&("TimeZone", "UTC".into())));
        assert!(settings.contains(&("statement_timeout", "300000".into())));
    }
}
