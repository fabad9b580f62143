//! The `sol-pi` command: everything is in the library (`sol_pi_cli::run`), which the addon's
//! `npm run replay` shares.

use std::process::ExitCode;

fn main() -> ExitCode {
    let code = sol_pi_cli::run(
        std::env::args_os(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
