//! A throwaway PostgreSQL server for tests and the benchmark: a cluster made
//! with `initdb` in a temporary folder, started with `pg_ctl` listening on a
//! Unix socket only (no TCP port at all, so never the machine's standard
//! one), with password (SCRAM) authentication, and stopped and removed when
//! dropped. Run as root, the server runs as the `postgres` user (which
//! Debian's package creates), since PostgreSQL refuses to run as root.

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
    run_as: Option<String>,
    running: bool,
}

/// Where PostgreSQL's server programs are: `$DEJA_PG_BIN`, the folder of
/// `initdb` on `PATH`, or the newest `/usr/lib/postgresql/*/bin`.
pub fn find_bin() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("DEJA_PG_BIN") {
        return Some(PathBuf::from(dir));
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            if dir.join("initdb").is_file() && dir.join("pg_ctl").is_file() {
                return Some(dir);
            }
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, b)| b)
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
        let bin = find_bin().ok_or_else(|| {
            io::Error::other(
                "PostgreSQL's server programs (initdb, pg_ctl) were not found\nhint: run scripts/fetch-postgres",
            )
        })?;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let root = std::env::temp_dir().join(format!("deja-pg-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&root)?;
        // SAFETY: geteuid has no preconditions.
        let run_as = (unsafe { libc::geteuid() } == 0).then(|| "postgres".to_string());
        let mut server = ScratchServer {
            root,
            bin,
            port: free_port()?,
            run_as,
            running: false,
        };
        std::fs::write(server.root.join("pwfile"), format!("{ADMIN_PASSWORD}\n"))?;
        if let Some(user) = &server.run_as {
            let out = Command::new("chown")
                .args(["-R", user])
                .arg(&server.root)
                .output()?;
            if !out.status.success() {
                return Err(fail("chown", &out));
            }
        }
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

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        match &self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(path);
                c
            }
            None => Command::new(path),
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
    fn psql_command(&self, database: &str) -> Command {
        let psql = if self.bin.join("psql").is_file() {
            self.bin.join("psql")
        } else {
            PathBuf::from("psql")
        };
        let mut c = Command::new(psql);
        c.arg("-h")
            .arg(&self.root)
            .args(["-p", &self.port.to_string(), "-U", ADMIN, "-d", database])
            .args(["-v", "ON_ERROR_STOP=1", "-X", "-q", "-At"])
            .env("PGPASSWORD", ADMIN_PASSWORD);
        c
    }

    /// Runs SQL as the superuser in `database` and returns psql's unaligned output.
    pub fn psql(&self, database: &str, sql: &str) -> io::Result<String> {
        let out = self.psql_command(database).args(["-c", sql]).output()?;
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
            .psql_command(database)
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
        let openssl = |args: &[&str]| -> io::Result<()> {
            let out = Command::new("openssl")
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
        if let Some(user) = &self.run_as {
            let out = Command::new("chown")
                .args(["-R", user])
                .arg(&dir)
                .output()?;
            if !out.status.success() {
                return Err(fail("chown", &out));
            }
        }
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
