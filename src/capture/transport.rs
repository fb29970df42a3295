//! The connection under the replies: TCP, TLS over TCP (`rediss://`) or a Unix socket, with both
//! of capture's time limits on every read and write.
//!
//! `--timeout` bounds each wait for the server; `--deadline` bounds the whole capture. A server
//! that answers one byte every two seconds never trips the first (issue 34: it kept a capture
//! alive for ever), so each read waits at most the smaller of the timeout and what is left of the
//! deadline, and the `Clock` remembers which of the two it was, for the message.

use std::cell::Cell;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::target::{Address, Target};

/// Which limit a wait was given: the one that fired, when it ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Timeout,
    Deadline,
}

/// The capture's two time limits, shared by the socket and the reader that words the messages.
pub struct Clock {
    pub timeout: Duration,
    pub deadline: Duration,
    started: Instant,
    armed: Cell<Limit>,
    fired: Cell<Option<Limit>>,
}

impl Clock {
    pub fn new(timeout: Duration, deadline: Duration) -> Rc<Clock> {
        Rc::new(Clock {
            timeout,
            deadline,
            started: Instant::now(),
            armed: Cell::new(Limit::Timeout),
            fired: Cell::new(None),
        })
    }

    /// How long the next wait may be, or a timed-out error once the deadline has passed.
    pub fn wait(&self) -> io::Result<Duration> {
        let left = self.deadline.saturating_sub(self.started.elapsed());
        if left.is_zero() {
            self.fired.set(Some(Limit::Deadline));
            return Err(io::Error::new(io::ErrorKind::TimedOut, "the deadline has passed"));
        }
        self.armed.set(if left < self.timeout { Limit::Deadline } else { Limit::Timeout });
        // A socket takes no zero timeout (it would mean none), and rounds down below 1 µs.
        Ok(left.min(self.timeout).max(Duration::from_millis(1)))
    }

    /// Notes which limit ran out when `error` is a socket's timeout.
    fn note(&self, error: io::Error) -> io::Error {
        if matches!(error.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) {
            self.fired.set(Some(self.armed.get()));
        }
        error
    }

    /// The limit that ran out, if one did.
    pub fn fired(&self) -> Option<Limit> {
        self.fired.get()
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

/// A socket whose every read and write is bounded by the clock.
pub struct Timed<S> {
    socket: S,
    clock: Rc<Clock>,
}

trait Socket: Read + Write {
    fn set_timeouts(&self, wait: Duration) -> io::Result<()>;
}

impl Socket for TcpStream {
    fn set_timeouts(&self, wait: Duration) -> io::Result<()> {
        self.set_read_timeout(Some(wait))?;
        self.set_write_timeout(Some(wait))
    }
}

impl Socket for UnixStream {
    fn set_timeouts(&self, wait: Duration) -> io::Result<()> {
        self.set_read_timeout(Some(wait))?;
        self.set_write_timeout(Some(wait))
    }
}

impl<S: Socket> Read for Timed<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let wait = self.clock.wait()?;
        self.socket.set_timeouts(wait)?;
        self.socket.read(buf).map_err(|e| self.clock.note(e))
    }
}

impl<S: Socket> Write for Timed<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let wait = self.clock.wait()?;
        self.socket.set_timeouts(wait)?;
        self.socket.write(buf).map_err(|e| self.clock.note(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.socket.flush()
    }
}

/// The connection, whichever kind the URL asked for.
pub enum Stream {
    Plain(Timed<TcpStream>),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, Timed<TcpStream>>>),
    Unix(Timed<UnixStream>),
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf),
            Stream::Unix(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf),
            Stream::Unix(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
            Stream::Unix(s) => s.flush(),
        }
    }
}

/// Why a connection could not be made: the step, and what happened.
pub struct ConnectError {
    pub message: String,
    /// An I/O error that may be a timeout (the clock says which limit).
    pub io: Option<io::ErrorKind>,
}

impl ConnectError {
    fn io(step: &str, error: &io::Error) -> ConnectError {
        ConnectError { message: format!("{step}{error}"), io: Some(error.kind()) }
    }
}

/// The addresses of `host`, within the clock's limits: the system's resolver has no timeout of
/// its own (a resolver that never answers would hold the run past `--deadline`), so it asks on a
/// thread of its own, which is left behind when the limit runs out.
fn resolve(host: &str, port: u16, clock: &Clock) -> Result<Vec<std::net::SocketAddr>, ConnectError> {
    let wait = clock.wait().map_err(|e| ConnectError::io("", &e))?;
    let (sender, receiver) = std::sync::mpsc::channel();
    let name = host.to_string();
    std::thread::spawn(move || {
        let _ = sender.send((name.as_str(), port).to_socket_addrs().map(Iterator::collect::<Vec<_>>));
    });
    let found = receiver
        .recv_timeout(wait)
        .unwrap_or_else(|_| Err(clock.note(io::Error::new(io::ErrorKind::TimedOut, "no answer from the resolver"))));
    found.map_err(|e| ConnectError::io(&format!("cannot resolve {host}: "), &e))
}

/// Connects to `target` within the clock's limits; with TLS, the handshake (and so the check of
/// the server's certificate) is done here, before any command.
pub fn connect(target: &Target, clock: &Rc<Clock>) -> Result<Stream, ConnectError> {
    let (host, ip, port, tls) = match &target.address {
        Address::Unix(path) => return unix(path, clock),
        Address::Tcp { host, ip, port, tls } => (host, *ip, *port, *tls),
    };
    let timed = tcp(host, port, clock)?;
    if !tls {
        return Ok(Stream::Plain(timed));
    }
    secure(
        timed,
        host,
        ip,
        tls_config(Check::Full, None)?,
        "rediss:// trusts the system's CA certificates; SSL_CERT_FILE=FILE names a CA file of your own",
    )
}

/// A Unix socket at `path`, bounded by the clock.
pub fn unix(path: &std::path::Path, clock: &Rc<Clock>) -> Result<Stream, ConnectError> {
    let socket = UnixStream::connect(path).map_err(|e| ConnectError::io("", &e))?;
    Ok(Stream::Unix(Timed { socket, clock: clock.clone() }))
}

/// A TCP connection to the first address of `host` that answers, within the clock's limits.
pub fn tcp(host: &str, port: u16, clock: &Rc<Clock>) -> Result<Timed<TcpStream>, ConnectError> {
    let addresses = resolve(host, port, clock)?;
    let mut last = None;
    let mut socket = None;
    for address in addresses {
        let wait = clock.wait().map_err(|e| ConnectError::io("", &e))?;
        match TcpStream::connect_timeout(&address, wait) {
            Ok(connected) => {
                socket = Some(connected);
                break;
            }
            Err(error) => last = Some(clock.note(error)),
        }
    }
    let Some(socket) = socket else {
        return Err(match last {
            Some(error) => ConnectError::io("", &error),
            None => ConnectError { message: format!("{host} has no address"), io: None },
        });
    };
    // Commands are small and each waits for its reply: no Nagle delay.
    let _ = socket.set_nodelay(true);
    Ok(Timed { socket, clock: clock.clone() })
}

/// TLS over a connection made by `tcp`: the handshake (and so the check of the server's
/// certificate, as `config` asks) is done here, before any command. A refused certificate is
/// said with `trust`: how to make the client trust the server's CA.
pub fn secure(
    timed: Timed<TcpStream>,
    host: &str,
    ip: bool,
    config: Arc<rustls::ClientConfig>,
    trust: &str,
) -> Result<Stream, ConnectError> {
    let name = if ip {
        rustls::pki_types::ServerName::IpAddress(
            host.parse::<std::net::IpAddr>()
                .map_err(|e| ConnectError { message: format!("{host}: {e}"), io: None })?
                .into(),
        )
    } else {
        rustls::pki_types::ServerName::try_from(host.to_string()).map_err(|e| ConnectError {
            message: format!("{host} is not a name a TLS certificate can hold ({e})"),
            io: None,
        })?
    };
    let connection = rustls::ClientConnection::new(config, name)
        .map_err(|e| ConnectError { message: format!("TLS: {e}"), io: None })?;
    let mut stream = rustls::StreamOwned::new(connection, timed);
    while stream.conn.is_handshaking() {
        stream.conn.complete_io(&mut stream.sock).map_err(|e| certificate_or(&e, trust))?;
    }
    Ok(Stream::Tls(Box::new(stream)))
}

/// A TLS failure as the user can act on it: a refused certificate says how to trust a CA.
fn certificate_or(error: &io::Error, trust: &str) -> ConnectError {
    let text = error.to_string();
    if text.contains("certificate") {
        ConnectError {
            message: format!("TLS: {text}: the TLS certificate of the server was refused ({trust})"),
            io: None,
        }
    } else {
        ConnectError::io("TLS: ", error)
    }
}

/// How much of the server's certificate TLS checks: all of it (its chain to a trusted CA and
/// that it names the host), its chain alone (PostgreSQL's `sslmode=verify-ca`), or nothing but
/// the handshake's own signatures (`sslmode=require` and `prefer`, as libpq does: encrypted,
/// but not who the server is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    Full,
    Chain,
    Encryption,
}

/// The system's CA certificates (or those of SSL_CERT_FILE / SSL_CERT_DIR, or the PEM file
/// `roots` names), with ring's crypto, checking as much as `check` says.
pub fn tls_config(
    check: Check,
    roots_file: Option<&std::path::Path>,
) -> Result<Arc<rustls::ClientConfig>, ConnectError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| ConnectError { message: format!("TLS: {e}"), io: None })?;
    if check == Check::Encryption {
        let verifier = Arc::new(AnyCertificate(provider));
        return Ok(Arc::new(builder.dangerous().with_custom_certificate_verifier(verifier).with_no_client_auth()));
    }
    let roots = Arc::new(root_store(roots_file)?);
    if check == Check::Chain {
        let inner = rustls::client::WebPkiServerVerifier::builder_with_provider(roots, provider)
            .build()
            .map_err(|e| ConnectError { message: format!("TLS: {e}"), io: None })?;
        let verifier = Arc::new(ChainOnly(inner));
        return Ok(Arc::new(builder.dangerous().with_custom_certificate_verifier(verifier).with_no_client_auth()));
    }
    Ok(Arc::new(builder.with_root_certificates(roots).with_no_client_auth()))
}

fn root_store(roots_file: Option<&std::path::Path>) -> Result<rustls::RootCertStore, ConnectError> {
    let mut roots = rustls::RootCertStore::empty();
    if let Some(path) = roots_file {
        use rustls::pki_types::pem::PemObject;
        let certs = rustls::pki_types::CertificateDer::pem_file_iter(path)
            .and_then(Iterator::collect::<Result<Vec<_>, _>>)
            .map_err(|e| ConnectError {
                message: format!("TLS: cannot read CA certificates from {}: {e}", path.display()),
                io: None,
            })?;
        let (added, _) = roots.add_parsable_certificates(certs);
        if added == 0 {
            return Err(ConnectError {
                message: format!("TLS: {} holds no CA certificate (expected PEM)", path.display()),
                io: None,
            });
        }
        return Ok(roots);
    }
    let found = rustls_native_certs::load_native_certs();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let why: Vec<String> = found.errors.iter().map(ToString::to_string).collect();
        return Err(ConnectError {
            message: format!(
                "TLS: no CA certificate to check the server's against ({}): SSL_CERT_FILE=FILE names a CA file",
                if why.is_empty() { "none found".to_string() } else { why.join("; ") }
            ),
            io: None,
        });
    }
    Ok(roots)
}

/// `Check::Encryption`: any certificate, but the handshake's signatures checked with it (so the
/// connection is encrypted to whoever holds the certificate's key).
#[derive(Debug)]
struct AnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `Check::Chain`: the chain to a trusted CA checked, the name in the certificate not.
#[derive(Debug)]
struct ChainOnly(Arc<rustls::client::WebPkiServerVerifier>);

impl rustls::client::danger::ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &rustls::pki_types::CertificateDer<'_>,
        intermediates: &[rustls::pki_types::CertificateDer<'_>],
        server_name: &rustls::pki_types::ServerName<'_>,
        ocsp_response: &[u8],
        now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::NotValidForName | rustls::CertificateError::NotValidForNameContext { .. },
            )) => Ok(rustls::client::danger::ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
