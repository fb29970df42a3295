//! The server `--postgres` names, read as libpq reads a connection URI:
//! `postgres[ql]://[user[:password]@][host][:port][/dbname][?param=value&...]`, with a Unix
//! socket's directory as `?host=/var/run/postgresql` (or an empty host: the default socket
//! directories). Of libpq's parameters capture takes `host`, `port`, `user`, `password`,
//! `dbname`, `sslmode` and `sslrootcert`; any other is refused by name rather than ignored (it
//! might have changed what is read). The password may also come from `PGPASSWORD` or the
//! password file (`PGPASSFILE`, else `~/.pgpass`), as libpq takes it. The credentials are never
//! shown: `shown()` and every message name the server as `postgres://host:port/dbname`.

use std::path::{Path, PathBuf};

/// PostgreSQL's port when the URI gives none.
pub const DEFAULT_PORT: u16 = 5432;

/// Where libpq looks for a server's socket when no host is given (Debian and most packages
/// first, then PostgreSQL's own default).
const SOCKET_DIRS: &[&str] = &["/var/run/postgresql", "/tmp"];

/// How the connection is encrypted, PostgreSQL's `sslmode` (`allow` is read as `prefer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// Where the server is.
#[derive(Debug, Clone, PartialEq)]
pub enum Address {
    Tcp {
        host: String,
        ip: bool,
        port: u16,
    },
    /// The socket file (`<dir>/.s.PGSQL.<port>`).
    Unix {
        socket: PathBuf,
        port: u16,
    },
}

/// The server and how to log in to it. Its `Debug` shows what `shown` does: never the password.
#[derive(Clone)]
pub struct PgTarget {
    pub address: Address,
    pub user: String,
    pub password: Option<String>,
    /// Where the password came from, for the record: `uri`, `PGPASSWORD`, `password file`.
    pub password_from: Option<&'static str>,
    pub dbname: String,
    pub sslmode: SslMode,
    pub sslrootcert: Option<PathBuf>,
}

impl std::fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgTarget({}, password: {})", self.shown(), self.password.is_some())
    }
}

/// What the environment gives a URI that leaves a part out (libpq's defaults).
pub struct Environment {
    pub os_user: Option<String>,
    pub pgpassword: Option<String>,
    pub passfile: Option<PathBuf>,
}

impl Environment {
    pub fn of_process() -> Environment {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        Environment {
            os_user: var("USER").or_else(|| var("LOGNAME")).or_else(login_name),
            pgpassword: var("PGPASSWORD"),
            passfile: var("PGPASSFILE")
                .map(PathBuf::from)
                .or_else(|| var("HOME").map(|home| Path::new(&home).join(".pgpass"))),
        }
    }
}

/// The name of the user this process runs as, from the password file (libpq asks `getpwuid`; a
/// process without USER or LOGNAME in its environment, a container's or a cron job's, has one).
fn login_name() -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let uid = std::fs::metadata("/proc/self").ok()?.uid().to_string();
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        (fields.len() > 2 && fields[2] == uid).then(|| fields[0].to_string())
    })
}

impl PgTarget {
    /// The URI read, or why it is not one (a message without the credentials).
    pub fn parse(text: &str, env: &Environment) -> Result<PgTarget, String> {
        let url = url::Url::parse(text).map_err(|e| e.to_string())?;
        if !matches!(url.scheme(), "postgres" | "postgresql") {
            return Err(format!("the scheme {}:// is neither postgres:// nor postgresql://", url.scheme()));
        }
        if let Some(fragment) = url.fragment() {
            return Err(format!("#{fragment}: a connection URI has no fragment"));
        }
        let decode = |part: &str, what: &str| -> Result<String, String> {
            percent_encoding::percent_decode_str(part)
                .decode_utf8()
                .map(std::borrow::Cow::into_owned)
                .map_err(|_| format!("its {what} is not UTF-8 once percent-decoded"))
        };
        let mut host_param = None;
        let mut port_param = None;
        let mut user = (!url.username().is_empty()).then(|| decode(url.username(), "user")).transpose()?;
        let mut password = url.password().map(|p| decode(p, "password")).transpose()?;
        let mut dbname = match url.path().trim_start_matches('/') {
            "" => None,
            path => Some(decode(path, "database name")?),
        };
        let mut sslmode = None;
        let mut sslrootcert = None;
        for (key, value) in url.query_pairs() {
            let value = value.into_owned();
            match key.as_ref() {
                "host" => host_param = Some(value),
                "port" => port_param = Some(value),
                "user" => user = Some(value),
                "password" => password = Some(value),
                "dbname" => dbname = Some(value),
                "sslmode" => {
                    sslmode = Some(match value.as_str() {
                        "disable" => SslMode::Disable,
                        "allow" | "prefer" => SslMode::Prefer,
                        "require" => SslMode::Require,
                        "verify-ca" => SslMode::VerifyCa,
                        "verify-full" => SslMode::VerifyFull,
                        other => {
                            return Err(format!(
                                "?sslmode={other}: expected disable, allow, prefer, require, verify-ca or verify-full"
                            ));
                        }
                    });
                }
                "sslrootcert" => sslrootcert = Some(PathBuf::from(value)),
                // Harmless to leave out: they change no row capture reads.
                "application_name" | "connect_timeout" | "fallback_application_name" => {}
                other => {
                    return Err(format!(
                        "?{other}=: a parameter capture does not take (it takes host, port, user, password, dbname, sslmode, sslrootcert): leave it out rather than have it ignored"
                    ));
                }
            }
        }
        let port = match port_param.or_else(|| url.port().map(|p| p.to_string())) {
            Some(port) => {
                port.parse::<u16>().ok().filter(|p| *p > 0).ok_or(format!("port {port} is not a port number"))?
            }
            None => DEFAULT_PORT,
        };
        let uri_host = match url.host() {
            // A URI of a scheme the URL standard does not know keeps its host as text, an IP
            // address included (IPv6 in its brackets).
            Some(url::Host::Domain(name)) if !name.is_empty() => {
                let host = decode(name, "host")?;
                let bare = host.trim_start_matches('[').trim_end_matches(']').to_string();
                let ip = bare.parse::<std::net::IpAddr>().is_ok();
                Some(if ip { (bare, true) } else { (host, false) })
            }
            Some(url::Host::Ipv4(ip)) => Some((ip.to_string(), true)),
            Some(url::Host::Ipv6(ip)) => Some((ip.to_string(), true)),
            _ => None,
        };
        let address = match host_param.map(|h| (h.clone(), h.parse::<std::net::IpAddr>().is_ok())).or(uri_host) {
            Some((host, _)) if host.starts_with('/') => {
                Address::Unix { socket: Path::new(&host).join(format!(".s.PGSQL.{port}")), port }
            }
            Some((host, ip)) => {
                if host == "0.0.0.0" || host == "::" {
                    return Err(format!("{host} is a wildcard address, not a server to connect to"));
                }
                Address::Tcp { host, ip, port }
            }
            None => {
                let socket = SOCKET_DIRS
                    .iter()
                    .map(|dir| Path::new(dir).join(format!(".s.PGSQL.{port}")))
                    .find(|socket| socket.exists())
                    .ok_or_else(|| {
                        format!(
                            "no host, and no server socket .s.PGSQL.{port} in {}: name the host (postgres://HOST/DB) or the socket's directory (?host=/path)",
                            SOCKET_DIRS.join(" or ")
                        )
                    })?;
                Address::Unix { socket, port }
            }
        };
        let user = user.or_else(|| env.os_user.clone()).ok_or(
            "no user: name one (postgres://USER@HOST/DB), as libpq would take it from the login name, which this process has not",
        )?;
        let dbname = dbname.unwrap_or_else(|| user.clone());
        let mut password_from = password.as_ref().map(|_| "uri");
        if password.is_none() {
            if let Some(from_env) = &env.pgpassword {
                password = Some(from_env.clone());
                password_from = Some("PGPASSWORD");
            } else if let Some(file) = &env.passfile
                && let Some(found) = passfile_lookup(file, &address, &dbname, &user)
            {
                password = Some(found);
                password_from = Some("password file");
            }
        }
        let sslmode = match (sslmode, &address) {
            (Some(mode), _) => mode,
            (None, Address::Unix { .. }) => SslMode::Disable,
            (None, Address::Tcp { .. }) => SslMode::Prefer,
        };
        if matches!(address, Address::Unix { .. })
            && matches!(sslmode, SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull)
        {
            return Err(format!("?sslmode={}: a Unix socket carries no TLS", sslmode.name()));
        }
        Ok(PgTarget { address, user, password, password_from, dbname, sslmode, sslrootcert })
    }

    /// The server as the user may see it: `postgres://host:port/dbname`, or
    /// `postgres:///dbname?host=/dir` for a socket, never credentials.
    pub fn shown(&self) -> String {
        match &self.address {
            Address::Tcp { host, ip, port } => {
                let host = if *ip && host.contains(':') { format!("[{host}]") } else { host.clone() };
                format!("postgres://{host}:{port}/{}", self.dbname)
            }
            Address::Unix { socket, port } => format!(
                "postgres:///{}?host={}&port={port}",
                self.dbname,
                socket.parent().map_or_else(String::new, |dir| dir.display().to_string())
            ),
        }
    }
}

/// The password the password file gives for this server, database and user: the first line whose
/// five fields (`host:port:database:user:password`, `*` matching anything, `\:` and `\\` escaped)
/// match, as libpq reads it; a file others may read is passed over, as libpq does.
fn passfile_lookup(file: &Path, address: &Address, dbname: &str, user: &str) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(file).ok()?;
    if !meta.is_file() || meta.permissions().mode() & 0o077 != 0 || meta.len() > 1 << 20 {
        return None;
    }
    let text = std::fs::read_to_string(file).ok()?;
    let (host, port) = match address {
        Address::Tcp { host, port, .. } => (host.clone(), *port),
        // libpq matches a socket connection with `localhost`.
        Address::Unix { port, .. } => ("localhost".to_string(), *port),
    };
    let port = port.to_string();
    text.lines().filter(|line| !line.starts_with('#')).find_map(|line| {
        let fields = split_passfile_line(line)?;
        let matches = |field: &str, value: &str| field == "*" || field == value;
        (matches(&fields[0], &host)
            && matches(&fields[1], &port)
            && matches(&fields[2], dbname)
            && matches(&fields[3], user))
        .then(|| fields[4].clone())
    })
}

fn split_passfile_line(line: &str) -> Option<[String; 5]> {
    let mut fields: Vec<String> = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => fields.last_mut()?.push(chars.next().unwrap_or('\\')),
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut()?.push(c),
        }
    }
    fields.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Environment {
        Environment { os_user: Some("oncall".into()), pgpassword: None, passfile: None }
    }

    #[test]
    fn a_uri_gives_host_port_user_database_and_its_password_is_never_shown() {
        let target =
            PgTarget::parse("postgres://app:s%3Acret@db.internal:6543/queues?sslmode=require", &env()).unwrap();
        assert_eq!(target.address, Address::Tcp { host: "db.internal".into(), ip: false, port: 6543 });
        assert_eq!((target.user.as_str(), target.dbname.as_str()), ("app", "queues"));
        assert_eq!(target.password.as_deref(), Some("s:cret"));
        assert_eq!(target.sslmode, SslMode::Require);
        assert_eq!(target.shown(), "postgres://db.internal:6543/queues");
        assert!(!format!("{target:?}").contains("cret"));
    }

    #[test]
    fn libpq_defaults_fill_what_the_uri_leaves_out() {
        let target = PgTarget::parse("postgresql://10.0.0.5", &env()).unwrap();
        assert_eq!(target.address, Address::Tcp { host: "10.0.0.5".into(), ip: true, port: 5432 });
        assert_eq!((target.user.as_str(), target.dbname.as_str()), ("oncall", "oncall"));
        assert_eq!(target.sslmode, SslMode::Prefer);
        let with_env = Environment { pgpassword: Some("from-env".into()), ..env() };
        let target = PgTarget::parse("postgres://app@10.0.0.5/q", &with_env).unwrap();
        assert_eq!((target.password.as_deref(), target.password_from), (Some("from-env"), Some("PGPASSWORD")));
    }

    #[test]
    fn a_socket_directory_is_a_host_parameter() {
        let target = PgTarget::parse("postgres:///queues?host=/run/pg&port=5433", &env()).unwrap();
        assert_eq!(target.address, Address::Unix { socket: "/run/pg/.s.PGSQL.5433".into(), port: 5433 });
        assert_eq!(target.sslmode, SslMode::Disable);
        assert!(PgTarget::parse("postgres:///q?host=/run/pg&sslmode=require", &env()).is_err());
    }

    #[test]
    fn a_parameter_capture_does_not_take_is_refused_by_name() {
        let error = PgTarget::parse("postgres://h/db?options=-csearch_path%3Dother", &env()).unwrap_err();
        assert!(error.contains("?options="), "{error}");
        let error = PgTarget::parse("postgres://h/db?sslmode=sometimes", &env()).unwrap_err();
        assert!(error.contains("verify-full"), "{error}");
        assert!(PgTarget::parse("redis://h", &env()).unwrap_err().contains("postgres://"));
    }

    #[test]
    fn the_password_file_is_read_as_libpq_reads_it_and_passed_over_when_others_may_read_it() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgpass");
        std::fs::write(&file, "# comment\nother:*:*:*:no\ndb.internal:5432:*:app:pa\\:ss\n*:*:*:*:fallback\n").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        let with_file = Environment { passfile: Some(file.clone()), ..env() };
        let target = PgTarget::parse("postgres://app@db.internal/queues", &with_file).unwrap();
        assert_eq!((target.password.as_deref(), target.password_from), (Some("pa:ss"), Some("password file")));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let target = PgTarget::parse("postgres://app@db.internal/queues", &with_file).unwrap();
        assert_eq!(target.password, None);
    }
}
