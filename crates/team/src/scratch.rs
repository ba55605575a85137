//! A throwaway PostgreSQL server for tests and the benchmark: a cluster made
//! with `initdb` in a temporary folder, started with `pg_ctl` listening on a
//! Unix socket only (no TCP port at all, so never the machine's standard
//! one), with password (SCRAM) authentication, and stopped and removed when
//! dropped. Run as root, the server runs as the `postgres` user (which
//! Debian's package creates, through `runuser`), since PostgreSQL refuses to
//! run as root. Every program it runs is looked up first ([`find_program`]),
//! so a missing one is named with the folders searched.

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The superuser of a scratch cluster.
pub const ADMIN: &str = "deja_admin";
/// Its password.
pub const ADMIN_PASSWORD: &str = "scratch-admin";

/// A running throwaway server.
pub struct ScratchServer {
    root: PathBuf,
    bin: PathBuf,
    port: u16,
    /// The user the server runs as (when run as root) and `runuser`.
    run_as: Option<(String, PathBuf)>,
    running: bool,
}

/// Folders of system programs (`runuser` is in `/usr/sbin` or `/sbin`) that
/// a user's `PATH` often lacks.
const SYSTEM_DIRS: [&str; 3] = ["/usr/local/sbin", "/usr/sbin", "/sbin"];

/// Debian's PostgreSQL versions, each with its programs in `<version>/bin`.
const DEBIAN_POSTGRESQL: &str = "/usr/lib/postgresql";

/// The folders searched for a program: `$DEJA_PG_BIN` when set, those of
/// `path` (a `PATH` value), the system folders `PATH` may lack, then the
/// `/usr/lib/postgresql/*/bin` folders, newest version first; each once.
pub fn search_dirs(pg_bin: Option<&OsStr>, path: Option<&OsStr>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = pg_bin.map(PathBuf::from).into_iter().collect();
    if let Some(path) = path {
        dirs.extend(std::env::split_paths(path).filter(|d| !d.as_os_str().is_empty()));
    }
    dirs.extend(SYSTEM_DIRS.iter().map(PathBuf::from));
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(DEBIAN_POSTGRESQL)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            Some((v, e.path().join("bin")))
        })
        .collect();
    versions.sort();
    dirs.extend(versions.into_iter().rev().map(|(_, b)| b));
    let mut seen = std::collections::HashSet::new();
    dirs.retain(|d| seen.insert(d.clone()));
    dirs
}

/// The folders this process searches: [`search_dirs`] of `$DEJA_PG_BIN`
/// and `$PATH`.
fn dirs_here() -> Vec<PathBuf> {
    search_dirs(
        std::env::var_os("DEJA_PG_BIN").as_deref(),
        std::env::var_os("PATH").as_deref(),
    )
}

/// Whether `file` is a program that can be run.
fn is_program(file: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        file.is_file()
    }
}

/// What installs `program`.
fn installed_by(program: &str) -> &'static str {
    match program {
        "runuser" => {
            "util-linux installs it (run as root, the server runs as user `postgres` through it)"
        }
        "chown" => "coreutils installs it",
        "openssl" => "the `openssl` package installs it",
        _ => "scripts/fetch-postgres installs PostgreSQL",
    }
}

/// The error for programs none of `dirs` holds.
fn not_found(programs: &[&str], dirs: &[PathBuf]) -> io::Error {
    let names: Vec<String> = programs.iter().map(|p| format!("`{p}`")).collect();
    let looked: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    io::Error::new(
        io::ErrorKind::NotFound,
        format!(
            "{} not found (looked in: {}); {}",
            names.join(" and "),
            looked.join(", "),
            installed_by(programs.first().copied().unwrap_or(""))
        ),
    )
}

/// `program` in the first of `dirs` holding it; the error names it and
/// every folder searched, and says what installs it.
pub fn find_in(program: &str, dirs: &[PathBuf]) -> io::Result<PathBuf> {
    dirs.iter()
        .map(|d| d.join(program))
        .find(|f| is_program(f))
        .ok_or_else(|| not_found(&[program], dirs))
}

/// `program` in the folders of [`search_dirs`] for this process.
pub fn find_program(program: &str) -> io::Result<PathBuf> {
    find_in(program, &dirs_here())
}

/// The first of `dirs` holding both `initdb` and `pg_ctl`.
fn find_bin_in(dirs: &[PathBuf]) -> io::Result<PathBuf> {
    dirs.iter()
        .find(|d| is_program(&d.join("initdb")) && is_program(&d.join("pg_ctl")))
        .cloned()
        .ok_or_else(|| not_found(&["initdb", "pg_ctl"], dirs))
}

/// Where PostgreSQL's server programs (`initdb` and `pg_ctl`) are:
/// `$DEJA_PG_BIN` when set (and then only there), else a folder of `PATH`
/// or of the system, or the newest `/usr/lib/postgresql/*/bin`.
pub fn find_bin() -> io::Result<PathBuf> {
    match std::env::var_os("DEJA_PG_BIN") {
        Some(dir) => find_bin_in(&[PathBuf::from(dir)]),
        None => find_bin_in(&dirs_here()),
    }
}

fn fail(what: &str, out: &Output) -> io::Error {
    io::Error::other(format!(
        "{what} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

impl ScratchServer {
    /// Creates and starts a cluster. `durable: false` turns off fsync (for
    /// tests; the data survives a server crash, not a machine crash).
    pub fn start(durable: bool) -> io::Result<ScratchServer> {
        let bin = find_bin()?;
        // SAFETY: geteuid has no preconditions.
        let run_as = if unsafe { libc::geteuid() } == 0 {
            Some(("postgres".to_string(), find_program("runuser")?))
        } else {
            None
        };
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let root = std::env::temp_dir().join(format!("deja-pg-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&root)?;
        let mut server = ScratchServer {
            root,
            bin,
            port: free_port()?,
            run_as,
            running: false,
        };
        std::fs::write(server.root.join("pwfile"), format!("{ADMIN_PASSWORD}\n"))?;
        server.give_to_server_user(&server.root)?;
        let data = server.root.join("data");
        let out = server
            .command("initdb")
            .arg("-D")
            .arg(&data)
            .args([
                "-U",
                ADMIN,
                "--auth=scram-sha-256",
                "--encoding=UTF8",
                "--no-locale",
            ])
            .arg(format!("--pwfile={}", server.root.join("pwfile").display()))
            .output()?;
        if !out.status.success() {
            return Err(fail("initdb", &out));
        }
        let mut conf = format!(
            "listen_addresses = ''\nunix_socket_directories = '{}'\nport = {}\nmax_connections = 50\n",
            server.root.display(),
            server.port
        );
        if !durable {
            conf.push_str("fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n");
        }
        let mut existing = std::fs::read_to_string(data.join("postgresql.conf"))?;
        existing.push_str(&conf);
        std::fs::write(data.join("postgresql.conf"), existing)?;
        server.pg_ctl(&["start", "-w", "-t", "60"])?;
        server.running = true;
        Ok(server)
    }

    /// A server program (from the server's `bin` folder), run as the
    /// server's user.
    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        match &self.run_as {
            Some((user, runuser)) => {
                let mut c = Command::new(runuser);
                c.args(["-u", user, "--"]).arg(path);
                c
            }
            None => Command::new(path),
        }
    }

    /// Makes the server's user (when run as root) the owner of `dir` and
    /// everything in it.
    fn give_to_server_user(&self, dir: &Path) -> io::Result<()> {
        let Some((user, _)) = &self.run_as else {
            return Ok(());
        };
        let out = Command::new(find_program("chown")?)
            .args(["-R", user])
            .arg(dir)
            .output()?;
        if out.status.success() {
            Ok(())
        } else {
            Err(fail("chown", &out))
        }
    }

    fn pg_ctl(&self, args: &[&str]) -> io::Result<()> {
        let out = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.root.join("data"))
            .arg("-l")
            .arg(self.root.join("log"))
            .args(args)
            .output()?;
        if out.status.success() {
            Ok(())
        } else {
            Err(fail(&format!("pg_ctl {}", args.join(" ")), &out))
        }
    }

    /// The folder holding the server's socket.
    pub fn socket_dir(&self) -> &Path {
        &self.root
    }

    /// The port (which names the socket file).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// A `postgres://` URL for `user` and `database`, over the socket.
    pub fn url(&self, user: &str, database: &str) -> String {
        let dir: String = self
            .root
            .display()
            .to_string()
            .bytes()
            .map(|b| match b {
                b'/' => "%2F".to_string(),
                b if b.is_ascii_alphanumeric() || b"-_.".contains(&b) => (b as char).to_string(),
                b => format!("%{b:02X}"),
            })
            .collect();
        format!("postgres://{user}@{dir}:{}/{database}", self.port)
    }

    /// psql as the superuser in `database`, stopping at the first error,
    /// printing unaligned rows.
    fn psql_command(&self, database: &str) -> io::Result<Command> {
        let psql = if is_program(&self.bin.join("psql")) {
            self.bin.join("psql")
        } else {
            find_program("psql")?
        };
        let mut c = Command::new(psql);
        c.arg("-h")
            .arg(&self.root)
            .args(["-p", &self.port.to_string(), "-U", ADMIN, "-d", database])
            .args(["-v", "ON_ERROR_STOP=1", "-X", "-q", "-At"])
            .env("PGPASSWORD", ADMIN_PASSWORD);
        Ok(c)
    }

    /// Runs SQL as the superuser in `database` and returns psql's unaligned output.
    pub fn psql(&self, database: &str, sql: &str) -> io::Result<String> {
        let out = self.psql_command(database)?.args(["-c", sql]).output()?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(fail(&format!("psql `{sql}`"), &out))
        }
    }

    /// Runs a psql script (meta-commands such as `\\c` allowed) as the
    /// superuser, starting in `database`.
    pub fn psql_script(&self, database: &str, script: &str) -> io::Result<String> {
        use std::io::Write as _;
        let mut child = self
            .psql_command(database)?
            .args(["-f", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(script.as_bytes())?;
        }
        let out = child.wait_with_output()?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(fail("psql script", &out))
        }
    }

    /// Creates `database` and the team roles the README describes: a
    /// `deja_team` group owning schema `deja`, and one login role per name in
    /// `members`, each with `password`, none a superuser.
    pub fn create_team(&self, database: &str, members: &[&str], password: &str) -> io::Result<()> {
        self.create_roles(members, password)?;
        self.create_database(database)
    }

    /// The `deja_team` group and one login role per name in `members`.
    pub fn create_roles(&self, members: &[&str], password: &str) -> io::Result<()> {
        self.psql("postgres", "CREATE ROLE deja_team NOLOGIN")?;
        for m in members {
            self.psql(
                "postgres",
                &format!("CREATE ROLE {m} LOGIN PASSWORD '{password}' IN ROLE deja_team"),
            )?;
        }
        Ok(())
    }

    /// A database the `deja_team` group may connect to, whose schema `deja`
    /// it owns (and where it may create nothing else).
    pub fn create_database(&self, database: &str) -> io::Result<()> {
        self.psql("postgres", &format!("CREATE DATABASE {database}"))?;
        self.psql(
            "postgres",
            &format!("REVOKE ALL ON DATABASE {database} FROM PUBLIC; GRANT CONNECT ON DATABASE {database} TO deja_team"),
        )?;
        self.psql(
            database,
            "REVOKE CREATE ON SCHEMA public FROM PUBLIC; CREATE SCHEMA deja AUTHORIZATION deja_team",
        )?;
        Ok(())
    }

    /// Turns on TLS over TCP: a certificate authority and a server
    /// certificate for `localhost` and 127.0.0.1 made with the `openssl`
    /// command, the server listening on 127.0.0.1 at [`ScratchServer::port`]
    /// and accepting TCP connections with TLS only (`hostssl`). Returns the
    /// authority's certificate (PEM).
    pub fn enable_tls(&self) -> io::Result<PathBuf> {
        self.enable_tls_for("DNS:localhost,IP:127.0.0.1")
    }

    /// [`ScratchServer::enable_tls`] with a server certificate for the
    /// names `subject_alt_names` (openssl's form: `DNS:a,IP:1.2.3.4`), for
    /// testing a certificate that does not name the host.
    pub fn enable_tls_for(&self, subject_alt_names: &str) -> io::Result<PathBuf> {
        let dir = self.root.join("tls");
        std::fs::create_dir_all(&dir)?;
        let program = find_program("openssl")?;
        let openssl = |args: &[&str]| -> io::Result<()> {
            let out = Command::new(&program)
                .args(args)
                .current_dir(&dir)
                .output()?;
            if out.status.success() {
                Ok(())
            } else {
                Err(fail(&format!("openssl {}", args.join(" ")), &out))
            }
        };
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-days",
            "2",
            "-subj",
            "/CN=deja scratch CA",
        ])?;
        openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=localhost",
        ])?;
        std::fs::write(
            dir.join("ext"),
            format!("subjectAltName={subject_alt_names}\n"),
        )?;
        openssl(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "ext",
        ])?;
        self.give_to_server_user(&dir)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(
                dir.join("server.key"),
                std::fs::Permissions::from_mode(0o600),
            )?;
        }
        let data = self.root.join("data");
        let mut conf = std::fs::read_to_string(data.join("postgresql.conf"))?;
        conf.push_str(&format!(
            "ssl = on\nssl_cert_file = '{}'\nssl_key_file = '{}'\nlisten_addresses = '127.0.0.1'\n",
            dir.join("server.crt").display(),
            dir.join("server.key").display()
        ));
        std::fs::write(data.join("postgresql.conf"), conf)?;
        let hba = std::fs::read_to_string(data.join("pg_hba.conf"))?;
        let hba: String = hba
            .lines()
            .map(|l| match l.strip_prefix("host ") {
                Some(rest) => format!("hostssl {rest}\n"),
                None => format!("{l}\n"),
            })
            .collect();
        std::fs::write(data.join("pg_hba.conf"), hba)?;
        self.restart()?;
        Ok(dir.join("ca.crt"))
    }

    /// Turns on TCP without TLS: the server listens on 127.0.0.1 at
    /// [`ScratchServer::port`] and offers no TLS at all.
    pub fn enable_tcp(&self) -> io::Result<()> {
        let data = self.root.join("data");
        let mut conf = std::fs::read_to_string(data.join("postgresql.conf"))?;
        conf.push_str("ssl = off\nlisten_addresses = '127.0.0.1'\n");
        std::fs::write(data.join("postgresql.conf"), conf)?;
        self.restart()
    }

    /// Sets the authentication method of every TCP line of pg_hba.conf
    /// (`host` and `hostssl`), e.g. `password` (cleartext) or `md5`, and
    /// reloads the configuration.
    pub fn set_tcp_auth(&self, method: &str) -> io::Result<()> {
        let data = self.root.join("data");
        let hba = std::fs::read_to_string(data.join("pg_hba.conf"))?;
        let hba: String = hba
            .lines()
            .map(|l| {
                let fields: Vec<&str> = l.split_whitespace().collect();
                match fields.as_slice() {
                    [kind @ ("host" | "hostssl"), db, user, address, _method, ..] => {
                        format!("{kind} {db} {user} {address} {method}\n")
                    }
                    _ => format!("{l}\n"),
                }
            })
            .collect();
        std::fs::write(data.join("pg_hba.conf"), hba)?;
        self.pg_ctl(&["reload"])?;
        // The postmaster rereads the file when the signal arrives.
        std::thread::sleep(std::time::Duration::from_millis(500));
        Ok(())
    }

    /// A `postgres://` URL for `user` and `database` over TCP to `localhost`
    /// (after [`ScratchServer::enable_tls`]).
    pub fn tcp_url(&self, user: &str, database: &str) -> String {
        format!("postgres://{user}@localhost:{}/{database}", self.port)
    }

    /// Restarts the server (fast shutdown: open connections are cut).
    pub fn restart(&self) -> io::Result<()> {
        self.pg_ctl(&["restart", "-m", "fast", "-w", "-t", "60"])
    }

    /// Stops the server at once.
    pub fn stop(&mut self) -> io::Result<()> {
        if self.running {
            // With `synchronous_commit = off` a commit may still sit in the
            // WAL buffers, which an immediate stop loses: what was committed
            // before the stop must be there after a start.
            let _ = self.psql("postgres", "CHECKPOINT");
            self.pg_ctl(&["stop", "-m", "immediate", "-w"])?;
            self.running = false;
        }
        Ok(())
    }

    /// Starts a stopped server again.
    pub fn start_again(&mut self) -> io::Result<()> {
        if !self.running {
            self.pg_ctl(&["start", "-w", "-t", "60"])?;
            self.running = true;
        }
        Ok(())
    }
}

impl Drop for ScratchServer {
    fn drop(&mut self) {
        let _ = self.stop();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// A port no one listens on now (it only names the socket file: the server
/// opens no TCP port).
fn free_port() -> io::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_program_on_no_folder_searched_is_named_with_every_folder_searched() {
        let empty = tempfile::tempdir().unwrap();
        let dirs = search_dirs(None, Some(empty.path().as_os_str()));
        assert_eq!(dirs.first().map(PathBuf::as_path), Some(empty.path()));
        for system in ["/usr/sbin", "/sbin"] {
            assert!(dirs.contains(&PathBuf::from(system)), "{dirs:?}");
        }
        let e = find_in("deja-no-such-program", &dirs).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        let e = e.to_string();
        assert!(
            e.starts_with("`deja-no-such-program` not found (looked in: "),
            "{e}"
        );
        assert!(e.contains(&empty.path().display().to_string()), "{e}");
        assert!(e.contains("/usr/sbin, /sbin"), "{e}");
        assert!(
            e.ends_with("scripts/fetch-postgres installs PostgreSQL"),
            "{e}"
        );
        let e = find_in("runuser", &[empty.path().to_path_buf()])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("`runuser` not found (looked in: "), "{e}");
        assert!(e.contains("util-linux"), "{e}");
        let e = find_bin_in(&[empty.path().to_path_buf()])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("`initdb` and `pg_ctl` not found"), "{e}");
    }

    #[test]
    fn a_program_is_taken_from_the_first_folder_holding_it_as_a_program() {
        let first = tempfile::tempdir().unwrap();
        let second = tempfile::tempdir().unwrap();
        let program = |dir: &Path, mode: u32| {
            let file = dir.join("tool");
            std::fs::write(&file, "#!/bin/sh\n").unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
            }
            let _ = mode;
            file
        };
        let dirs = [first.path().to_path_buf(), second.path().to_path_buf()];
        let found = program(second.path(), 0o755);
        assert_eq!(find_in("tool", &dirs).unwrap(), found);
        // A file that cannot be run is passed over.
        #[cfg(unix)]
        {
            program(first.path(), 0o644);
            assert_eq!(find_in("tool", &dirs).unwrap(), found);
        }
        let found = program(first.path(), 0o755);
        assert_eq!(find_in("tool", &dirs).unwrap(), found);
    }
}
