//! Secret redaction, applied to every string field of what a reader returns
//! before it is stored, embedded or printed: API keys and tokens (OpenAI,
//! Anthropic, AWS, GitHub, GitLab, Slack, Google, Stripe, Hugging Face, npm,
//! PyPI), JWTs, private keys, passwords in URLs and connection strings,
//! `--api-key` arguments, `Authorization: Bearer` headers, `API_KEY=`-style
//! assignments and quoted `"apiKey": "..."` values become typed markers such
//! as `[REDACTED:github-token]`. The generic rules (assignments, quoted
//! values, and the shapes whose prefix is an ordinary word: `hf_`) redact a
//! value only when it looks like a secret (see [`looks_secret`]), so that
//! `TOKEN_LIMIT=4096` or `hf_hub_download` stay. Users can add patterns or
//! turn it off.

use regex::{Regex, RegexSet};

use deja_model::Session;

/// One rule: a pattern, the marker name, which capture group holds the
/// secret (0 = the whole match), and whether the secret must also look like
/// one ([`looks_secret`]).
struct Rule {
    name: String,
    regex: Regex,
    group: usize,
    checked: bool,
}

/// Built-in rules whose match is redacted only when [`looks_secret`] says so.
const CHECKED: &[&str] = &["huggingface-token", "secret-assignment", "quoted-secret"];

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
    // Stripe secret and restricted keys, live and test (`pk_` keys are
    // publishable, not secret).
    ("stripe-key", r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}", 0),
    ("gitlab-token", r"\bglpat-[A-Za-z0-9_\-]{20,}", 0),
    ("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}\b", 0),
    ("npm-token", r"\bnpm_[A-Za-z0-9]{36,}\b", 0),
    ("pypi-token", r"\bpypi-[A-Za-z0-9_\-]{50,}", 0),
    (
        "secret-assignment",
        // `API_KEY=...`, `export GITHUB_TOKEN=...`, `SECRET: ...` (the names
        // of environment variables and settings, upper case); the value,
        // not the name, is redacted, and not a `$VARIABLE` it refers to.
        r#"\b(?:[A-Z0-9]+_)*(?:API_?KEY|SECRET(?:_?KEY)?|TOKEN|PASSWORD|PASSWD|PRIVATE_KEY|ACCESS_KEY)(?:_[A-Z0-9]+)*\s*[=:]\s*["']?([^\s"'`;,&$\[\]{}()<>]{8,})"#,
        1,
    ),
    (
        "quoted-secret",
        // `"apiKey": "..."`, `'api_key' => '...'`, `token="..."`: a secret-named
        // key (quoted or not, any case) with a quoted value.
        r#"(?i)(?:^|[^A-Za-z0-9_])["']?(?:api[_-]?key|access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|secret[_-]?key|token|secret|password|passwd)["']?\s*(?:=>|[:=])\s*["']([^"'\s\[\]{}()<>$]{8,})["']"#,
        1,
    ),
];

/// Whether `value` looks like a secret rather than a word, a number or a
/// placeholder: at least 8 characters, of two kinds or more (lower case,
/// upper case, digits, others), and not one character repeated.
pub fn looks_secret(value: &str) -> bool {
    let len = value.chars().count();
    if len < 8 {
        return false;
    }
    let mut chars = value.chars();
    if let Some(first) = chars.next() {
        if chars.all(|c| c == first) {
            return false;
        }
    }
    let kinds = [
        value.chars().any(|c| c.is_ascii_lowercase()),
        value.chars().any(|c| c.is_ascii_uppercase()),
        value.chars().any(|c| c.is_ascii_digit()),
        value.chars().any(|c| !c.is_ascii_alphanumeric()),
    ]
    .iter()
    .filter(|k| **k)
    .count();
    kinds >= 2
}

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
                checked: CHECKED.contains(name),
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
                checked: false,
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
            out = replace(rule, &out);
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
            spec.push(u8::from(r.checked));
            spec.push(0);
        }
        let mut hash = deja_model::sha256_hex(&spec);
        hash.truncate(16);
        hash
    }

    /// A session with every string field redacted: its ids (deja's, the
    /// harness's and its parent's), project (folder, name, id), title, and
    /// each message's text and id, file path and the text an edit wrote,
    /// and command. Only the harness
    /// name, which names the reader, is kept as it is.
    pub fn session(&self, mut s: Session) -> Session {
        if self.set.is_none() {
            return s;
        }
        let opt = |v: Option<String>| v.map(|t| self.text(&t));
        s.id = self.text(&s.id);
        s.native_id = self.text(&s.native_id);
        s.parent_id = opt(s.parent_id);
        s.project.dir = opt(s.project.dir);
        s.project.name = opt(s.project.name);
        s.project.id = opt(s.project.id);
        s.title = opt(s.title);
        for m in &mut s.messages {
            m.text = self.text(&m.text);
            m.native_id = opt(m.native_id.take());
        }
        for c in &mut s.commands {
            c.command = self.text(&c.command);
        }
        for f in &mut s.files {
            f.path = self.text(&f.path);
            f.text = opt(f.text.take());
        }
        s
    }
}

fn replace(rule: &Rule, text: &str) -> String {
    let marker = format!("[REDACTED:{}]", rule.name);
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for caps in rule.regex.captures_iter(text) {
        let Some(m) = caps.get(rule.group).or_else(|| caps.get(0)) else {
            continue;
        };
        if rule.checked && !looks_secret(m.as_str()) {
            continue;
        }
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
    fn the_newer_secret_shapes_are_redacted_and_only_their_values() {
        let cases = [
            (
                "charge with sk_live_FAKEfakeFAKE0123456789 now",
                "charge with [REDACTED:stripe-key] now",
            ),
            ("rk_live_FAKEfakeFAKE0123456789", "[REDACTED:stripe-key]"),
            ("sk_test_FAKEfakeFAKE0123456789.", "[REDACTED:stripe-key]."),
            (
                "git clone https://x:glpat-FAKEfakeFAKE01234567@gitlab.com/a",
                "[REDACTED:",
            ),
            (
                "token glpat-FAKEfakeFAKE01234567",
                "token [REDACTED:gitlab-token]",
            ),
            (
                "login hf_FAKEfakeFAKEfakeFAKEfakeFAKEfake12",
                "login [REDACTED:huggingface-token]",
            ),
            (
                "npm_FAKEfakeFAKEfakeFAKEfakeFAKEfake1234",
                "[REDACTED:npm-token]",
            ),
            (
                "pypi-AgEIcHlwaS5vcmcFAKEfakeFAKEfakeFAKEfakeFAKEfake0123",
                "[REDACTED:pypi-token]",
            ),
            (
                "API_KEY=FAKEgeneric0123",
                "API_KEY=[REDACTED:secret-assignment]",
            ),
            (
                "export OPENROUTER_API_KEY=\"FAKEgeneric0123\"",
                "OPENROUTER_API_KEY=\"[REDACTED:secret-assignment]\"",
            ),
            (
                "SECRET=FAKEsecret4567 ./run",
                "SECRET=[REDACTED:secret-assignment] ./run",
            ),
            (
                "JWT_SECRET_KEY: FAKEsecret4567",
                "JWT_SECRET_KEY: [REDACTED:secret-assignment]",
            ),
            ("TOKEN=FAKEtoken89ab", "TOKEN=[REDACTED:secret-assignment]"),
            ("PASSWORD=FAKEpassw0rd", "PASSWORD=[REDACTED:password]"),
            (
                r#"{"apiKey": "FAKEjsonKey0123456"}"#,
                r#"{"apiKey": "[REDACTED:quoted-secret]"}"#,
            ),
            (
                r#"{"api_key":"FAKEjsonKey0123456"}"#,
                r#"{"api_key":"[REDACTED:quoted-secret]"}"#,
            ),
            (
                r#""token": "FAKEjson-token-01""#,
                r#""token": "[REDACTED:quoted-secret]""#,
            ),
            (
                r#""secret": 'FAKE/json+secret'"#,
                r#""secret": '[REDACTED:quoted-secret]'"#,
            ),
            (
                r#"client(token="FAKEkwarg0123")"#,
                r#"client(token="[REDACTED:quoted-secret]")"#,
            ),
        ];
        for (input, expected) in cases {
            let out = r(input);
            assert!(out.contains(expected), "{input:?} -> {out:?}");
            assert!(!out.contains("FAKE"), "{input:?} -> {out:?}");
        }
    }

    #[test]
    fn ordinary_text_is_untouched() {
        for t in [
            "The query misses the tenant predicate.",
            "use sk-learn for the model; skip tasks",
            "see https://example.org/path and user@example.org",
            "the password field is validated",
            // Words and code that share a prefix or a name with a secret.
            "the token is refreshed before it expires; pass a token: see the docs",
            "from huggingface_hub import hf_hub_download; hf_hub_download(repo_id=x)",
            "call hf_transfer and npm_config_cache, then pypi-simple",
            "sk_live_ is the prefix of a Stripe live key",
            "TOKEN_LIMIT=4096 MAX_TOKENS=100000000 TOKEN_COUNT=12345678",
            "SECRET=$SECRET_FROM_VAULT TOKEN=${{ secrets.TOKEN }} API_KEY=<your key>",
            r#"{"token": "refresh", "secret": "xxxxxxxxxxxx", "password": "hunter"}"#,
            r#"tokenizer(eos_token = "<|endoftext|>")"#,
            "a secret: nobody knows the apiKey of the token bucket",
        ] {
            assert_eq!(r(t), t);
        }
    }

    #[test]
    fn every_string_field_of_a_session_is_redacted() {
        use deja_model::{CommandRecord, FileRecord, Message, Project, Role};
        let key = "sk_live_FAKEfakeFAKE0123456789";
        let s = Session {
            harness: "test".into(),
            id: format!("id-{key}"),
            native_id: format!("native-{key}"),
            started_at_ms: 0,
            updated_at_ms: 0,
            date_approximate: false,
            project: Project {
                dir: Some(format!("/home/dev/{key}")),
                name: Some(key.into()),
                id: Some(format!("p-{key}")),
            },
            title: Some(format!("title {key}")),
            parent_id: Some(format!("parent-{key}")),
            precedence: 0,
            messages: vec![Message {
                role: Role::User,
                text: format!("text {key}"),
                timestamp_ms: 0,
                native_id: Some(format!("m-{key}")),
            }],
            files: vec![FileRecord {
                path: format!("/tmp/{key}/a.txt"),
                action: "edit",
                timestamp_ms: 0,
                text: Some(format!("let key = \"{key}\";\n")),
            }],
            commands: vec![CommandRecord {
                command: format!("curl -u {key}: https://api.stripe.com"),
                origin: "agent",
                timestamp_ms: 0,
                outcome: Default::default(),
            }],
        };
        let red = Redactor::new(&[]).unwrap().session(s);
        let all = format!("{red:?}");
        assert!(!all.contains("FAKE"), "{all}");
        assert_eq!(red.project.name.as_deref(), Some("[REDACTED:stripe-key]"));
        assert_eq!(red.native_id, "native-[REDACTED:stripe-key]");
        assert_eq!(red.harness, "test");
    }

    #[test]
    fn a_secret_looks_like_one() {
        for v in ["FAKEtoken89ab", "a1b2c3d4", "abc/def+ghi", "FAKEFAKEfake"] {
            assert!(looks_secret(v), "{v}");
        }
        for v in [
            "refresh",
            "abcdefghijkl",
            "12345678",
            "xxxxxxxxxxxx",
            "ABCDEFGHIJKL",
        ] {
            assert!(!looks_secret(v), "{v}");
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
