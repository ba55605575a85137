//! Who may ask the page anything. The server listens on 127.0.0.1 only,
//! which keeps other machines out; the guard keeps out other local users
//! and other web pages:
//!
//! - a random token, made per run, is in the address `deja ui` prints; the
//!   first request that carries it is answered with a redirect that sets
//!   it as a cookie (`HttpOnly`, `SameSite=Strict`, named for the port), and
//!   every request after must carry the cookie;
//! - the `Host` header must name the loopback address and this port, so a
//!   page whose domain is rebound to 127.0.0.1 is refused;
//! - a request that writes (a POST) must also carry the token in its form
//!   and, when the browser says where it comes from (`Origin`), come from
//!   this page;
//! - every answer carries a strict Content-Security-Policy (nothing but
//!   this page's own stylesheet and forms; no script at all), and is never
//!   framed or cached; a referrer goes to this page only (so that the
//!   browser names this page as the `Origin` of its forms, where
//!   `no-referrer` would make it `null`).

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

/// A new random token: hex, from the system's random source.
pub fn new_token() -> Result<String> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).context("cannot read the system's random source for a token")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Compares two strings in time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
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
    /// The `token` parameter of the address.
    pub query_token: Option<&'a str>,
    /// The `token` field of the form (for a write).
    pub form_token: Option<&'a str>,
}

/// The guard's decision.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Answer the request.
    Pass,
    /// The address carried the right token: set the cookie and send the
    /// browser to the same address without it.
    SetCookie,
    /// Refuse, with this status and reason.
    Refuse(u16, &'static str),
}

/// The guard of one run: its token and port.
#[derive(Debug, Clone)]
pub struct Guard {
    token: String,
    port: u16,
}

impl Guard {
    /// The guard for `token` on `port`.
    pub fn new(token: String, port: u16) -> Guard {
        Guard { token, port }
    }

    /// The cookie's name: one per port, so two runs do not mix.
    pub fn cookie_name(&self) -> String {
        format!("deja_ui_{}", self.port)
    }

    /// The `Set-Cookie` value that admits the browser.
    pub fn set_cookie(&self) -> String {
        format!(
            "{}={}; Path=/; HttpOnly; SameSite=Strict",
            self.cookie_name(),
            self.token
        )
    }

    /// Whether `host` names this server: 127.0.0.1 or localhost, this port.
    fn host_ok(&self, host: &str) -> bool {
        let host = host.trim();
        [
            format!("127.0.0.1:{}", self.port),
            format!("localhost:{}", self.port),
        ]
        .iter()
        .any(|h| host.eq_ignore_ascii_case(h))
    }

    /// The token the cookie header carries for this port, if any.
    fn cookie_token<'a>(&self, cookie: &'a str) -> Option<&'a str> {
        let name = self.cookie_name();
        cookie.split(';').find_map(|pair| {
            let (k, v) = pair.trim().split_once('=')?;
            (k == name).then_some(v)
        })
    }

    /// Decides about one request.
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
            if !p.form_token.is_some_and(|t| same(t, &self.token)) {
                return Verdict::Refuse(403, "a change needs the page's token");
            }
        }
        let by_cookie = p
            .cookie
            .and_then(|c| self.cookie_token(c))
            .is_some_and(|t| same(t, &self.token));
        if by_cookie {
            return Verdict::Pass;
        }
        if !p.writes && p.query_token.is_some_and(|t| same(t, &self.token)) {
            return Verdict::SetCookie;
        }
        Verdict::Refuse(
            403,
            "this page needs the address `deja ui` printed (it carries a token made for this run)",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> Guard {
        Guard::new("t0k".into(), 4000)
    }

    fn get<'a>(host: &'a str, cookie: Option<&'a str>, query: Option<&'a str>) -> Presented<'a> {
        Presented {
            host: Some(host),
            cookie,
            query_token: query,
            ..Presented::default()
        }
    }

    #[test]
    fn the_token_in_the_address_sets_the_cookie_and_the_cookie_admits() {
        let g = guard();
        assert_eq!(
            g.check(&get("127.0.0.1:4000", None, Some("t0k"))),
            Verdict::SetCookie
        );
        assert_eq!(
            g.check(&get("localhost:4000", Some("a=b; deja_ui_4000=t0k"), None)),
            Verdict::Pass
        );
        assert_eq!(
            g.set_cookie(),
            "deja_ui_4000=t0k; Path=/; HttpOnly; SameSite=Strict"
        );
    }

    #[test]
    fn no_token_a_wrong_token_or_another_ports_cookie_is_refused() {
        let g = guard();
        for p in [
            get("127.0.0.1:4000", None, None),
            get("127.0.0.1:4000", None, Some("t0x")),
            get("127.0.0.1:4000", Some("deja_ui_4001=t0k"), None),
            get("127.0.0.1:4000", Some("deja_ui_4000=t0"), None),
        ] {
            assert!(matches!(g.check(&p), Verdict::Refuse(403, _)), "{p:?}");
        }
    }

    #[test]
    fn a_foreign_host_is_refused_even_with_the_token() {
        let g = guard();
        for host in ["evil.example:4000", "127.0.0.1:4001", "127.0.0.1"] {
            let p = get(host, Some("deja_ui_4000=t0k"), Some("t0k"));
            assert_eq!(
                g.check(&p),
                Verdict::Refuse(403, "this page answers only at its own address"),
                "{host}"
            );
        }
        assert!(matches!(
            g.check(&Presented::default()),
            Verdict::Refuse(403, _)
        ));
    }

    #[test]
    fn a_write_needs_the_form_token_and_this_origin() {
        let g = guard();
        let base = Presented {
            writes: true,
            host: Some("127.0.0.1:4000"),
            cookie: Some("deja_ui_4000=t0k"),
            ..Presented::default()
        };
        assert!(matches!(g.check(&base), Verdict::Refuse(403, _)));
        let ok = Presented {
            form_token: Some("t0k"),
            origin: Some("http://127.0.0.1:4000"),
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
        // The token in the address does not admit a write.
        let by_query = Presented {
            writes: true,
            host: Some("127.0.0.1:4000"),
            query_token: Some("t0k"),
            form_token: Some("t0k"),
            ..Presented::default()
        };
        assert!(matches!(g.check(&by_query), Verdict::Refuse(403, _)));
    }

    #[test]
    fn tokens_are_random_hex() {
        let (a, b) = (new_token().unwrap(), new_token().unwrap());
        assert_eq!(a.len(), TOKEN_BYTES * 2);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
