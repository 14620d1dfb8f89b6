//! The one way the CLI tests run the `tessera` binary.

use std::process::Command;

/// Runs `tessera args` with the extra environment `envs`; returns (exit code, stdout, stderr).
pub fn tessera_env(envs: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .envs(envs.iter().copied())
        .args(args)
        .output()
        .expect("binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `tessera args`; returns (exit code, stdout, stderr).
#[allow(dead_code)] // not every test binary runs it without an environment
pub fn tessera(args: &[&str]) -> (i32, String, String) {
    tessera_env(&[], args)
}
