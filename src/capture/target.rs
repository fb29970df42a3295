//! The server `--redis` names: `redis://[user:password@]host[:port][/db]`, `rediss://` for TLS,
//! or a Unix socket (`redis+unix:///path?db=N`, `unix:///path`), read the way redis-rs and the
//! other Redis clients read them (a percent-encoded user and password; `?user=`, `?pass=`, `?db=`
//! for a socket). The credentials are kept for `AUTH` and never shown: `shown()` and every message
//! name the server as `redis://host:port/db`.

use std::path::PathBuf;

/// Redis' port when the URL gives none.
const DEFAULT_PORT: u16 = 6379;

/// Where the server is.
#[derive(Clone, PartialEq)]
pub enum Address {
    /// A host name or an IP address (without IPv6's brackets), a port, and whether to speak TLS.
    Tcp {
        host: String,
        ip: bool,
        port: u16,
        tls: bool,
    },
    Unix(PathBuf),
}

/// The server and how to log in to it. Its `Debug` shows what `shown` does: never the password.
#[derive(Clone)]
pub struct Target {
    pub address: Address,
    pub db: i64,
    pub user: Option<String>,
    pub password: Option<String>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Target({}, auth: {})", self.shown(), self.auth_kind())
    }
}

impl Target {
    /// The URL read, or why it is not a Redis URL (a message without the credentials).
    pub fn parse(text: &str) -> Result<Target, String> {
        let url = url::Url::parse(text).map_err(|e| e.to_string())?;
        let decode = |part: &str, what: &str| -> Result<String, String> {
            percent_encoding::percent_decode_str(part)
                .decode_utf8()
                .map(std::borrow::Cow::into_owned)
                .map_err(|_| format!("its {what} is not UTF-8 once percent-decoded"))
        };
        let query: Vec<(String, String)> = url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
        let param = |name: &str| query.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        if let Some(protocol) = param("protocol")
            && !matches!(protocol.as_str(), "2" | "resp2")
        {
            return Err(format!("?protocol={protocol}: capture speaks RESP2 (it sends no HELLO)"));
        }
        match url.scheme() {
            "redis" | "rediss" | "valkey" | "valkeys" => {
                let tls = matches!(url.scheme(), "rediss" | "valkeys");
                let (host, ip) = match url.host() {
                    Some(url::Host::Domain(name)) => (name.to_string(), false),
                    Some(url::Host::Ipv4(ip)) => (ip.to_string(), true),
                    Some(url::Host::Ipv6(ip)) => (ip.to_string(), true),
                    None => return Err("no host".into()),
                };
                if host == "0.0.0.0" || host == "::" {
                    return Err(format!("{host} is a wildcard address, not a server to connect to"));
                }
                if let Some(fragment) = url.fragment() {
                    return Err(format!(
                        "#{fragment}: capture always checks the server's certificate (SSL_CERT_FILE=FILE names a CA file of your own)"
                    ));
                }
                let db = match url.path().trim_matches('/') {
                    "" => 0,
                    path => path.parse().map_err(|_| format!("/{path} is not a database number"))?,
                };
                let user = (!url.username().is_empty()).then(|| decode(url.username(), "user")).transpose()?;
                let password = url.password().map(|p| decode(p, "password")).transpose()?;
                Ok(Target {
                    address: Address::Tcp { host, ip, port: url.port().unwrap_or(DEFAULT_PORT), tls },
                    db,
                    user,
                    password,
                })
            }
            "unix" | "redis+unix" | "valkey+unix" => {
                let path = url.to_file_path().map_err(|()| "no socket path".to_string())?;
                let db = match param("db") {
                    Some(db) => db.parse().map_err(|_| format!("?db={db} is not a database number"))?,
                    None => 0,
                };
                Ok(Target { address: Address::Unix(path), db, user: param("user"), password: param("pass") })
            }
            scheme => Err(format!("the scheme {scheme}:// is none of redis://, rediss://, redis+unix://")),
        }
    }

    /// The server as the user may see it: `redis://host:port/db`, `rediss://...` or
    /// `redis+unix:///path?db=N`, never credentials.
    pub fn shown(&self) -> String {
        match &self.address {
            Address::Tcp { host, ip, port, tls } => {
                let scheme = if *tls { "rediss" } else { "redis" };
                let host = if *ip && host.contains(':') { format!("[{host}]") } else { host.clone() };
                format!("{scheme}://{host}:{port}/{}", self.db)
            }
            Address::Unix(path) => format!("redis+unix://{}?db={}", path.display(), self.db),
        }
    }

    /// What the URL says about authentication, for the record: never the values.
    pub fn auth_kind(&self) -> &'static str {
        match (self.user.is_some(), self.password.is_some()) {
            (true, true) => "user and password",
            (false, true) => "password",
            (true, false) => "user",
            (false, false) => "none",
        }
    }
}

/// The URL with its credentials cut out, for messages about a URL that could not be read.
pub fn redact(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let host = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
            // A socket URL's `?pass=` is a credential too.
            let host = host.split_once('?').map_or(host, |(before, _)| before);
            format!("{scheme}://{host}")
        }
        None => "the --redis URL".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_reach_what_is_shown() {
        let target = Target::parse("redis://reader:s3cret@10.0.0.5:6380/2").unwrap();
        assert_eq!(target.shown(), "redis://10.0.0.5:6380/2");
        assert_eq!(target.auth_kind(), "user and password");
        assert_eq!(target.user.as_deref(), Some("reader"));
        assert_eq!(target.password.as_deref(), Some("s3cret"));
        let target = Target::parse("rediss://:s3cret@cache.example.com/0").unwrap();
        assert_eq!(target.shown(), "rediss://cache.example.com:6379/0");
        assert_eq!(target.auth_kind(), "password");
        assert_eq!(redact("redis://u:p@w@host:1/0"), "redis://host:1/0");
        assert_eq!(redact("redis+unix:///run/redis.sock?pass=s3cret"), "redis+unix:///run/redis.sock");
        assert!(!redact("nonsense:secret").contains("secret"));
    }

    #[test]
    fn the_forms_other_clients_take_are_read_alike() {
        let target = Target::parse("redis://us%40er:p%3Ass@[::1]:7000").unwrap();
        assert_eq!((target.user.as_deref(), target.password.as_deref()), (Some("us@er"), Some("p:ss")));
        assert_eq!(target.shown(), "redis://[::1]:7000/0");
        let socket = Target::parse("redis+unix:///run/redis.sock?db=3&pass=x").unwrap();
        assert_eq!(socket.shown(), "redis+unix:///run/redis.sock?db=3");
        assert_eq!(socket.auth_kind(), "password");
        for (url, why) in [
            ("http://h", "the scheme http:// is none of"),
            ("redis://h/x", "/x is not a database number"),
            ("redis://0.0.0.0", "a wildcard address"),
            ("rediss://h#insecure", "always checks the server's certificate"),
            ("redis://h?protocol=3", "capture speaks RESP2"),
        ] {
            let error = Target::parse(url).err().unwrap_or_default();
            assert!(error.contains(why), "{url}: {error}");
        }
    }
}
