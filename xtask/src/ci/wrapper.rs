//! CI's compiler wrapper for the workspace's own crates: clippy on every compile, and no optimisation for the
//! test harnesses and examples.
//!
//! The tests need the code under test optimised: the indexer, the model and the demo generator are at level 2
//! (see `[profile.dev]`), and the server binary the tests start is built from them. They do not need the test
//! code itself optimised, but cargo's profiles are per package, not per target, so `cargo test` compiled every
//! test harness of those packages at level 2 as well, the server's library a second time among them (its
//! unit-test harness), which costs several times longer to compile at level 2 than at level 0.
//! So the wrapper compiles every `--test` target and every example at level 0 (but the demo generator's, see
//! [`OPTIMISED_TESTS`]): the integration tests and examples still call the optimised libraries, and the unit
//! tests, which do hardly any work, run unoptimised at about the same speed.
//! Clippy is the compiler throughout (`CLIPPY_ARGS` is how `cargo clippy` itself hands `-- -D warnings` to the
//! driver), so every target is linted as `cargo clippy --workspace --all-targets` would lint it.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Set (to anything) in the environment of the cargo that uses this wrapper: a process of this binary started
/// with it set is cargo calling the wrapper, not a user calling the xtask.
const WRAPPING: &str = "CELLSCOPE_CI_RUSTC_WRAPPER";

/// The environment that makes cargo compile the workspace's own crates through this wrapper, with clippy's
/// warnings denied. `wrapper` is a copy of this binary (see [`install`]).
pub(crate) fn env(wrapper: &Path) -> Vec<(&'static str, String)> {
    vec![
        (
            "RUSTC_WORKSPACE_WRAPPER",
            wrapper.to_string_lossy().into_owned(),
        ),
        (WRAPPING, "1".to_string()),
        (
            "CLIPPY_ARGS",
            "-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__".to_string(),
        ),
    ]
}

/// Copies this binary to `target/ci/rustc-wrapper`: cargo may rebuild the xtask's own binary while the copy is
/// in use, and the wrapper's path is part of every workspace crate's fingerprint, so it must not move either.
pub(crate) fn install() -> anyhow::Result<PathBuf> {
    use anyhow::Context;
    let wrapper = crate::target_dir().join("ci/rustc-wrapper");
    if let Some(parent) = wrapper.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let exe = std::env::current_exe().context("finding the xtask's own binary")?;
    // Through a temporary name, so that a wrapper another process runs right now is replaced, not rewritten.
    let staging = wrapper.with_extension("partial");
    std::fs::copy(&exe, &staging)
        .with_context(|| format!("copying {} to {}", exe.display(), staging.display()))?;
    std::fs::rename(&staging, &wrapper)?;
    Ok(wrapper)
}

/// The package whose test harnesses stay optimised: the demo generator's tests recompute every figure of the
/// trees they generate in the test code itself, which unoptimised takes longer than compiling them optimised.
const OPTIMISED_TESTS: &str = "cellscope-demo";

/// Whether a compile makes a test harness (`--test`) or an example (a source file under `examples/`).
fn is_test_or_example(args: &[OsString]) -> bool {
    args.iter().any(|arg| arg == "--test")
        || args.iter().any(|arg| {
            let path = Path::new(arg);
            path.extension().is_some_and(|extension| extension == "rs")
                && path
                    .components()
                    .any(|component| component.as_os_str() == "examples")
        })
}

/// The arguments with any optimisation level replaced by level 0 (both `-C opt-level=N` and `-Copt-level=N`).
fn unoptimised(args: &[OsString]) -> Vec<OsString> {
    let mut out = Vec::with_capacity(args.len());
    let mut after_codegen_flag = false;
    for arg in args {
        let text = arg.to_string_lossy();
        if after_codegen_flag && text.starts_with("opt-level=") {
            out.push(OsString::from("opt-level=0"));
        } else if text.starts_with("-Copt-level=") {
            out.push(OsString::from("-Copt-level=0"));
        } else {
            out.push(arg.clone());
        }
        after_codegen_flag = text == "-C";
    }
    out
}

/// When cargo started this process as the compiler wrapper: runs the compiler it asked for and never returns.
/// Otherwise returns, and the xtask goes on as usual.
pub(crate) fn run_if_wrapping() {
    if std::env::var_os(WRAPPING).is_none() {
        return;
    }
    let mut args = std::env::args_os().skip(1);
    let Some(rustc) = args.next() else {
        return;
    };
    let mut args: Vec<OsString> = args.collect();
    // Cargo names the package being compiled in the compiler's environment.
    let package = std::env::var("CARGO_PKG_NAME").unwrap_or_default();
    if package != OPTIMISED_TESTS && is_test_or_example(&args) {
        args = unoptimised(&args);
    }
    let mut command = Command::new("clippy-driver");
    command.arg(&rustc).args(&args);
    std::process::exit(exec(&mut command, &rustc));
}

/// Replaces this process with the compiler (so cargo sees its exit status and signals as its own); returns an
/// exit code only when that fails.
#[cfg(unix)]
fn exec(command: &mut Command, rustc: &OsStr) -> i32 {
    use std::os::unix::process::CommandExt;
    let error = command.exec();
    eprintln!(
        "rustc wrapper: could not run clippy-driver for {}: {error}",
        rustc.to_string_lossy()
    );
    101
}

#[cfg(not(unix))]
fn exec(command: &mut Command, rustc: &OsStr) -> i32 {
    match command.status() {
        Ok(status) => status.code().unwrap_or(101),
        Err(error) => {
            eprintln!(
                "rustc wrapper: could not run clippy-driver for {}: {error}",
                rustc.to_string_lossy()
            );
            101
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<OsString> {
        line.split_whitespace().map(OsString::from).collect()
    }

    #[test]
    fn test_harnesses_and_examples_are_compiled_unoptimised() {
        let harness = args(
            "--crate-name cellscope --edition=2024 server/src/lib.rs --emit=dep-info,link -C opt-level=2 \
             -C debug-assertions=on --test",
        );
        assert!(is_test_or_example(&harness));
        assert_eq!(
            unoptimised(&harness),
            args(
                "--crate-name cellscope --edition=2024 server/src/lib.rs --emit=dep-info,link -C opt-level=0 \
                 -C debug-assertions=on --test"
            )
        );
        assert_eq!(
            unoptimised(&args("a.rs -Copt-level=1 -C embed-bitcode=no")),
            args("a.rs -Copt-level=0 -C embed-bitcode=no")
        );
        let example = args(
            "--crate-name index_memory server/examples/index_memory.rs --crate-type bin -C opt-level=2",
        );
        assert!(is_test_or_example(&example));
        // What the tests run stays optimised: the libraries, the binaries and the build scripts.
        for compile in [
            "--crate-name cellscope server/src/lib.rs --crate-type lib -C opt-level=2",
            "--crate-name cellscope server/src/main.rs --crate-type bin -C opt-level=2",
            "--crate-name build_script_build server/build.rs --crate-type bin",
        ] {
            assert!(!is_test_or_example(&args(compile)), "{compile}");
        }
    }
}
