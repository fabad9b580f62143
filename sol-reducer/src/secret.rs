//! The likely-secret gate: a log that seems to carry a credential is never sent to the
//! reducer model.
//!
//! This is a precaution, not a scanner. It errs towards keeping a log local (the result is
//! then simply left unreduced), but it must not fire on ordinary test output, or the
//! reducer would never run on suites that test authentication: test names, comparisons
//! and prose that merely mention a password or a token are not secrets.
//!
//! The rules read the text [`normalise`]d: zero-width and other invisible characters
//! removed, and letters that only look like ASCII ones (Cyrillic `Р`, Greek `Ο`, fullwidth
//! `Ｐ`; Unicode's confusable skeletons) read as those, so `РASS\u{200B}WORD=…` is
//! `PASSWORD=…`.
//!
//! Three families of rules run, on every line alike (assertion output included: a failed
//! assertion often prints the very value under test, `login(PGPASSWORD=hunter2)`):
//!
//! - **Token shapes**, matched anywhere: PEM private-key armour (a `BEGIN` or an `END`
//!   line: when a long output is cut to its tail, the END line is what is left), AWS access
//!   key ids, GitHub tokens, Slack tokens and incoming webhooks, Google (`AIza…`), Hugging
//!   Face (`hf_…`), GitLab (`glpat-…`), npm (`npm_…`) and SendGrid (`SG.….…`) keys, JSON Web
//!   Tokens, bearer tokens, Basic credentials whose base64 decodes to `user:password`
//!   (`Basic …`, `"auth": "…"`, `_auth=…`), passwords inside URLs (`redis://:pw@host`
//!   too), provider API keys (`sk-…`, `sk-proj-…`, `sk-ant-…`, `sk_live_…`), Azure
//!   `AccountKey=`/`SharedAccessKey=` and cookie headers with a value (`Cookie:
//!   session=…`, `Set-Cookie: …`).
//! - **Line shapes**: a run of three or more lines of 40 to 80 base64 characters mixing
//!   capitals, small letters and digits, as a key's body is wrapped, unless PEM armour of a
//!   certificate or a public key stands right before or after it; and a password prompt
//!   (`Password:`, `[sudo] password for dev:`) whose next line is one token with a digit, a
//!   symbol or an inner capital (the echoed answer).
//! - **Key-value rules**: the specification's original rule (an API key, authorization,
//!   bearer, access token or secret word followed within 32 characters on the same line by
//!   a `:` or `=` that is not part of a `::` path or a `==` comparison, and a value);
//!   passwords, passphrases and private keys in assignments (`PGPASSWORD=…`,
//!   `"password": "…"`, `password: …` alone on its line), the short names `*_PASS=…` and
//!   `pwd=…` (connection strings; a path such as `PWD=/home/u` is the working directory),
//!   a token name with a token-like value (`token=…`, `"auth_token": "…"`), the word
//!   `password` followed by a value that has a digit or a symbol (`password hunter2`), and
//!   `--password`/`--passphrase` flags with a value, and the password options of clients
//!   that take the password itself (`mysql -pPASS` and the other MySQL and MariaDB
//!   clients, attached as they require; `sshpass -p PASS`; `redis-cli -a PASS`;
//!   `curl -u user:PASS`). Values that are placeholders (`$VAR`, `${…}`, `<PASSWORD>`),
//!   masks (`****`) or ordinary words (`flag`, `required`, …) do not count.
//!
//! `-p<value>` alone is deliberately not a rule: too many tools use `-p` for something else
//! (`cargo test -p`, `mkdir -p`, `ssh -p 22`); only the clients above are read.
//! The forms each rule must and must not catch are listed in `fixtures/reducer/secrets.json`.
//!
//! ```
//! use sol_reducer::secret::{find_likely_secret, SecretKind};
//!
//! let finding = find_likely_secret("ok\nPGPASSWORD=s3cr3t psql -h db\n").expect("a secret");
//! assert_eq!(finding.kind, SecretKind::PasswordAssignment);
//! assert_eq!(finding.line, 2);
//! let assertion = "assertion failed: login(PGPASSWORD=hunter2)";
//! assert_eq!(find_likely_secret(assertion).map(|f| f.kind), Some(SecretKind::PasswordAssignment));
//! assert_eq!(find_likely_secret("assert_eq!(password, expected)"), None);
//! assert_eq!(find_likely_secret("the password must be at least 8 characters"), None);
//! ```

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::LazyLock;

pub use crate::records::SecretKind;
use base64::Engine;
use base64::engine::general_purpose::STANDARD_NO_PAD as BASE64;
use regex::Regex;
use unicode_security::confusable_detection::skeleton;

/// Where the gate found a likely secret. The matched text itself is never kept, so it
/// cannot leak into a journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SecretFinding {
    /// The rule that fired.
    pub kind: SecretKind,
    /// 1-based line of the match.
    pub line: u64,
}

/// Whether `text` seems to carry a credential; see the module documentation.
pub fn is_likely_secret(text: &str) -> bool {
    find_likely_secret(text).is_some()
}

/// The first likely secret in `text`, trying the rules in [`SecretKind::ALL`] order on the
/// text read as [`normalise`] reads it.
pub fn find_likely_secret(text: &str) -> Option<SecretFinding> {
    let text = normalise(text);
    let text = text.as_ref();
    let lower = folded_for_keywords(text);
    SecretKind::ALL.into_iter().find_map(|kind| {
        first_match(kind, text, Some(&lower)).map(|offset| SecretFinding {
            kind,
            // A rule's leading boundary may be the line feed that ends the previous line.
            line: line_number(text, offset)
                + u64::from(text.as_bytes().get(offset) == Some(&b'\n')),
        })
    })
}

/// `text` as the rules read it: invisible characters (zero-width spaces and joiners, soft
/// hyphens, every default-ignorable code point) removed, and each letter outside ASCII that
/// Unicode lists as confusable with one ASCII letter or digit replaced by it (Cyrillic `Р`,
/// Greek `Α`, fullwidth `Ｐ`), so `РАSS\u{200B}WORD=…` is read as `PASSWORD=…`. Line
/// breaks are kept, so line numbers stay those of `text`. ASCII text is returned as it is,
/// without a copy.
///
/// ```
/// use sol_reducer::secret::normalise;
///
/// assert_eq!(normalise("\u{420}ASS\u{200B}W\u{39F}RD=x"), "PASSWORD=x");
/// assert_eq!(normalise("✓ passes ×2 — ok"), "✓ passes ×2 — ok");
/// ```
pub fn normalise(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    // A log repeats the few characters outside ASCII it has (`✓`, `×`, box drawing): each
    // is looked up once.
    let mut seen: BTreeMap<char, Option<char>> = BTreeMap::new();
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
            continue;
        }
        let read = *seen.entry(c).or_insert_with(|| read_as(c));
        out.extend(read);
    }
    Cow::Owned(out)
}

/// What [`normalise`] reads `c` (outside ASCII) as: nothing for an invisible character, the
/// ASCII letter or digit a lookalike letter stands for, else `c` itself.
fn read_as(c: char) -> Option<char> {
    // Case-insensitive matching already equates the long s with `s` (the confusable table
    // would read it as `f`).
    if c == '\u{17F}' {
        return Some('s');
    }
    let mut buffer = [0; 4];
    let mut skeleton = skeleton(c.encode_utf8(&mut buffer));
    match (skeleton.next(), skeleton.next()) {
        (None, _) => None,
        (Some(ascii), None) if c.is_alphabetic() && ascii.is_ascii_alphanumeric() => Some(ascii),
        _ => Some(c),
    }
}

/// Words (lower case) one of which a text must contain for a rule to match at all: a quick
/// test that spares most logs most of the regular expressions. Each is a necessary part of
/// every match of its rule (checked by a test over the table of forms).
fn keywords(kind: SecretKind) -> &'static [&'static str] {
    match kind {
        SecretKind::PrivateKeyArmour => &["private key"],
        SecretKind::AwsAccessKeyId => &["akia", "asia", "abia", "acca"],
        SecretKind::GithubToken => &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
        SecretKind::SlackToken => &["xox"],
        SecretKind::JsonWebToken => &["eyj"],
        SecretKind::BearerToken => &["bearer"],
        SecretKind::UrlCredentials => &["://"],
        SecretKind::ApiKeyPrefix => &["sk-", "sk_", "rk_"],
        SecretKind::CookieHeader => &["cookie"],
        SecretKind::CredentialAssignment => &[
            "apikey",
            "api_key",
            "api-key",
            "authorization",
            "bearer",
            "access",
            "secret",
        ],
        SecretKind::PasswordAssignment => &["passw", "passp", "private", "pass", "pwd"],
        SecretKind::TokenAssignment => &["token"],
        SecretKind::PasswordAfterWord
        | SecretKind::PasswordFlag
        | SecretKind::PasswordAfterPrompt => &["passw", "passp"],
        // Every text is scanned for key bodies: they have no word to look for.
        SecretKind::PrivateKeyBody => &[""],
        SecretKind::SlackWebhook => &["hooks.slack.com"],
        SecretKind::ServiceToken => &["aiza", "hf_", "glpat-", "npm_", "sg."],
        SecretKind::BasicCredentials => &["basic", "auth"],
        SecretKind::ConnectionStringKey => &["accountkey", "sharedaccesskey"],
        SecretKind::ClientPasswordFlag => &["mysql", "mariadb", "sshpass", "redis-cli", "curl"],
    }
}

/// Keywords of the long password names (`password`, `passwd`, `passphrase`, `private key`).
const LONG_PASSWORD_KEYWORDS: &[&str] = &["passw", "passp", "private"];
/// Keywords of the short names (`DB_PASS`, `db.pass`, `pwd`).
const SHORT_PASSWORD_KEYWORDS: &[&str] = &["_pass", ".pass", "-pass", "pwd"];

/// `text` folded for the quick keyword test: ASCII letters in lower case, and the two
/// letters outside ASCII that the rules' case-insensitive matching equates with ASCII
/// ones (Unicode simple case folding): `ſ` (U+017F) with `s` and the Kelvin sign `K`
/// (U+212A) with `k`. Without them `ſECRET=…` would pass the keyword test unseen although
/// the expression for `secret` matches it.
fn folded_for_keywords(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    if lower.is_ascii() {
        return lower;
    }
    lower.replace('\u{17F}', "s").replace('\u{212A}', "k")
}

/// Whether `lower` (the text from [`folded_for_keywords`]; `None`: no quick test) may
/// hold a match.
fn may_match(lower: Option<&str>, words: &[&str]) -> bool {
    lower.is_none_or(|lower| words.iter().any(|word| lower.contains(word)))
}

/// Byte offset of the first match of `kind`'s rule in `text`; `lower` is `text` from
/// [`folded_for_keywords`], for the quick keyword test (`None` runs every expression).
fn first_match(kind: SecretKind, text: &str, lower: Option<&str>) -> Option<usize> {
    if !may_match(lower, keywords(kind)) {
        return None;
    }
    match kind {
        SecretKind::PrivateKeyArmour => PEM_ARMOUR.find(text).map(|m| m.start()),
        SecretKind::AwsAccessKeyId => AWS_ACCESS_KEY_ID.find(text).map(|m| m.start()),
        SecretKind::GithubToken => GITHUB_TOKEN.find(text).map(|m| m.start()),
        SecretKind::SlackToken => SLACK_TOKEN.find(text).map(|m| m.start()),
        SecretKind::JsonWebToken => JSON_WEB_TOKEN.find(text).map(|m| m.start()),
        SecretKind::BearerToken => BEARER_TOKEN
            .captures_iter(text)
            .find(|caps| caps[1].bytes().any(|byte| byte.is_ascii_digit()))
            .and_then(|caps| caps.get(0))
            .map(|m| m.start()),
        SecretKind::UrlCredentials => URL_CREDENTIALS
            .captures_iter(text)
            .find(|caps| is_concrete_value(&caps[1]))
            .and_then(|caps| caps.get(0))
            .map(|m| m.start()),
        SecretKind::ApiKeyPrefix => API_KEY_PREFIX
            .captures_iter(text)
            .find(|caps| caps[1].bytes().any(|byte| byte.is_ascii_digit()))
            .and_then(|caps| caps.get(0))
            .map(|m| m.start()),
        SecretKind::CookieHeader => COOKIE_HEADER
            .captures_iter(text)
            .find(|caps| is_concrete_value(&caps[1]))
            .and_then(|caps| caps.get(0))
            .map(|m| m.start()),
        SecretKind::CredentialAssignment => CREDENTIAL_WORD
            .find_iter(text)
            .find(|word| separator_with_value_follows(text, word.end()))
            .map(|word| word.start()),
        SecretKind::PasswordAssignment => {
            let long = may_match(lower, LONG_PASSWORD_KEYWORDS);
            let short = may_match(lower, SHORT_PASSWORD_KEYWORDS);
            [
                long.then(|| first_value_match(&PASSWORD_QUOTED_VALUE, text, is_concrete_value)),
                long.then(|| first_value_match(&PASSWORD_ATTACHED_VALUE, text, is_concrete_value)),
                long.then(|| first_value_match(&PASSWORD_COLON_LINE, text, is_concrete_value)),
                short.then(|| first_value_match(&SHORT_PASSWORD_NAME, text, is_short_name_value)),
            ]
            .into_iter()
            .flatten()
            .flatten()
            .min()
        }
        SecretKind::TokenAssignment => first_value_match(&TOKEN_ASSIGNMENT, text, is_token_value),
        SecretKind::PasswordAfterWord => {
            first_value_match(&PASSWORD_AFTER_WORD, text, is_password_word_value)
        }
        SecretKind::PasswordFlag => first_value_match(&PASSWORD_FLAG, text, |value| {
            is_concrete_value(value) && !value.starts_with('-')
        }),
        SecretKind::PrivateKeyBody => first_key_body(text),
        SecretKind::SlackWebhook => SLACK_WEBHOOK
            .captures_iter(text)
            .find(|caps| is_random_token(&caps[1]))
            .and_then(|caps| caps.get(0))
            .map(|m| m.start()),
        SecretKind::ServiceToken => first_value_match(&SERVICE_TOKEN, text, is_random_token),
        SecretKind::BasicCredentials => {
            first_value_match(&BASIC_CREDENTIALS, text, decodes_to_user_and_password)
        }
        SecretKind::ConnectionStringKey => CONNECTION_STRING_KEY
            .captures_iter(text)
            .find(|caps| is_random_token(&caps[1]))
            .and_then(|caps| caps.get(0))
            .map(|m| m.start()),
        SecretKind::ClientPasswordFlag => {
            first_value_match(&CLIENT_PASSWORD_FLAG, text, |value| {
                // `curl -u user:password`: the password is what follows the first colon.
                let password = value
                    .split_once(':')
                    .map_or(value, |(_, password)| password);
                is_concrete_value(password) && !password.starts_with('-')
            })
        }
        SecretKind::PasswordAfterPrompt => {
            first_value_match(&PASSWORD_AFTER_PROMPT, text, is_prompt_answer)
        }
    }
}

/// Names that hold a password, passphrase or private key, with any prefix or suffix of
/// identifier characters (`PGPASSWORD`, `db.password`, `--password`, `private_key_pem`).
const PASSWORD_KEY: &str =
    r"[A-Za-z0-9_.\-]*(?:password|passwd|passphrase|private[ _.\-]?key)[A-Za-z0-9_]*";

fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("the secret patterns are valid")
}

static PEM_ARMOUR: LazyLock<Regex> =
    LazyLock::new(|| regex(r"-----(?:BEGIN|END) [A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----"));
/// A Slack incoming webhook; its last segment is the secret.
static SLACK_WEBHOOK: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)hooks\.slack\.com/(?:services|workflows|triggers)/T[A-Z0-9]+/[A-Z0-9]+/([A-Za-z0-9]{16,})",
    )
});
/// Tokens whose prefix names the service; the random part (checked in code) tells them
/// apart from names such as `hf_hub_download` or `npm_config_registry`.
static SERVICE_TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?:^|[^A-Za-z0-9_\-.])(?:AIza([0-9A-Za-z_\-]{35})|hf_([A-Za-z0-9]{30,})|glpat-([A-Za-z0-9_\-]{20,})|npm_([A-Za-z0-9]{36})|SG\.([A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}))",
    )
});
/// `Basic …` (an `Authorization` header), `"auth": "…"` (a Docker config), `_auth=…` (an
/// `.npmrc`): a base64 value, decoded in code.
static BASIC_CREDENTIALS: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r#"(?i)(?:(?:^|[^A-Za-z0-9_\-])basic[ \t]+|(?:^|[^A-Za-z0-9])_?auth["']?[ \t]*[:=][ \t]*["']?)([A-Za-z0-9+/]{8,}={0,2})"#,
    )
});
/// `AccountKey=…` and `SharedAccessKey=…` of Azure connection strings.
static CONNECTION_STRING_KEY: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?i)(?:^|[^A-Za-z0-9])(?:AccountKey|SharedAccessKey)[ \t]*=[ \t]*([A-Za-z0-9+/]{20,}={0,2})",
    )
});
/// The clients whose password option takes the password itself: `mysql -pPASS` (attached:
/// `mysql -p db` prompts and names a database), `sshpass -p PASS`, `redis-cli -a PASS`,
/// `curl -u user:PASS`. `-p` alone is not a rule: most tools use it for something else.
static CLIENT_PASSWORD_FLAG: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r#"(?:^|[\s;&|('"/])(?:(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlsh|mariadb|mariadb-dump|mariadb-admin)(?:[ \t]+[^\s;&|]+)*?[ \t]+-p([^\s;&|'"]+)|sshpass[ \t]+-p[ \t]*([^\s;&|'"]+)|redis-cli(?:[ \t]+[^\s;&|]+)*?[ \t]+-a[ \t]+([^\s;&|'"]+)|curl(?:[ \t]+[^\s;&|]+)*?[ \t]+(?:-u|--user)[ \t=]*["']?([^\s:"']*:[^\s"']+))"#,
    )
});
/// A line that ends with a password prompt (`Password:`, `Enter password for admin:`,
/// `[sudo] password for dev:`, `Password (again):`), then the next line alone, which is the
/// echoed answer.
static PASSWORD_AFTER_PROMPT: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?im)^[^\n]*?(?:password|passwd|passphrase)(?:[ \t]+for[ \t]+[^\n:]{1,100}|[ \t]*\([^)\n]{0,40}\))?[ \t]*:[ \t]*\r?\n[ \t]*(\S+)[ \t]*\r?$",
    )
});
static AWS_ACCESS_KEY_ID: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?:^|[^A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?:[^A-Za-z0-9]|$)")
});
static GITHUB_TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?:^|[^A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})")
});
static SLACK_TOKEN: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?:^|[^A-Za-z0-9])xox[abprs]-[A-Za-z0-9\-]{10,}"));
static JSON_WEB_TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    regex(r"(?:^|[^A-Za-z0-9_\-])eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}")
});
/// A bearer token has at least 16 token characters; a digit among them (checked in code)
/// tells it apart from prose such as "Bearer authentication".
static BEARER_TOKEN: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)(?:^|[^A-Za-z0-9_])bearer[ \t]+([A-Za-z0-9._~+/\-]{16,}=*)"));
/// The user may be empty (`redis://:password@host`).
static URL_CREDENTIALS: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)[a-z][a-z0-9+.\-]*://[^\s/:@]*:([^\s/@]+)@"));
/// `sk-` keys (OpenAI, `sk-proj-`, Anthropic `sk-ant-api03-`, …) and Stripe-style
/// `sk_live_`/`rk_test_` keys; a digit in the key (checked in code) tells it apart from a
/// hyphenated name such as `sk-learn-tutorial-for-beginners`.
static API_KEY_PREFIX: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r"(?:^|[^A-Za-z0-9_\-])((?:sk-(?:proj-|ant-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,})|(?:[sr]k_(?:live|test)_[A-Za-z0-9]{16,}))",
    )
});
/// `Cookie: name=value` and `Set-Cookie: name=value`, the value at least 6 characters
/// (`theme=dark` is a preference, not a session).
static COOKIE_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r#"(?i)(?:^|[^A-Za-z0-9_\-])(?:set-)?cookie["']?[ \t]*:[ \t]*["']?[^\s=;"']+=([^\s;"']{6,})"#,
    )
});
static CREDENTIAL_WORD: LazyLock<Regex> =
    LazyLock::new(|| regex(r"(?i)api[_\-]?key|authorization|bearer|access[_ \-]?token|secret"));
/// `password = "…"`, `"password": '…'`, `password := "…"`; the value is quoted.
static PASSWORD_QUOTED_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    regex(&format!(
        r#"(?i){PASSWORD_KEY}["']?[ \t]*(?::=|=>|:|=)[ \t]*(?:"([^"\r\n]*)"|'([^'\r\n]*)')"#
    ))
});
/// `PGPASSWORD=…`, `--password=…`: the value is attached to the `=`, as in shells and
/// environment listings (`let password = expected;` has spaces and is code, not a value).
static PASSWORD_ATTACHED_VALUE: LazyLock<Regex> =
    LazyLock::new(|| regex(&format!(r#"(?i){PASSWORD_KEY}=([^\s"'=][^\s"']*)"#)));
/// `password: hunter2` with nothing else on the line, as in YAML or a printed config;
/// "password: must be 8 characters" is prose.
static PASSWORD_COLON_LINE: LazyLock<Regex> = LazyLock::new(|| {
    regex(&format!(
        r#"(?im){PASSWORD_KEY}["']?[ \t]*:[ \t]*([^\s"':][^\s]*?)[ \t]*[,;}}]?[ \t]*\r?$"#
    ))
});
/// `DB_PASS=…`, `mysql.pass=…`, `Pwd=…;` (connection strings), `"db_pass": "…"`: `pass`
/// only after a prefix (`pass=3` counts tests), the value attached to `=` or quoted.
static SHORT_PASSWORD_NAME: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r#"(?i)(?:^|[^A-Za-z0-9_.\-])(?:(?:[A-Za-z0-9]+[_.\-])+pass|(?:[A-Za-z0-9]+[_.\-])*pwd)(?:=([^\s"';,&]+)|["']?[ \t]*(?::|=)[ \t]*(?:"([^"\r\n]*)"|'([^'\r\n]*)'))"#,
    )
});
/// `token=…`, `auth_token: …`, `"X-Auth-Token": "…"`: a name ending in `token` (not
/// `tokens`, `token_count`, `max_tokens`) and a separator (not `::`).
static TOKEN_ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r#"(?i)(?:^|[^A-Za-z0-9_\-])[A-Za-z0-9_\-]*token["']?[ \t]*(?::=|=>|=|:)[ \t]*(?:"([^"\r\n]*)"|'([^'\r\n]*)'|([^\s"',;&)\]}]+))"#,
    )
});
/// `password hunter2`, `passphrase 'correct horse'`: the word, blanks, one value.
static PASSWORD_AFTER_WORD: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r#"(?i)(?:^|[^A-Za-z0-9_\-])(?:password|passwd|passphrase)[ \t]+("[^"\r\n]+"|'[^'\r\n]+'|[^\s]+)"#,
    )
});
/// `--password hunter2`, `--db-passphrase "…"`.
static PASSWORD_FLAG: LazyLock<Regex> = LazyLock::new(|| {
    regex(
        r#"(?i)(?:^|[\s"'(])--[A-Za-z0-9\-]*(?:password|passwd|passphrase)[ \t]+("[^"\r\n]*"|'[^'\r\n]*'|[^\s]+)"#,
    )
});

/// Offset of the first match of `rule` whose value (the first group that matched, without
/// its quotes and trailing punctuation) passes `accept`.
fn first_value_match(rule: &Regex, text: &str, accept: impl Fn(&str) -> bool) -> Option<usize> {
    rule.captures_iter(text).find_map(|caps| {
        let whole = caps.get(0)?;
        let value = caps.iter().skip(1).flatten().next()?.as_str();
        accept(unquote(value)).then_some(whole.start())
    })
}

fn unquote(value: &str) -> &str {
    let trimmed = value.trim_end_matches([']', ')', '}', ',', ';', '.']);
    for quote in ['"', '\''] {
        if let Some(inner) = trimmed
            .strip_prefix(quote)
            .and_then(|rest| rest.strip_suffix(quote))
        {
            return inner;
        }
    }
    trimmed
}

/// Words that follow "password" in prose and help texts rather than being one.
const PROSE_VALUES: [&str; 58] = [
    "a",
    "accepted",
    "an",
    "and",
    "are",
    "argument",
    "arguments",
    "can",
    "cannot",
    "changed",
    "empty",
    "expired",
    "false",
    "field",
    "flag",
    "for",
    "hidden",
    "if",
    "incorrect",
    "invalid",
    "is",
    "length",
    "masked",
    "may",
    "mismatch",
    "missing",
    "must",
    "nil",
    "no",
    "none",
    "not",
    "null",
    "of",
    "ok",
    "only",
    "option",
    "optional",
    "options",
    "or",
    "parameter",
    "prompt",
    "redacted",
    "rejected",
    "required",
    "reset",
    "set",
    "should",
    "the",
    "to",
    "too",
    "true",
    "undefined",
    "unset",
    "updated",
    "value",
    "was",
    "when",
    "wrong",
];

/// Whether `value` looks like an actual secret rather than a placeholder, a mask, a
/// variable reference or an ordinary word.
fn is_concrete_value(value: &str) -> bool {
    let Some(first) = value.chars().next() else {
        return false;
    };
    if matches!(first, '$' | '<' | '{' | '[' | '%' | '(') {
        return false;
    }
    if value
        .chars()
        .all(|c| matches!(c, '*' | 'x' | 'X' | '•' | '#' | '.'))
    {
        return false;
    }
    let lower = value.to_ascii_lowercase();
    !PROSE_VALUES.contains(&lower.as_str())
}

/// A value for `*_PASS` or `pwd`: concrete, at least 3 characters, not only digits (test
/// counters) and not a path (`PWD=/home/u` is the working directory).
fn is_short_name_value(value: &str) -> bool {
    is_concrete_value(value)
        && value.chars().count() >= 3
        && !value.bytes().all(|byte| byte.is_ascii_digit())
        && !looks_like_path(value)
}

/// A value for a token name: at least 8 token characters with a digit among them.
fn is_token_value(value: &str) -> bool {
    value.len() >= 8
        && value
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"._~+/=-".contains(&byte))
        && value.bytes().any(|byte| byte.is_ascii_digit())
        && is_concrete_value(value)
        && !value.starts_with(['/', '.', '~'])
}

/// A value after the bare word `password`: concrete, at least 4 characters, with a digit
/// or a symbol (`hunter2`, `s3cret!`; "password reset", "password must" are
/// prose). A trailing `:` is punctuation ("password hash: …").
fn is_password_word_value(value: &str) -> bool {
    let value = value.trim_end_matches(':');
    if value.chars().count() < 4 || value.starts_with('-') || !is_concrete_value(value) {
        return false;
    }
    value.chars().any(|c| c.is_alphanumeric())
        && value
            .chars()
            .any(|c| c.is_ascii_digit() || "!@#$%^&*+=?~".contains(c))
        && !looks_like_path(value)
}

/// A random-looking token: letters and digits, or letters of both cases (not a name such
/// as `hub_download`, not a placeholder such as `XXXXXXXXXXXXXXXX`).
fn is_random_token(token: &str) -> bool {
    let has = |test: fn(&u8) -> bool| token.as_bytes().iter().any(test);
    let digit = has(u8::is_ascii_digit);
    let (upper, lower) = (has(u8::is_ascii_uppercase), has(u8::is_ascii_lowercase));
    (digit && (upper || lower)) || (upper && lower)
}

/// Whether a base64 value decodes to `user:password`: printable ASCII without blanks, a
/// colon, and a password after it.
fn decodes_to_user_and_password(value: &str) -> bool {
    let Ok(bytes) = BASE64.decode(value.trim_end_matches('=')) else {
        return false;
    };
    let Ok(decoded) = std::str::from_utf8(&bytes) else {
        return false;
    };
    decoded.bytes().all(|byte| byte.is_ascii_graphic())
        && decoded
            .split_once(':')
            .is_some_and(|(_, password)| !password.is_empty())
}

/// An answer echoed after a password prompt: one concrete token of 4 to 64 characters,
/// not code (`login(password)`), a path or a test path (`a::b`), with a digit, a symbol
/// (not `_` or `-`, which identifiers have) or a capital letter
/// after its first character (`hunter2`, `Tr0ub4dor&3`, `CorrectHorse`; a status word such
/// as `Welcome!` or `Authenticated` is not one).
fn is_prompt_answer(value: &str) -> bool {
    let word = value.trim_end_matches(['!', '.', ',', ';', ':']);
    let length = word.chars().count();
    if !(4..=64).contains(&length)
        || !is_concrete_value(word)
        || word.contains(['(', ')', '='])
        || word.contains("::")
        || looks_like_path(word)
    {
        return false;
    }
    word.chars()
        .any(|c| c.is_ascii_digit() || "!@#$%^&*+?~|".contains(c))
        || word.chars().skip(1).any(|c| c.is_ascii_uppercase())
}

/// Offset of the first run of key-body lines ([`is_key_body_line`]), at least
/// [`KEY_BODY_LINES`] of them, that is not a certificate's or a public key's body (the
/// armour line just before or after the run says so).
fn first_key_body(text: &str) -> Option<usize> {
    let mut run: Option<(usize, usize, &str)> = None; // (start, lines, line before)
    let mut previous = "";
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim_end_matches(['\n', '\r']);
        if is_key_body_line(trimmed) {
            match &mut run {
                Some((_, lines, _)) => *lines += 1,
                None => run = Some((start, 1, previous)),
            }
        } else if let Some((run_start, lines, before)) = run.take()
            && lines >= KEY_BODY_LINES
            && !is_public_armour(before)
            && !is_public_armour(trimmed)
        {
            return Some(run_start);
        }
        previous = trimmed;
    }
    run.filter(|&(_, lines, before)| lines >= KEY_BODY_LINES && !is_public_armour(before))
        .map(|(start, _, _)| start)
}

/// Consecutive body lines that make a key: an EC key's body has three.
const KEY_BODY_LINES: usize = 3;

/// A line of a key's base64 body, as PEM (64 characters) or OpenSSH (70) wrap it:
/// 40 to 80 base64 characters (`=` only at the end) with a capital letter, a small letter
/// and a digit among them, alone on the line but for indentation. Hex digests (no capitals)
/// and words are not.
fn is_key_body_line(line: &str) -> bool {
    let body = line
        .trim_start_matches([' ', '\t'])
        .trim_end_matches([' ', '\t']);
    if !(40..=80).contains(&body.len()) {
        return false;
    }
    let data = body.trim_end_matches('=');
    data.bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || byte == b'+' || byte == b'/')
        && data.bytes().any(|byte| byte.is_ascii_uppercase())
        && data.bytes().any(|byte| byte.is_ascii_lowercase())
        && data.bytes().any(|byte| byte.is_ascii_digit())
}

/// PEM armour of something that is not a private key (`-----BEGIN CERTIFICATE-----`,
/// `-----END PUBLIC KEY-----`).
fn is_public_armour(line: &str) -> bool {
    let line = line.trim();
    (line.starts_with("-----BEGIN ") || line.starts_with("-----END "))
        && line.ends_with("-----")
        && !line.contains("PRIVATE KEY")
}

fn looks_like_path(value: &str) -> bool {
    value.starts_with(['/', '~', '.', '\\']) || value.contains('/')
}

/// The spec's original rule after a credential word ending at `word_end`: within 32
/// characters on the same line, a `:` or `=` separator followed by a value.
///
/// Only the first `:` or `=` after the word is considered, and it does not count when it
/// belongs to a `::` path, an `==`/`!=`/`<=`/`>=` comparison, or sits between a name and a
/// digit (`src/auth.rs:42`, `12:00`): the word is then part of a path, a test name or a
/// comparison, not a key.
fn separator_with_value_follows(text: &str, word_end: usize) -> bool {
    let rest = &text[word_end..];
    let line = &rest[..rest.find(['\n', '\r']).unwrap_or(rest.len())];
    let mut previous = text[..word_end].chars().next_back();
    for (index, (offset, c)) in line.char_indices().enumerate() {
        if index > 32 {
            return false;
        }
        if c != ':' && c != '=' {
            previous = Some(c);
            continue;
        }
        let after = &line[offset + c.len_utf8()..];
        let next = after.chars().next();
        let separator = if c == ':' {
            previous != Some(':')
                && next != Some(':')
                && !(next.is_some_and(|n| n.is_ascii_digit())
                    && previous.is_some_and(|p| !p.is_whitespace() && p != '"' && p != '\''))
        } else {
            !matches!(previous, Some('=' | '!' | '<' | '>')) && next != Some('=')
        };
        return separator && value_follows(after.strip_prefix(['=', '>']).unwrap_or(after));
    }
    false
}

/// Whether `after` (the text after a separator) starts, past blanks, with a value: a
/// character other than a separator, or a quote with something inside.
fn value_follows(after: &str) -> bool {
    let value = after.trim_start_matches([' ', '\t']);
    let mut chars = value.chars();
    match chars.next() {
        None | Some(':' | '=') => false,
        Some(quote @ ('"' | '\'')) => chars.next().is_some_and(|c| c != quote),
        Some(_) => true,
    }
}

fn line_number(text: &str, offset: usize) -> u64 {
    text.as_bytes()[..offset]
        .iter()
        .filter(|&&byte| byte == b'\n')
        .count() as u64
        + 1
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{SecretKind, first_match, folded_for_keywords};

    fn same_with_and_without_keywords(text: &str) -> Result<(), TestCaseError> {
        let lower = folded_for_keywords(text);
        for kind in SecretKind::ALL {
            prop_assert_eq!(
                first_match(kind, text, Some(&lower)),
                first_match(kind, text, None),
                "{:?} on {:?}",
                kind,
                text
            );
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn keywords_never_hide_a_match_in_generated_text(
            text in "([ -~]|\\n|(?i:pass|pwd|token|cookie|secret|bearer|sk-|key|api)){0,80}",
        ) {
            same_with_and_without_keywords(&text)?;
        }
    }

    /// The fold knows every letter outside ASCII that case-insensitive matching equates with
    /// an ASCII letter: none is left over once the text is folded.
    #[test]
    fn the_fold_covers_every_letter_that_matches_an_ascii_one() {
        let others: String = (0x80..=0x10FFFF_u32).filter_map(char::from_u32).collect();
        let ascii_letter = regex::Regex::new("(?i)[a-z]").expect("a valid expression");
        let found: Vec<char> = ascii_letter
            .find_iter(&others)
            .flat_map(|m| m.as_str().chars())
            .collect();
        assert_eq!(found, ['\u{17F}', '\u{212A}']);
        let folded = folded_for_keywords(&others);
        let still_other: String = folded.chars().filter(|c| !c.is_ascii()).collect();
        assert_eq!(
            folded.chars().filter(char::is_ascii).collect::<String>(),
            "sk"
        );
        assert!(ascii_letter.find(&still_other).is_none());
        assert_eq!(
            super::find_likely_secret("\u{17F}ECret:SK-").map(|f| f.kind),
            Some(SecretKind::CredentialAssignment)
        );
        assert_eq!(
            super::find_likely_secret("\u{212A}EY: x\nBEARER_TO\u{212A}EN=abc123").is_some(),
            super::find_likely_secret("KEY: x\nBEARER_TOKEN=abc123").is_some()
        );
    }

    /// The quick keyword test never hides a match: over every line of the table of forms,
    /// and over each line with its letters upper-cased, every rule finds the same with and
    /// without it.
    #[test]
    fn keywords_are_necessary() {
        let table: serde_json::Value =
            serde_json::from_str(include_str!("../../fixtures/reducer/secrets.json"))
                .expect("the table is JSON");
        let cases = table["cases"].as_array().expect("cases");
        assert!(cases.len() > 100);
        for case in cases {
            let line = super::normalise(case["line"].as_str().expect("a line"));
            for text in [line.to_string(), line.to_ascii_uppercase()] {
                let lower = folded_for_keywords(&text);
                for kind in SecretKind::ALL {
                    assert_eq!(
                        first_match(kind, &text, Some(&lower)),
                        first_match(kind, &text, None),
                        "{kind:?} on {text:?}"
                    );
                }
            }
        }
    }
}
