//! The likely-secret gate, both ways: credentials are caught, test output and prose are not.

use sol_reducer::secret::{SecretKind, find_likely_secret, is_likely_secret};

const GITHUB_CLASSIC: &str = "ghp_1A2b3C4d5E6f7G8h9I0jKlMnOpQrStUvWxYz";

#[test]
fn credentials_are_caught() {
    let github_pat = format!("github_pat_11ABCDEFG0123456789_{}", "aBcDeFgHiJ".repeat(5));
    let cases: Vec<(String, SecretKind)> = vec![
        // The original rule.
        ("API_KEY=sk-live-4f9a2c".into(), SecretKind::CredentialAssignment),
        ("x-api-key: 7f3b9e0a11".into(), SecretKind::CredentialAssignment),
        ("client_secret: 9f8e7d6c".into(), SecretKind::CredentialAssignment),
        (r#"{"access_token": "ya29.a0AfH6"}"#.into(), SecretKind::CredentialAssignment),
        ("Authorization: Bearer abc.def".into(), SecretKind::CredentialAssignment),
        (r#"curl -H "Authorization: Bearer $TOKEN" https://api.example"#.into(), SecretKind::CredentialAssignment),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG".into(), SecretKind::CredentialAssignment),
        // Passwords and passphrases in assignments.
        ("PGPASSWORD=s3cr3t psql -h db -U app".into(), SecretKind::PasswordAssignment),
        ("export DB_PASSWORD=hunter2".into(), SecretKind::PasswordAssignment),
        (r#"{"user": "admin", "password": "hunter2"}"#.into(), SecretKind::PasswordAssignment),
        ("  password: hunter2".into(), SecretKind::PasswordAssignment),
        ("password: 'correct horse'".into(), SecretKind::PasswordAssignment),
        (r#"DB_PASSPHRASE="correct horse battery staple""#.into(), SecretKind::PasswordAssignment),
        ("let password = \"hunter2\";".into(), SecretKind::PasswordAssignment),
        ("pass := \"x\"; password := \"hunter2\"".into(), SecretKind::PasswordAssignment),
        ("spring.datasource.password=Tr0ub4dor".into(), SecretKind::PasswordAssignment),
        (r#"private_key = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC""#.into(), SecretKind::PasswordAssignment),
        ("mysql --password=hunter2 -u root".into(), SecretKind::PasswordAssignment),
        ("test_login[password=hunter2] PASSED".into(), SecretKind::PasswordAssignment),
        // Password flags with a value.
        ("pg_dump --password hunter2 app".into(), SecretKind::PasswordFlag),
        ("openssl pkcs12 --passphrase 'tr0ub4dor' -in a.p12".into(), SecretKind::PasswordFlag),
        ("deploy --db-password Tr0ub4dor --yes".into(), SecretKind::PasswordFlag),
        // Token shapes.
        ("-----BEGIN OPENSSH PRIVATE KEY-----".into(), SecretKind::PrivateKeyArmour),
        ("-----BEGIN RSA PRIVATE KEY-----".into(), SecretKind::PrivateKeyArmour),
        ("-----BEGIN PRIVATE KEY-----".into(), SecretKind::PrivateKeyArmour),
        ("-----BEGIN PGP PRIVATE KEY BLOCK-----".into(), SecretKind::PrivateKeyArmour),
        ("using AKIAIOSFODNN7EXAMPLE for uploads".into(), SecretKind::AwsAccessKeyId),
        ("key=ASIAJ7XQ2EXAMPLE4Z2Q;".into(), SecretKind::AwsAccessKeyId),
        (format!("remote: {GITHUB_CLASSIC}"), SecretKind::GithubToken),
        (format!("GH={github_pat}"), SecretKind::GithubToken),
        ("slack xoxb-123456789012-1234567890123-AbCdEfGhIjKl".into(), SecretKind::SlackToken),
        (
            "jwt eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U".into(),
            SecretKind::JsonWebToken,
        ),
        ("retrying with bearer 0123456789abcdefABCDEF".into(), SecretKind::BearerToken),
        ("DATABASE_URL postgres://app:hunter2@db:5432/app".into(), SecretKind::UrlCredentials),
    ];
    for (text, kind) in &cases {
        let finding = find_likely_secret(text).unwrap_or_else(|| panic!("missed {text:?}"));
        assert_eq!(finding.kind, *kind, "{text:?}");
    }
}

#[test]
fn test_output_and_prose_are_not_secrets() {
    let clean = [
        // Assertions.
        "assert_eq!(password, expected)",
        "assert_eq!(config.password, \"hunter2\");",
        "E       AssertionError: assert password == 'hunter2'",
        "    assert response.json()[\"password\"] == \"hunter2\"",
        // Prose and help texts.
        "the password must be at least 8 characters",
        "Password: must be at least 8 characters",
        "error: password: too short",
        "Password: required",
        "Password: ********",
        "Enter password:",
        "      --password <PASSWORD>  Password for the database user",
        "The --password flag is required",
        "use --passphrase to unlock the key store",
        "PGPASSWORD is not set; falling back to .pgpass",
        "password=${DB_PASSWORD}",
        "export PGPASSWORD=$(cat /run/pg.pass)",
        "Bearer authentication is required",
        "Authorization header missing",
        "the access token expired at 12:00",
        // Test names and locations.
        "test auth::test_password_reset ... ok",
        "test auth::tests::rejects_bad_secret ... FAILED",
        "thread 'auth::tests::rejects_bad_secret' panicked at src/auth.rs:10:5:",
        "thread 'http::authorization_header_is_required' panicked at src/http.rs:42:5:",
        "tests/test_secrets.py::test_rotation PASSED",
        "src/secret_store.rs:88:12: warning: unused variable",
        "✓ src/auth/session.test.ts > refreshes the access token before expiry 3ms",
        "test api_key_is_required ... ok",
        // Code that compares or reads a password.
        "if password == expected:",
        "if (password != confirm) return;",
        "let password = read_password_from_tty()?;",
        "password = getpass.getpass()",
        "password == \"hunter2\"",
        "12 |     let secret == other;",
        // Placeholders and short shapes.
        "token ghp_... (redacted)",
        "xoxb-123",
        "AKIA1234",
        "https://example.com/path:80",
        "https://user:${PASSWORD}@example.com",
        "https://user:****@example.com",
    ];
    for text in clean {
        assert_eq!(find_likely_secret(text), None, "{text:?}");
    }
}

#[test]
fn the_finding_names_the_line_but_not_the_secret() {
    let text = "running\nok\n\nPGPASSWORD=s3cr3t psql\n";
    let finding = find_likely_secret(text).expect("a secret");
    assert_eq!(finding.line, 4);
    assert!(!format!("{finding:?}").contains("s3cr3t"));
    assert!(is_likely_secret(text));
}

#[test]
fn token_shapes_are_caught_even_on_assertion_lines() {
    let text = format!("assert_eq!(token, \"{GITHUB_CLASSIC}\")");
    assert_eq!(
        find_likely_secret(&text).map(|finding| finding.kind),
        Some(SecretKind::GithubToken)
    );
}

#[test]
fn every_kind_has_a_distinct_code() {
    let mut codes: Vec<&str> = SecretKind::ALL.iter().map(|kind| kind.code()).collect();
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), SecretKind::ALL.len());
}
