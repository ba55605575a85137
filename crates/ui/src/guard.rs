//! Who may ask the page anything. The server listens on a loopback address
//! only, which keeps other machines out; the guard keeps out other local
//! users, other local services and other web pages:
//!
//! - the address is one of 127.0.0.0/8 drawn at random for the run (where
//!   the system serves them all, as Linux does), so the page's cookie
//!   belongs to a host no other service answers at: browsers scope cookies
//!   by host, not by port, and a cookie of 127.0.0.1 would be sent to every
//!   service on 127.0.0.1;
//! - a way in is a one-time code in the address (`?token=`), random and
//!   made per run: the first request that carries it spends it and is
//!   answered with a fresh session secret as a cookie (`HttpOnly`,
//!   `SameSite=Strict`) and a page that forwards to the same address
//!   without the code; a spent code admits nothing, so an address seen in
//!   a process list or a browser's history is worth nothing;
//! - any address that carries `token` is forwarded without it, so the code
//!   never stays in the address bar;
//! - the `Host` header must name this server's address and port exactly,
//!   so a page whose domain is rebound to the loopback is refused;
//! - a request that writes (a POST) must also carry the forms' token and,
//!   when the browser says where it comes from (`Origin`), come from this
//!   page;
//! - every answer carries a strict Content-Security-Policy (nothing but
//!   this page's own stylesheet and forms; no script at all), and is never
//!   framed or cached; a referrer goes to this page only (so that the
//!   browser names this page as the `Origin` of its forms, where
//!   `no-referrer` would make it `null`).

use std::net::SocketAddr;
use std::sync::{Mutex, MutexGuard};

use anyhow::{Context, Result};

/// Bytes of randomness in a token.
const TOKEN_BYTES: usize = 24;

/// The headers of every answer.
pub const HEADERS: &[(&str, &str)] = &[
    (
        "content-security-policy",
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; \
         frame-ancestors 'none'; base-uri 'none'",
    ),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("referrer-policy", "same-origin"),
    ("cache-control", "no-store"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cross-origin-resource-policy", "same-origin"),
];

/// `N` bytes from the system's random source.
pub fn random<const N: usize>() -> Result<[u8; N]> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).context("cannot read the system's random source")?;
    Ok(bytes)
}

/// A new random token: hex, from the system's random source.
pub fn new_token() -> Result<String> {
    Ok(random::<TOKEN_BYTES>()?
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Compares two strings in time that does not depend on where they differ.
fn constant_time_eq(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// What a request carries that the guard looks at.
#[derive(Debug, Default)]
pub struct Presented<'a> {
    /// `POST` (a request that writes) rather than `GET`.
    pub writes: bool,
    /// The `Host` header.
    pub host: Option<&'a str>,
    /// The `Origin` header.
    pub origin: Option<&'a str>,
    /// The `Cookie` header.
    pub cookie: Option<&'a str>,
    /// The `token` parameter of the address, when there is one.
    pub query_token: Option<&'a str>,
    /// The `token` field of the form (for a write).
    pub form_token: Option<&'a str>,
}

/// The guard's decision.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Answer the request.
    Pass,
    /// The address carries `token`: send the browser to the same address
    /// without it, setting this cookie when the token was an unspent
    /// one-time code.
    Forward {
        /// The `Set-Cookie` value, when the code let the browser in.
        set_cookie: Option<String>,
    },
    /// Refuse, with this status and reason.
    Refuse(u16, &'static str),
}

/// The secrets of one run that change while it serves.
#[derive(Debug, Default)]
struct Keys {
    /// One-time codes not yet spent.
    codes: Vec<String>,
    /// Session secrets handed out as cookies (one per code spent).
    sessions: Vec<String>,
}

/// The guard of one run: its address, the forms' token, its codes and
/// sessions.
#[derive(Debug)]
pub struct Guard {
    /// `IP:PORT`, as the `Host` header must name it.
    host: String,
    port: u16,
    form_token: String,
    keys: Mutex<Keys>,
}

impl Guard {
    /// The guard of the server at `address`, whose write forms carry
    /// `form_token`.
    pub fn new(address: SocketAddr, form_token: String) -> Guard {
        Guard {
            host: address.to_string(),
            port: address.port(),
            form_token,
            keys: Mutex::new(Keys::default()),
        }
    }

    fn keys(&self) -> MutexGuard<'_, Keys> {
        // The keys are plain lists; a panic elsewhere leaves them whole.
        self.keys.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The token the forms that write carry.
    pub fn form_token(&self) -> &str {
        &self.form_token
    }

    /// A new one-time code: it admits the first browser that brings it,
    /// then nothing.
    pub fn one_time_code(&self) -> Result<String> {
        let code = new_token()?;
        self.keys().codes.push(code.clone());
        Ok(code)
    }

    /// The cookie's name: one per port, so two runs do not mix.
    pub fn cookie_name(&self) -> String {
        format!("deja_ui_{}", self.port)
    }

    /// The `Set-Cookie` value that admits a browser with `secret`: no
    /// `Domain`, so it goes back to this host only.
    fn set_cookie(&self, secret: &str) -> String {
        format!(
            "{}={secret}; Path=/; HttpOnly; SameSite=Strict",
            self.cookie_name()
        )
    }

    /// Whether `host` names this server: its address and port, exactly.
    fn host_ok(&self, host: &str) -> bool {
        host.trim().eq_ignore_ascii_case(&self.host)
    }

    /// The values the cookie header carries under this run's name.
    fn cookie_values<'a>(&self, cookie: &'a str) -> impl Iterator<Item = &'a str> {
        let name = self.cookie_name();
        cookie.split(';').filter_map(move |pair| {
            let (k, v) = pair.trim().split_once('=')?;
            (k == name).then_some(v)
        })
    }

    /// Whether the cookie header carries a session secret of this run.
    fn has_session(&self, cookie: Option<&str>) -> bool {
        let keys = self.keys();
        cookie.is_some_and(|c| {
            self.cookie_values(c)
                .any(|v| keys.sessions.iter().any(|s| constant_time_eq(v, s)))
        })
    }

    /// Spends the one-time code `code`, if it is one not yet spent, and
    /// returns the session secret it buys.
    fn spend(&self, code: &str) -> Result<Option<String>> {
        let mut keys = self.keys();
        let Some(i) = keys.codes.iter().position(|c| constant_time_eq(c, code)) else {
            return Ok(None);
        };
        keys.codes.swap_remove(i);
        let secret = new_token()?;
        keys.sessions.push(secret.clone());
        Ok(Some(secret))
    }

    /// Decides about one request (spending the one-time code it carries).
    pub fn check(&self, p: &Presented<'_>) -> Verdict {
        match p.host {
            Some(h) if self.host_ok(h) => {}
            _ => return Verdict::Refuse(403, "this page answers only at its own address"),
        }
        if p.writes {
            let from_here = p.origin.is_none_or(|o| {
                let o = o.trim();
                o.strip_prefix("http://").is_some_and(|h| self.host_ok(h))
            });
            if !from_here {
                return Verdict::Refuse(403, "a change must come from this page");
            }
            if !p
                .form_token
                .is_some_and(|t| constant_time_eq(t, &self.form_token))
            {
                return Verdict::Refuse(403, "a change needs the page's token");
            }
        }
        let session = self.has_session(p.cookie);
        if let (false, Some(code)) = (p.writes, p.query_token) {
            return match self.spend(code) {
                Ok(Some(secret)) => Verdict::Forward {
                    set_cookie: Some(self.set_cookie(&secret)),
                },
                Ok(None) if session => Verdict::Forward { set_cookie: None },
                Ok(None) => Verdict::Refuse(
                    403,
                    "this address was used already or is not this run's (each address \
                     `deja ui` gives opens the page once; run `deja ui` again for a new one)",
                ),
                Err(_) => Verdict::Refuse(500, "cannot read the system's random source"),
            };
        }
        if session {
            return Verdict::Pass;
        }
        Verdict::Refuse(
            403,
            "this page needs the address `deja ui` printed (it carries a code made for this run)",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: &str = "127.9.8.7:4000";

    fn guard() -> Guard {
        Guard::new(HOST.parse().unwrap(), "f0rm".into())
    }

    fn get<'a>(host: &'a str, cookie: Option<&'a str>, query: Option<&'a str>) -> Presented<'a> {
        Presented {
            host: Some(host),
            cookie,
            query_token: query,
            ..Presented::default()
        }
    }

    /// Spends `code` and returns the cookie pair (`name=secret`) it buys.
    fn enter(g: &Guard, code: &str) -> String {
        match g.check(&get(HOST, None, Some(code))) {
            Verdict::Forward {
                set_cookie: Some(c),
            } => c.split(';').next().unwrap().to_string(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_code_admits_once_and_its_cookie_admits_after() {
        let g = guard();
        let code = g.one_time_code().unwrap();
        let cookie = enter(&g, &code);
        assert!(cookie.starts_with("deja_ui_4000="), "{cookie}");
        // The session secret is not the code.
        assert!(!cookie.contains(&code));
        assert_eq!(
            g.check(&get(HOST, Some(&format!("a=b; {cookie}")), None)),
            Verdict::Pass
        );
        // Spent: the same code admits nothing more.
        assert!(matches!(
            g.check(&get(HOST, None, Some(&code))),
            Verdict::Refuse(403, _)
        ));
        // A second code buys a second, different session.
        let other = enter(&g, &g.one_time_code().unwrap());
        assert_ne!(other, cookie);
        assert_eq!(g.check(&get(HOST, Some(&other), None)), Verdict::Pass);
    }

    #[test]
    fn the_cookie_is_host_only_and_strict() {
        let g = guard();
        let code = g.one_time_code().unwrap();
        let Verdict::Forward {
            set_cookie: Some(set),
        } = g.check(&get(HOST, None, Some(&code)))
        else {
            panic!()
        };
        assert!(
            set.ends_with("; Path=/; HttpOnly; SameSite=Strict"),
            "{set}"
        );
        assert!(!set.to_ascii_lowercase().contains("domain"), "{set}");
    }

    #[test]
    fn a_token_in_the_address_is_always_forwarded_away() {
        let g = guard();
        let cookie = enter(&g, &g.one_time_code().unwrap());
        // With a valid cookie, any token (spent, wrong) leaves the address.
        for token in ["", "t0x", "spent"] {
            assert_eq!(
                g.check(&get(HOST, Some(&cookie), Some(token))),
                Verdict::Forward { set_cookie: None },
                "{token:?}"
            );
        }
    }

    #[test]
    fn no_token_a_wrong_token_or_another_ports_cookie_is_refused() {
        let g = guard();
        let code = g.one_time_code().unwrap();
        let cookie = enter(&g, &code);
        let secret = cookie.split_once('=').unwrap().1;
        for p in [
            get(HOST, None, None),
            get(HOST, None, Some("t0x")),
            get(HOST, Some(&format!("deja_ui_4001={secret}")), None),
            get(HOST, Some(&format!("deja_ui_4000={code}")), None),
            get(HOST, Some("deja_ui_4000="), None),
        ] {
            assert!(matches!(g.check(&p), Verdict::Refuse(403, _)), "{p:?}");
        }
    }

    #[test]
    fn a_foreign_host_is_refused_even_with_the_token() {
        let g = guard();
        let code = g.one_time_code().unwrap();
        let cookie = enter(&g, &code);
        let fresh = g.one_time_code().unwrap();
        for host in [
            "evil.example:4000",
            "127.9.8.7:4001",
            "127.0.0.1:4000",
            "localhost:4000",
            "127.9.8.7",
        ] {
            let p = get(host, Some(&cookie), Some(&fresh));
            assert_eq!(
                g.check(&p),
                Verdict::Refuse(403, "this page answers only at its own address"),
                "{host}"
            );
        }
        // The refused requests did not spend the code.
        assert!(matches!(
            g.check(&get(HOST, None, Some(&fresh))),
            Verdict::Forward {
                set_cookie: Some(_)
            }
        ));
        assert!(matches!(
            g.check(&Presented::default()),
            Verdict::Refuse(403, _)
        ));
    }

    #[test]
    fn a_write_needs_the_form_token_and_this_origin() {
        let g = guard();
        let code = g.one_time_code().unwrap();
        let cookie = enter(&g, &code);
        let base = Presented {
            writes: true,
            host: Some(HOST),
            cookie: Some(&cookie),
            ..Presented::default()
        };
        assert!(matches!(g.check(&base), Verdict::Refuse(403, _)));
        let ok = Presented {
            form_token: Some("f0rm"),
            origin: Some("http://127.9.8.7:4000"),
            ..base
        };
        assert_eq!(g.check(&ok), Verdict::Pass);
        let foreign = Presented {
            origin: Some("http://evil.example"),
            ..ok
        };
        assert_eq!(
            g.check(&foreign),
            Verdict::Refuse(403, "a change must come from this page")
        );
        // A code in the address does not admit a write, nor is it spent.
        let fresh = g.one_time_code().unwrap();
        let by_query = Presented {
            writes: true,
            host: Some(HOST),
            query_token: Some(&fresh),
            form_token: Some("f0rm"),
            ..Presented::default()
        };
        assert!(matches!(g.check(&by_query), Verdict::Refuse(403, _)));
        assert!(matches!(
            g.check(&get(HOST, None, Some(&fresh))),
            Verdict::Forward {
                set_cookie: Some(_)
            }
        ));
    }

    #[test]
    fn tokens_are_random_hex() {
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_eq!(a.len(), TOKEN_BYTES * 2);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
