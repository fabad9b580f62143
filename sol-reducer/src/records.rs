//! The records the reducer's modules share: a command's exit signal ([`ExitSignal`]), the
//! economics' verdict on a reduction ([`Verdict`]), a model call's usage ([`Usage`]) and the
//! kind of a likely secret ([`SecretKind`]). The fallback reasons name all four, and so do the
//! modules that make them; this module names none of those, so they depend on it and not on
//! one another in a circle. Each is re-exported where it was first defined
//! (`candidate::ExitSignal`, `economics::Verdict`, `model::Usage`, `secret::SecretKind`).

use serde::{Deserialize, Serialize};

/// What the result says about how its command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ExitSignal {
    /// The command ended successfully.
    Succeeded,
    /// The command failed: a non-zero exit, a timeout, an abort or a kill.
    Failed,
    /// The result carries no signal; its error flag alone decides.
    Unknown,
}

impl ExitSignal {
    /// Whether this signal contradicts a result's error flag.
    pub fn contradicts(self, is_error: bool) -> bool {
        match self {
            ExitSignal::Succeeded => is_error,
            ExitSignal::Failed => !is_error,
            ExitSignal::Unknown => false,
        }
    }

    /// The signal that agrees with `is_error`.
    pub fn of_error_flag(is_error: bool) -> ExitSignal {
        if is_error {
            ExitSignal::Failed
        } else {
            ExitSignal::Succeeded
        }
    }
}

/// The figures of one decision, for the journal and for people.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    /// Tokens the model would read of the result as it is.
    pub result_tokens: u64,
    /// Tokens the receipt is expected to remove from every request that carries it.
    pub removed_tokens: u64,
    /// Tokens the reducer call reads.
    pub call_input_tokens: u64,
    /// Tokens the reducer call is expected to write.
    pub call_output_tokens: u64,
    /// The expected remaining requests.
    pub horizon_requests: u32,
    /// The expected saving, in picodollars (10⁻¹² dollars, the accounting's unit).
    pub saving_picodollars: u64,
    /// The expected cost of the reducer call, in picodollars.
    pub cost_picodollars: u64,
}

impl Verdict {
    /// Whether the reduction is expected to save at least what its call costs.
    pub fn pays(&self) -> bool {
        self.removed_tokens > 0 && self.saving_picodollars >= self.cost_picodollars
    }

    /// `saving − cost`, in picodollars.
    pub fn net_picodollars(&self) -> i128 {
        i128::from(self.saving_picodollars) - i128::from(self.cost_picodollars)
    }
}

/// Tokens a model call used; all zero for a cached receipt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Tokens read from the provider's cache.
    pub cache_read: u64,
    /// Tokens written to the provider's cache.
    pub cache_write: u64,
    /// All tokens.
    pub total_tokens: u64,
}

/// Which rule recognised a likely secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SecretKind {
    /// An API key, authorization, bearer, access token or secret word with a value.
    CredentialAssignment,
    /// A password, passphrase or private key assigned a value.
    PasswordAssignment,
    /// A `--password` or `--passphrase` flag given a value.
    PasswordFlag,
    /// `-----BEGIN … PRIVATE KEY-----` or `-----END … PRIVATE KEY-----` armour.
    PrivateKeyArmour,
    /// A run of base64 lines shaped like a key's body, without its armour.
    PrivateKeyBody,
    /// An AWS access key id (`AKIA…`, `ASIA…`).
    AwsAccessKeyId,
    /// A GitHub token (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`).
    GithubToken,
    /// A Slack token (`xoxa-`, `xoxb-`, `xoxp-`, `xoxr-`, `xoxs-`).
    SlackToken,
    /// A Slack incoming-webhook URL (`hooks.slack.com/services/T…/B…/…`).
    SlackWebhook,
    /// A service token by its shape: Google API keys (`AIza…`), Hugging Face (`hf_…`),
    /// GitLab (`glpat-…`), npm (`npm_…`) and SendGrid (`SG.….…`).
    ServiceToken,
    /// A JSON Web Token: three base64url segments, the first starting with `eyJ`.
    JsonWebToken,
    /// `Bearer` followed by a token.
    BearerToken,
    /// HTTP Basic credentials (`Basic …`, `"auth": "…"`, `_auth=…`) whose base64 value
    /// decodes to `user:password`.
    BasicCredentials,
    /// A password inside a URL (`scheme://user:password@host`, `redis://:password@host`).
    UrlCredentials,
    /// A provider API key by its prefix (`sk-…`, `sk-proj-…`, `sk-ant-…`, `sk_live_…`).
    ApiKeyPrefix,
    /// An Azure connection string key (`AccountKey=…`, `SharedAccessKey=…`).
    ConnectionStringKey,
    /// A `Cookie:` or `Set-Cookie:` header with a name and a value.
    CookieHeader,
    /// A token name (`token`, `auth_token`, `X-Auth-Token`) given a token-like value.
    TokenAssignment,
    /// The word `password` or `passphrase` followed by a value with a digit or a symbol.
    PasswordAfterWord,
    /// A client's own password option: `mysql -pPASS` (and the other MySQL and MariaDB
    /// clients), `sshpass -p PASS`, `redis-cli -a PASS`, `curl -u user:PASS`.
    ClientPasswordFlag,
    /// A password prompt (`Password:`, `[sudo] password for dev:`) with the answer echoed
    /// alone on the next line.
    PasswordAfterPrompt,
}

impl SecretKind {
    /// Every kind, in the order the rules run.
    pub const ALL: [SecretKind; 21] = [
        SecretKind::PrivateKeyArmour,
        SecretKind::PrivateKeyBody,
        SecretKind::AwsAccessKeyId,
        SecretKind::GithubToken,
        SecretKind::SlackToken,
        SecretKind::SlackWebhook,
        SecretKind::ServiceToken,
        SecretKind::JsonWebToken,
        SecretKind::BearerToken,
        SecretKind::BasicCredentials,
        SecretKind::UrlCredentials,
        SecretKind::ApiKeyPrefix,
        SecretKind::ConnectionStringKey,
        SecretKind::CookieHeader,
        SecretKind::CredentialAssignment,
        SecretKind::PasswordAssignment,
        SecretKind::TokenAssignment,
        SecretKind::PasswordAfterWord,
        SecretKind::PasswordFlag,
        SecretKind::ClientPasswordFlag,
        SecretKind::PasswordAfterPrompt,
    ];

    /// The kind with this code.
    pub fn from_code(code: &str) -> Option<SecretKind> {
        SecretKind::ALL.into_iter().find(|kind| kind.code() == code)
    }

    /// The stable code of this kind, as written to the journal.
    pub fn code(self) -> &'static str {
        match self {
            SecretKind::CredentialAssignment => "credential-assignment",
            SecretKind::PasswordAssignment => "password-assignment",
            SecretKind::PasswordFlag => "password-flag",
            SecretKind::PrivateKeyArmour => "private-key-armour",
            SecretKind::AwsAccessKeyId => "aws-access-key-id",
            SecretKind::GithubToken => "github-token",
            SecretKind::SlackToken => "slack-token",
            SecretKind::JsonWebToken => "json-web-token",
            SecretKind::BearerToken => "bearer-token",
            SecretKind::UrlCredentials => "url-credentials",
            SecretKind::ApiKeyPrefix => "api-key-prefix",
            SecretKind::CookieHeader => "cookie-header",
            SecretKind::TokenAssignment => "token-assignment",
            SecretKind::PasswordAfterWord => "password-after-word",
            SecretKind::PrivateKeyBody => "private-key-body",
            SecretKind::SlackWebhook => "slack-webhook",
            SecretKind::ServiceToken => "service-token",
            SecretKind::BasicCredentials => "basic-credentials",
            SecretKind::ConnectionStringKey => "connection-string-key",
            SecretKind::ClientPasswordFlag => "client-password-flag",
            SecretKind::PasswordAfterPrompt => "password-after-prompt",
        }
    }
}
