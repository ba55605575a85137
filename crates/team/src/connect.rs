//! Connecting to the team store: the settings of `[team]` (the URL, the
//! password from `$DEJA_TEAM_PASSWORD` or a private file, TLS, this machine's
//! name), the connection, and the schema check that every command makes
//! before it changes anything.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use postgres::config::{ChannelBinding, Host, SslMode};
use postgres::Client;

use crate::error::describe;
use crate::pull::PullLimits;
use crate::{Result, TeamError};
use deja_config::{Loaded, Source, Tls};

/// The environment variable holding the team store's password.
pub const PASSWORD_ENV: &str = "DEJA_TEAM_PASSWORD";

/// Everything needed to reach the team store, checked.
#[derive(Debug, Clone)]
pub struct Settings {
    config: postgres::Config,
    tls: Tls,
    unix_socket: bool,
    ca_file: Option<PathBuf>,
    /// This machine's name in the team store (`user@machine`).
    pub origin: String,
    /// The projects whose sessions this machine publishes.
    pub share: Vec<String>,
    /// This machine's id ([`crate::machine`]), where the caller has read or
    /// made it: a push needs it, a pull and status use it to know their own
    /// origin.
    pub machine_id: Option<String>,
    /// The bounds on each pulled session.
    pub limits: PullLimits,
}

impl Settings {
    /// The settings `[team]` of `loaded` gives, with the password from
    /// `env(PASSWORD_ENV)` or the password file, and `home` for `~` in
    /// paths. A URL holding a password is refused when it comes from a
    /// config file others can read.
    pub fn from_config(
        loaded: &Loaded,
        env: &dyn Fn(&str) -> Option<String>,
        home: &Path,
    ) -> Result<Settings> {
        let team = &loaded.config.team;
        let url = team.url.trim();
        if url.is_empty() {
            return Err(TeamError::NotConfigured);
        }
        let mut config = postgres::Config::from_str(url).map_err(|e| {
            TeamError::Config(format!(
                "`team.url` ({}) is not a PostgreSQL URL: {e}\nhint: postgres://USER@HOST:PORT/DATABASE",
                source_name(loaded)
            ))
        })?;
        if config.get_password().is_some() {
            if let Some(Source::File(file)) = loaded.sources.get("team.url") {
                if readable_by_others(file) {
                    return Err(TeamError::Config(format!(
                        "`team.url` in `{}` holds a password, and others can read that file\nhint: move the password to ${PASSWORD_ENV} or `team.password_file`, or `chmod 600 {}`",
                        file.display(),
                        file.display()
                    )));
                }
            }
        }
        if let Some(password) = env(PASSWORD_ENV).filter(|p| !p.is_empty()) {
            config.password(password);
        } else if !team.password_file.trim().is_empty() {
            let path = deja_config::expand_home(team.password_file.trim(), home);
            config.password(read_password_file(&path)?);
        }
        if config.get_user().is_none() {
            let user = env("USER").or_else(|| env("LOGNAME")).unwrap_or_default();
            if user.is_empty() {
                return Err(TeamError::Config(
                    "`team.url` names no user\nhint: postgres://USER@HOST:PORT/DATABASE"
                        .to_string(),
                ));
            }
            config.user(&user);
        }
        // TLS from the host unless set: a Unix socket carries none (and
        // never crosses a network), a TCP host gets it always.
        let unix_socket = config.get_hostaddrs().is_empty()
            && !config.get_hosts().is_empty()
            && config
                .get_hosts()
                .iter()
                .all(|h| !matches!(h, Host::Tcp(_)));
        let tls = match team.tls {
            Tls::Auto if unix_socket => Tls::Disable,
            Tls::Auto => Tls::Require,
            explicit => explicit,
        };
        if !unix_socket && tls == Tls::Disable && !team.allow_insecure_auth {
            return Err(TeamError::Config(format!(
                "`team.tls = \"disable\"` ({}) would send the password to a TCP host without TLS, where anyone on the network can read or relay it\nhint: set `team.tls = \"auto\"` (TLS for a TCP host; the server needs `ssl = on`), or, on a network you trust, `team.allow_insecure_auth = true`",
                loaded
                    .sources
                    .get("team.tls")
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| loaded.path.display().to_string())
            )));
        }
        config.ssl_mode(match tls {
            Tls::Disable => SslMode::Disable,
            Tls::Prefer => SslMode::Prefer,
            Tls::Require | Tls::Auto => SslMode::Require,
        });
        // Over TCP the password goes only through SCRAM bound to the TLS
        // channel (SCRAM-SHA-256-PLUS): a server, or someone in the middle,
        // that asks for a cleartext or MD5 password, or declines TLS under
        // `prefer`, gets nothing.
        config.channel_binding(if unix_socket || team.allow_insecure_auth {
            ChannelBinding::Prefer
        } else {
            ChannelBinding::Require
        });
        config.connect_timeout(Duration::from_secs(team.connect_timeout_secs));
        config.application_name("deja");
        let origin = if team.name.trim().is_empty() {
            default_origin(env)
        } else {
            team.name.trim().to_string()
        };
        check_origin(&origin)?;
        let ca_file = (!team.ca_file.trim().is_empty())
            .then(|| deja_config::expand_home(team.ca_file.trim(), home));
        let share = team
            .share
            .iter()
            .map(|p| {
                deja_config::expand_home(p.trim(), home)
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|p| !p.is_empty())
            .collect();
        Ok(Settings {
            config,
            tls,
            unix_socket,
            ca_file,
            origin,
            share,
            machine_id: None,
            limits: PullLimits {
                max_messages: team.pull_max_messages,
                max_message_bytes: team.pull_max_message_bytes,
                max_session_bytes: team.pull_max_session_bytes,
            },
        })
    }

    /// The TLS mode in use (`auto` resolved from the host).
    pub fn tls(&self) -> Tls {
        self.tls
    }

    /// Whether the server is reached through a Unix socket.
    pub fn is_unix_socket(&self) -> bool {
        self.unix_socket
    }

    /// The server as `user@host:port/database`, never with the password.
    pub fn server(&self) -> String {
        let c = &self.config;
        let user = c.get_user().unwrap_or("");
        let host = match c.get_hosts().first() {
            Some(Host::Tcp(h)) => h.clone(),
            #[cfg(unix)]
            Some(Host::Unix(p)) => p.display().to_string(),
            None => "localhost".to_string(),
        };
        let port = c.get_ports().first().copied().unwrap_or(5432);
        let db = c.get_dbname().unwrap_or(user);
        format!("{user}@{host}:{port}/{db}")
    }

    fn connector(&self) -> Result<postgres_native_tls::MakeTlsConnector> {
        let mut builder = native_tls::TlsConnector::builder();
        if let Some(path) = &self.ca_file {
            let pem = std::fs::read(path).map_err(|e| {
                TeamError::Config(format!("`team.ca_file` `{}`: {e}", path.display()))
            })?;
            let cert = native_tls::Certificate::from_pem(&pem).map_err(|e| {
                TeamError::Config(format!(
                    "`team.ca_file` `{}` is not a PEM certificate: {e}",
                    path.display()
                ))
            })?;
            builder.add_root_certificate(cert);
        }
        let connector = builder
            .build()
            .map_err(|e| TeamError::Config(format!("TLS ({}): {e}", self.tls.as_str())))?;
        Ok(postgres_native_tls::MakeTlsConnector::new(connector))
    }
}

/// An open connection to a team store whose schema this deja can use.
pub struct Team {
    pub(crate) client: Client,
    pub(crate) settings: Settings,
    /// The server's schema version (after any migration this run made).
    pub schema_version: i64,
}

impl Team {
    /// This machine's name in the team store.
    pub fn origin(&self) -> &str {
        &self.settings.origin
    }

    /// The server, without password.
    pub fn server(&self) -> String {
        self.settings.server()
    }

    /// A server failure during work, described.
    pub(crate) fn fail(&self, e: postgres::Error) -> TeamError {
        let (cause, hint) = describe(&e);
        TeamError::Server {
            server: self.server(),
            cause,
            hint,
        }
    }
}

/// Connects to the team store and brings its schema to this deja's version
/// (creating it the first time); a schema from a newer deja is refused before
/// anything is changed on either side.
pub fn connect(settings: &Settings) -> Result<Team> {
    let connector = settings.connector()?;
    let mut client = settings.config.connect(connector).map_err(|e| {
        let (cause, hint) = describe(&e);
        let hint = connect_hint(settings, &cause).unwrap_or(hint);
        TeamError::Connect {
            server: settings.server(),
            cause,
            hint,
        }
    })?;
    let schema_version = crate::schema::prepare(&mut client).map_err(|e| match e {
        crate::schema::SchemaError::TooNew(found) => TeamError::TooNew {
            server: settings.server(),
            found,
            known: crate::schema::current_version(),
        },
        crate::schema::SchemaError::Server(e) => {
            let (cause, hint) = describe(&e);
            TeamError::Server {
                server: settings.server(),
                cause,
                hint,
            }
        }
    })?;
    Ok(Team {
        client,
        settings: settings.clone(),
        schema_version,
    })
}

/// A hint for a connection failure that the TLS and authentication settings
/// explain, where one does.
fn connect_hint(settings: &Settings, cause: &str) -> Option<String> {
    if cause.contains("server does not support TLS") {
        return Some(if settings.unix_socket {
            format!("\nhint: a Unix socket carries no TLS, and `team.tls` is \"{}\": set `team.tls = \"auto\"` (the default: no TLS on a socket, TLS over TCP)", settings.tls.as_str())
        } else {
            "\nhint: the server offers no TLS: turn on `ssl` in its postgresql.conf (with `hostssl` lines in pg_hba.conf); on a network you trust, `team.tls = \"disable\"` with `team.allow_insecure_auth = true` does without".to_string()
        });
    }
    if cause.contains("did not use channel binding") {
        return Some("\nhint: the server did not authenticate with SCRAM-SHA-256-PLUS over TLS (it asked for a cleartext or MD5 password, asked for none, or offered no TLS), so no password was sent; use `scram-sha-256` on `hostssl` lines in pg_hba.conf (and `password_encryption = scram-sha-256`), or set `team.allow_insecure_auth = true` to accept the risk".to_string());
    }
    let lower = cause.to_lowercase();
    if lower.contains("certificate") || lower.contains("hostname mismatch") {
        return Some(format!(
            "\nhint: the server's certificate is not trusted for this host name: check the host in `team.url` against the certificate's names{}",
            if settings.ca_file.is_none() {
                ", and name the authority that signed it in `team.ca_file`"
            } else {
                ", and that `team.ca_file` is the authority that signed it"
            }
        ));
    }
    None
}

fn source_name(loaded: &Loaded) -> String {
    match loaded.sources.get("team.url") {
        Some(s) => s.to_string(),
        None => loaded.path.display().to_string(),
    }
}

#[cfg(unix)]
use deja_fs::mode;

#[cfg(unix)]
fn readable_by_others(path: &Path) -> bool {
    mode(path).is_some_and(|m| m & 0o044 != 0)
}

#[cfg(not(unix))]
fn readable_by_others(_path: &Path) -> bool {
    false
}

/// The password in `path`: its first line. The file must be readable by its
/// owner alone (as `~/.pgpass` must).
fn read_password_file(path: &Path) -> Result<String> {
    let problem = |problem: String| TeamError::PasswordFile {
        path: path.to_path_buf(),
        problem,
    };
    let text = std::fs::read_to_string(path).map_err(|e| problem(e.to_string()))?;
    #[cfg(unix)]
    if let Some(m) = mode(path) {
        if m & 0o077 != 0 {
            return Err(problem(format!(
                "others can read it (mode {:o})\nhint: chmod 600 {}",
                m & 0o777,
                path.display()
            )));
        }
    }
    let password = text.lines().next().unwrap_or("").to_string();
    if password.is_empty() {
        return Err(problem("it is empty".to_string()));
    }
    Ok(password)
}

/// `$USER@<hostname>`: the name a machine publishes under when `team.name`
/// is empty.
pub fn default_origin(env: &dyn Fn(&str) -> Option<String>) -> String {
    let user = env("USER")
        .or_else(|| env("LOGNAME"))
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "user".to_string());
    format!("{user}@{}", hostname())
}

#[cfg(unix)]
fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most
    // that many bytes.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".to_string();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(buf.get(..end).unwrap_or(&[])).into_owned();
    if name.is_empty() {
        "localhost".to_string()
    } else {
        name
    }
}

#[cfg(not(unix))]
fn hostname() -> String {
    std::env::var("COMPUTERNAME").unwrap_or_else(|_| "localhost".to_string())
}

/// A name is `user@machine`, both parts non-empty, without spaces.
fn check_origin(origin: &str) -> Result<()> {
    let ok = origin.len() <= 200
        && !origin.chars().any(|c| c.is_whitespace() || c.is_control())
        && origin
            .split_once('@')
            .is_some_and(|(u, m)| !u.is_empty() && !m.is_empty());
    if ok {
        Ok(())
    } else {
        Err(TeamError::Config(format!(
            "`team.name` must be user@machine (no spaces, at most 200 bytes), not `{origin}`"
        )))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn origins_are_user_at_machine() {
        assert!(check_origin("ana@laptop").is_ok());
        assert!(check_origin("ana@build.example.org").is_ok());
        for bad in ["ana", "@laptop", "ana@", "ana b@laptop", ""] {
            assert!(check_origin(bad).is_err(), "{bad}");
        }
    }
}
