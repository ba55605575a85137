//! Secret redaction, applied to everything a reader returns before it is
//! stored, embedded or printed: API keys and tokens, JWTs, private keys,
//! passwords in URLs and connection strings, `--api-key` arguments and
//! `Authorization: Bearer` headers become typed markers such as
//! `[REDACTED:github-token]`. Users can add patterns or turn it off.

use regex::{Regex, RegexSet};

use deja_model::Session;

/// One rule: a pattern, the marker name, and which capture group holds the
/// secret (0 = the whole match).
struct Rule {
    name: String,
    regex: Regex,
    group: usize,
}

/// The built-in rules: (name, pattern, group holding the secret).
const BUILTIN: &[(&str, &str, usize)] = &[
    (
        "private-key",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\z)",
        0,
    ),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{16,}", 0),
    (
        "openai-key",
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
        0,
    ),
    (
        "aws-access-key",
        r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b",
        0,
    ),
    (
        "aws-secret-key",
        r#"(?i)\baws_?secret_?access_?key\b["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})"#,
        1,
    ),
    ("github-token", r"\bgh[pousr]_[A-Za-z0-9]{30,}", 0),
    ("github-token", r"\bgithub_pat_[A-Za-z0-9_]{22,}", 0),
    ("slack-token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", 0),
    ("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}", 0),
    (
        "jwt",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        0,
    ),
    (
        "bearer-token",
        r"(?i)\bauthorization\b\s*[:=]\s*[\x22']?bearer\s+([A-Za-z0-9._~+/\-]{8,}=*)",
        1,
    ),
    (
        "api-key",
        r"--[a-z\-]*api-key(?:\s+|=)(?:[A-Za-z0-9_.\-]+=)?([^\s\x22'\[]+)",
        1,
    ),
    (
        "url-password",
        r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@\[\]]+:([^\s@/\[\]]+)@",
        1,
    ),
    (
        "password",
        // No leading word boundary: `DB_PASSWORD=` and `pg_pwd=` count too.
        r#"(?i)(?:password|passwd|pwd)\s*[=:]\s*["']?([^\s;'"&,\[\]]{4,})"#,
        1,
    ),
];

/// Replaces secrets in text.
pub struct Redactor {
    rules: Vec<Rule>,
    set: Option<RegexSet>,
}

/// A bad user pattern.
#[derive(Debug, thiserror::Error)]
#[error("invalid redaction pattern `{name}` in the config (`redact.patterns`): {source}")]
pub struct PatternError {
    name: String,
    source: regex::Error,
}

impl Redactor {
    /// A redactor that changes nothing.
    pub fn disabled() -> Redactor {
        Redactor {
            rules: Vec::new(),
            set: None,
        }
    }

    /// The built-in rules plus `extra` (name, regex) patterns.
    pub fn new(extra: &[(String, String)]) -> Result<Redactor, PatternError> {
        let mut rules = Vec::new();
        for (name, pattern, group) in BUILTIN {
            let regex = Regex::new(pattern).map_err(|source| PatternError {
                name: (*name).to_string(),
                source,
            })?;
            rules.push(Rule {
                name: (*name).to_string(),
                regex,
                group: *group,
            });
        }
        for (name, pattern) in extra {
            let regex = Regex::new(pattern).map_err(|source| PatternError {
                name: name.clone(),
                source,
            })?;
            rules.push(Rule {
                name: name.clone(),
                regex,
                group: 0,
            });
        }
        let set = RegexSet::new(rules.iter().map(|r| r.regex.as_str())).map_err(|source| {
            PatternError {
                name: "(all)".into(),
                source,
            }
        })?;
        Ok(Redactor {
            rules,
            set: Some(set),
        })
    }

    /// From the config's `[redact]` section.
    pub fn from_config(c: &deja_config::Redact) -> Result<Redactor, PatternError> {
        if !c.enabled {
            return Ok(Redactor::disabled());
        }
        let extra: Vec<(String, String)> = c
            .patterns
            .iter()
            .map(|p| (p.name.clone(), p.regex.clone()))
            .collect();
        Redactor::new(&extra)
    }

    /// `text` with every secret replaced by its marker.
    pub fn text(&self, text: &str) -> String {
        let Some(set) = &self.set else {
            return text.to_string();
        };
        let matched: Vec<usize> = set.matches(text).into_iter().collect();
        if matched.is_empty() {
            return text.to_string();
        }
        let mut out = text.to_string();
        for i in matched {
            let rule = &self.rules[i];
            out = replace(&rule.regex, rule.group, &rule.name, &out);
        }
        out
    }

    /// A short fingerprint of what this redactor does (every rule's name,
    /// pattern and group; `off` when disabled): stored with each transcript,
    /// so that a change of the redaction settings re-reads what it affects.
    pub fn fingerprint(&self) -> String {
        if self.set.is_none() {
            return "off".to_string();
        }
        let mut spec = Vec::new();
        for r in &self.rules {
            spec.extend_from_slice(r.name.as_bytes());
            spec.push(0);
            spec.extend_from_slice(r.regex.as_str().as_bytes());
            spec.push(0);
            spec.extend_from_slice(r.group.to_string().as_bytes());
            spec.push(0);
        }
        let mut hash = deja_model::sha256_hex(&spec);
        hash.truncate(16);
        hash
    }

    /// A session with every text field redacted.
    pub fn session(&self, mut s: Session) -> Session {
        if self.set.is_none() {
            return s;
        }
        for m in &mut s.messages {
            m.text = self.text(&m.text);
        }
        for c in &mut s.commands {
            c.command = self.text(&c.command);
        }
        for f in &mut s.files {
            f.path = self.text(&f.path);
        }
        s.title = s.title.map(|t| self.text(&t));
        s
    }
}

fn replace(regex: &Regex, group: usize, name: &str, text: &str) -> String {
    let marker = format!("[REDACTED:{name}]");
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for caps in regex.captures_iter(text) {
        let Some(m) = caps.get(group).or_else(|| caps.get(0)) else {
            continue;
        };
        out.push_str(&text[last..m.start()]);
        out.push_str(&marker);
        last = m.end();
    }
    out.push_str(&text[last..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(text: &str) -> String {
        Redactor::new(&[]).unwrap().text(text)
    }

    #[test]
    fn every_builtin_kind_is_redacted() {
        let cases = [
            ("key sk-proj-abcdefghijklmnopqrstuvwx12 end", "[REDACTED:openai-key]"),
            ("sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv", "[REDACTED:anthropic-key]"),
            ("AKIAIOSFODNN7EXAMPLE", "[REDACTED:aws-access-key]"),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "[REDACTED:aws-secret-key]",
            ),
            ("ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED:github-token]"),
            ("gho_abcdefghijklmnopqrstuvwxyz0123456789", "[REDACTED:github-token]"),
            ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "[REDACTED:github-token]"),
            ("xoxb-123456789012-abcdefghij", "[REDACTED:slack-token]"),
            ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "[REDACTED:google-api-key]"),
            (
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "[REDACTED:jwt]",
            ),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
                "[REDACTED:private-key]",
            ),
            ("postgres://app:s3cr3tpass@db:5432/x", "postgres://app:[REDACTED:url-password]@db"),
            ("DB_PASSWORD=hunter22 next", "DB_PASSWORD=[REDACTED:password] next"),
            (
                "aider --api-key deepseek=abc123def456 --model x",
                "--api-key deepseek=[REDACTED:api-key] --model",
            ),
            (
                "curl -H 'Authorization: Bearer abcdef123456.xyz'",
                "Authorization: Bearer [REDACTED:bearer-token]",
            ),
        ];
        for (input, expected) in cases {
            let out = r(input);
            assert!(out.contains(expected), "{input:?} -> {out:?}");
        }
    }

    #[test]
    fn ordinary_text_is_untouched() {
        for t in [
            "The query misses the tenant predicate.",
            "use sk-learn for the model; skip tasks",
            "see https://example.org/path and user@example.org",
            "the password field is validated",
        ] {
            assert_eq!(r(t), t);
        }
    }

    #[test]
    fn truncated_private_key_is_redacted_to_the_end() {
        let out = r("here:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n");
        assert_eq!(out, "here:\n[REDACTED:private-key]");
    }

    #[test]
    fn user_patterns_and_disabling() {
        let red = Redactor::new(&[("acme-key".into(), "acme_[0-9a-f]{8}".into())]).unwrap();
        assert_eq!(red.text("k=acme_0123abcd."), "k=[REDACTED:acme-key].");
        assert_eq!(
            Redactor::disabled().text("ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
        );
        let bad = Redactor::new(&[("bad".into(), "(".into())])
            .err()
            .unwrap()
            .to_string();
        assert!(
            bad.contains("bad") && bad.contains("redact.patterns"),
            "{bad}"
        );
    }

    #[test]
    fn the_fingerprint_follows_the_settings() {
        let builtin = Redactor::new(&[]).unwrap().fingerprint();
        assert_eq!(builtin, Redactor::new(&[]).unwrap().fingerprint());
        let extra = |regex: &str| {
            Redactor::new(&[("x".into(), regex.into())])
                .unwrap()
                .fingerprint()
        };
        assert_ne!(builtin, extra("abc"));
        assert_ne!(extra("abc"), extra("abd"));
        assert_eq!(Redactor::disabled().fingerprint(), "off");
        assert_ne!(builtin, "off");
    }
}
