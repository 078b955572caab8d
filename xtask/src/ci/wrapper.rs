//! CI's compiler wrapper for the workspace's own crates: clippy on every compile where a lint can find
//! something, plain rustc (warnings denied) on the one kind where clippy can find nothing new.
//!
//! `cargo test` compiles each library twice: once as the library its binaries and integration tests link, once
//! as its unit-test harness (`--test`). The harness holds the same code plus the `#[cfg(test)]` modules, so
//! clippy on the harness lints everything the plain compile holds, unless some code exists only outside tests
//! (`cfg(not(test))`, which no workspace crate has; a test of this module keeps it that way). Clippy adds about
//! a third to a crate's compile time, so the plain library compile runs rustc itself, with `-D warnings` (rustc's
//! own lints, such as `dead_code`, do differ between the two compiles and still fail the build). Binaries,
//! examples, build scripts and integration tests have no second compile and keep clippy.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Set (to anything) in the environment of the cargo that uses this wrapper: a process of this binary started
/// with it set is cargo calling the wrapper, not a user calling the xtask.
const WRAPPING: &str = "CELLSCOPE_CI_RUSTC_WRAPPER";

/// The environment that makes cargo compile the workspace's own crates through this wrapper, with clippy's
/// warnings denied (`CLIPPY_ARGS` is how `cargo clippy` itself hands `-- -D warnings` to the driver).
/// `wrapper` is a copy of this binary (see [`install`]).
pub fn env(wrapper: &Path) -> Vec<(&'static str, String)> {
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
pub fn install() -> anyhow::Result<PathBuf> {
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

/// Whether a compile's arguments make the plain library of a crate (not its test harness).
fn is_plain_library(args: &[OsString]) -> bool {
    let has = |wanted: &str| args.iter().any(|arg| arg == wanted);
    let library = args
        .windows(2)
        .any(|pair| pair[0] == "--crate-type" && pair[1] == "lib");
    library && !has("--test")
}

/// When cargo started this process as the compiler wrapper: runs the compiler it asked for and never returns.
/// Otherwise returns, and the xtask goes on as usual.
pub fn run_if_wrapping() {
    if std::env::var_os(WRAPPING).is_none() {
        return;
    }
    let mut args = std::env::args_os().skip(1);
    let Some(rustc) = args.next() else {
        return;
    };
    let args: Vec<OsString> = args.collect();
    let mut command = if is_plain_library(&args) {
        let mut command = Command::new(&rustc);
        command.args(&args).args(["-D", "warnings"]);
        command
    } else {
        let mut command = Command::new("clippy-driver");
        command.arg(&rustc).args(&args);
        command
    };
    std::process::exit(exec(&mut command, &rustc));
}

/// Replaces this process with the compiler (so cargo sees its exit status and signals as its own); returns an
/// exit code only when that fails.
#[cfg(unix)]
fn exec(command: &mut Command, rustc: &OsStr) -> i32 {
    use std::os::unix::process::CommandExt;
    let error = command.exec();
    eprintln!(
        "rustc wrapper: could not run {:?} for {}: {error}",
        command.get_program(),
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
                "rustc wrapper: could not run {:?} for {}: {error}",
                command.get_program(),
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
    fn only_the_plain_library_compile_skips_clippy() {
        assert!(is_plain_library(&args(
            "--crate-name cellscope --edition=2024 server/src/lib.rs --crate-type lib --emit=dep-info,metadata,link"
        )));
        // The unit-test harness of the same library.
        assert!(!is_plain_library(&args(
            "--crate-name cellscope --edition=2024 server/src/lib.rs --emit=dep-info,link --test"
        )));
        // A binary, an example and a build script.
        assert!(!is_plain_library(&args(
            "--crate-name cellscope --edition=2024 server/src/main.rs --crate-type bin"
        )));
        assert!(!is_plain_library(&args(
            "--crate-name index_memory server/examples/index_memory.rs --crate-type bin"
        )));
        assert!(!is_plain_library(&args(
            "--crate-name build_script_build server/build.rs --crate-type bin"
        )));
    }

    /// The wrapper relies on the test harness holding all of a library's code: nothing may be compiled only
    /// outside tests.
    #[test]
    fn no_workspace_code_exists_only_outside_tests() {
        fn visit(dir: &Path, found: &mut Vec<String>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    visit(&path, found);
                } else if path.extension().is_some_and(|extension| extension == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    let compact: String = text.split_whitespace().collect();
                    if compact.contains("not(test)") {
                        found.push(path.display().to_string());
                    }
                }
            }
        }
        let root = crate::workspace_root();
        let mut found = Vec::new();
        for member in ["model", "server", "demo", "app", "tests"] {
            visit(&root.join(member).join("src"), &mut found);
        }
        assert!(
            root.join("model/src/lib.rs").is_file(),
            "the workspace's sources are where this test looks"
        );
        assert!(
            found.is_empty(),
            "`not(test)` in {found:?}: code compiled only outside tests is not linted by clippy in CI (see ci/wrapper.rs)"
        );
    }
}
