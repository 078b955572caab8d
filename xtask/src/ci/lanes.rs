//! The CI's test run: the test binaries one `cargo test --no-run` built, run in two lanes side by side.
//!
//! `cargo test` runs its binaries one after another, so the browser tests (one at a time by design, mostly waiting
//! on Chromium and the server) left a core idle for two minutes while the other binaries waited their turn. Here
//! the binaries run in lanes side by side (the caller says which binary goes where; the doc tests end the last
//! lane); the soak runs in whichever lane ends first. Each binary runs as `cargo test` would run it (from its package's directory, with
//! `CARGO_MANIFEST_DIR` set); its output is kept in `target/ci/tests/` and printed whole when it ends, so the two
//! lanes never interleave lines.

use anyhow::{Context, bail};
use serde::Deserialize;
use std::io::{BufRead, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

/// A test executable cargo built (a unit-test harness, an integration test or a bin's tests).
#[derive(Debug, Clone)]
pub(super) struct TestBinary {
    pub package: String,
    /// The target's kind and name as cargo prints them: `lib cellscope`, `test suite`, `bin cellscope`.
    pub target: String,
    pub executable: PathBuf,
    pub manifest_dir: PathBuf,
}

/// The fields of cargo's `compiler-artifact` message that name a test executable.
#[derive(Deserialize)]
struct Artifact {
    reason: String,
    #[serde(default)]
    package_id: String,
    #[serde(default)]
    manifest_path: PathBuf,
    #[serde(default)]
    executable: Option<PathBuf>,
    #[serde(default)]
    target: Option<ArtifactTarget>,
    #[serde(default)]
    profile: Option<ArtifactProfile>,
}

#[derive(Deserialize)]
struct ArtifactTarget {
    name: String,
    kind: Vec<String>,
}

#[derive(Deserialize)]
struct ArtifactProfile {
    test: bool,
}

/// The package name in a cargo package id (`path+file:///…/server#cellscope@0.1.0`, or `…/tests#0.1.0` when
/// the name is the directory's), falling back to the manifest's directory name.
fn package_name(package_id: &str, manifest_path: &Path) -> String {
    let after_hash = package_id.rsplit('#').next().unwrap_or(package_id);
    match after_hash.split_once('@') {
        Some((name, _)) if !name.is_empty() => name.to_string(),
        _ => manifest_path
            .parent()
            .and_then(Path::file_name)
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default(),
    }
}

/// Runs `cargo <args> --message-format=json-render-diagnostics` (a `cargo test … --no-run`) with `env` and returns
/// the test executables it built, in cargo's order. It runs at the lowest priority: on a fresh clone it runs beside
/// the wasm32 build, whose cores it should only take when that build leaves one idle. The compiler's messages go to
/// `log`, so they do not interleave with the other side's, and a failure carries their last lines.
pub(super) fn build(
    args: &[&str],
    env: &[(&str, String)],
    log: &Path,
) -> anyhow::Result<Vec<TestBinary>> {
    let mut all_args = vec!["-n", "19", "cargo"];
    all_args.extend_from_slice(args);
    all_args.push("--message-format=json-render-diagnostics");
    let shown: Vec<String> = env
        .iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect();
    eprintln!(
        "$ {} nice {}  (output: {})",
        shown.join(" "),
        all_args.join(" "),
        log.display()
    );
    let log_file = crate::process::create_log(log)?;
    let mut child = Command::new("nice")
        .args(&all_args)
        .envs(env.iter().map(|(key, value)| (key, value)))
        .stdout(Stdio::piped())
        .stderr(log_file)
        .spawn()
        .context("starting cargo")?;
    let stdout = child.stdout.take().context("cargo's standard output")?;
    let mut binaries = Vec::new();
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line.context("reading cargo's messages")?;
        let Ok(artifact) = serde_json::from_str::<Artifact>(&line) else {
            continue;
        };
        let (Some(executable), Some(target), Some(profile)) =
            (artifact.executable, artifact.target, artifact.profile)
        else {
            continue;
        };
        if artifact.reason != "compiler-artifact" || !profile.test {
            continue;
        }
        binaries.push(TestBinary {
            package: package_name(&artifact.package_id, &artifact.manifest_path),
            target: format!(
                "{} {}",
                target.kind.first().map_or("?", String::as_str),
                target.name
            ),
            executable,
            manifest_dir: artifact
                .manifest_path
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
        });
    }
    let status = child.wait().context("waiting for cargo")?;
    if !status.success() {
        bail!(
            "`nice {}` failed ({status}); the last lines of {}:\n{}",
            all_args.join(" "),
            log.display(),
            crate::process::log_tail(log, 60)
        );
    }
    anyhow::ensure!(!binaries.is_empty(), "cargo built no test executable");
    Ok(binaries)
}

/// Counts from the `test result:` lines of one binary's output.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct Counts {
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
}

impl Counts {
    /// Sums every `test result: … N passed; M failed; K ignored; …` line of `output`, and pytest's summary
    /// line (`12 passed, 1 skipped in 3.21s`, skipped counted as ignored).
    pub(super) fn of(output: &str) -> Counts {
        let mut counts = Counts::default();
        for line in output.lines() {
            counts.add(Counts::of_pytest_summary(line));
            let Some(rest) = line.trim().strip_prefix("test result: ") else {
                continue;
            };
            for part in rest.split(';') {
                let mut words = part.split_whitespace().rev();
                let (Some(what), Some(number)) = (words.next(), words.next()) else {
                    continue;
                };
                let Ok(number) = number.parse::<u64>() else {
                    continue;
                };
                match what {
                    "passed" => counts.passed += number,
                    "failed" => counts.failed += number,
                    "ignored" => counts.ignored += number,
                    _ => {}
                }
            }
        }
        counts
    }

    fn add(&mut self, other: Counts) {
        self.passed += other.passed;
        self.failed += other.failed;
        self.ignored += other.ignored;
    }
}

/// What the lanes found: the counts over every binary and the binaries that failed.
#[derive(Default)]
struct Outcome {
    counts: Counts,
    failed: Vec<String>,
}

/// Runs one piece of a lane with its output to a log under `target/ci/tests/`, then prints the log in one block
/// (holding standard error, so the other lane's block cannot cut into it) and adds its counts.
fn run_logged(
    label: &str,
    mut command: Command,
    log_dir: &Path,
    outcome: &Mutex<Outcome>,
) -> anyhow::Result<()> {
    let log = log_dir.join(format!(
        "{}.log",
        label.replace(|c: char| !c.is_ascii_alphanumeric(), "-")
    ));
    let file =
        std::fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
    let started = Instant::now();
    let status = command
        .stdout(file.try_clone()?)
        .stderr(file)
        .status()
        .with_context(|| format!("starting {label}"))?;
    let seconds = started.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let counts = Counts::of(&text);
    {
        let mut stderr = std::io::stderr().lock();
        let verdict = if status.success() { "ok" } else { "FAILED" };
        let _ = writeln!(stderr, "\n--- {label}: {verdict} ({seconds:.1} s)");
        let _ = stderr.write_all(text.as_bytes());
    }
    let mut outcome = outcome
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    outcome.counts.add(counts);
    if !status.success() {
        outcome.failed.push(label.to_string());
    }
    Ok(())
}

/// The command that runs `binary` as `cargo test` would: from its package's directory, with `env`.
fn binary_command(binary: &TestBinary, env: &[(&str, String)]) -> Command {
    let mut command = Command::new(&binary.executable);
    command
        .current_dir(&binary.manifest_dir)
        .env("CARGO_MANIFEST_DIR", &binary.manifest_dir)
        .env("CARGO_PKG_NAME", &binary.package)
        .envs(env.iter().map(|(key, value)| (key, value)));
    command
}

/// Runs every binary in the lane `lane_of` gives it (`0..lanes`, each lane's binaries one after another, in
/// cargo's order, with `env`), the lanes side by side, and the `last`
/// commands (the doc tests, the Python package's pytest) at the end of the last lane, counted from their summary
/// lines; `after` runs in whichever lane finishes first. Fails naming every binary that failed; returns the summed
/// counts.
pub(super) fn run(
    binaries: &[TestBinary],
    lanes: usize,
    lane_of: impl Fn(&TestBinary) -> usize,
    env: &[(&str, String)],
    log_dir: &Path,
    last: Vec<(&str, Command)>,
    after: impl FnOnce() -> anyhow::Result<()> + Send,
) -> anyhow::Result<Counts> {
    std::fs::create_dir_all(log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    anyhow::ensure!(lanes > 0, "no lane to run the tests in");
    let mut by_lane: Vec<Vec<&TestBinary>> = vec![Vec::new(); lanes];
    for binary in binaries {
        by_lane[lane_of(binary).min(lanes - 1)].push(binary);
    }
    let outcome = Mutex::new(Outcome::default());
    let label = |binary: &TestBinary| format!("{} {}", binary.package, binary.target);
    // Taken by the first lane to finish, so the lanes end as close together as they can.
    let after = Mutex::new(Some(after));
    let last = Mutex::new(last);
    let run_after = || -> anyhow::Result<()> {
        let after = after
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        after.map_or(Ok(()), |after| after())
    };
    let run_lane = |lane: usize, binaries: &[&TestBinary]| -> anyhow::Result<()> {
        binaries.iter().try_for_each(|binary| {
            run_logged(
                &label(binary),
                binary_command(binary, env),
                log_dir,
                &outcome,
            )
        })?;
        if lane == lanes - 1 {
            let last =
                std::mem::take(&mut *last.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
            for (label, command) in last {
                run_logged(label, command, log_dir, &outcome)?;
            }
        }
        run_after()
    };
    let results: Vec<anyhow::Result<()>> = std::thread::scope(|scope| {
        let handles: Vec<_> = by_lane
            .iter()
            .enumerate()
            .map(|(lane, binaries)| scope.spawn(move || run_lane(lane, binaries)))
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(lane, handle)| {
                handle
                    .join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("test lane {lane} panicked")))
            })
            .collect()
    });
    results.into_iter().collect::<anyhow::Result<()>>()?;
    let outcome = outcome
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let counts = outcome.counts;
    eprintln!(
        "\ntests: {} passed, {} failed, {} ignored",
        counts.passed, counts.failed, counts.ignored
    );
    if !outcome.failed.is_empty() {
        bail!(
            "failed: {} (logs in {})",
            outcome.failed.join(", "),
            log_dir.display()
        );
    }
    Ok(counts)
}

impl Counts {
    /// pytest's last line, `[=…] 12 passed, 1 failed, 2 skipped, 3 warnings in 3.21s [=…]`; nothing for any
    /// other line.
    fn of_pytest_summary(line: &str) -> Counts {
        let mut counts = Counts::default();
        let line = line.trim().trim_matches('=').trim();
        let Some((tallies, time)) = line.rsplit_once(" in ") else {
            return counts;
        };
        let is_duration = time.split_whitespace().next().is_some_and(|time| {
            time.ends_with('s') && time[..time.len() - 1].parse::<f64>().is_ok()
        });
        if !is_duration {
            return counts;
        }
        for tally in tallies.split(", ") {
            let Some((number, what)) = tally.split_once(' ') else {
                return Counts::default();
            };
            let Ok(number) = number.parse::<u64>() else {
                return Counts::default();
            };
            match what {
                "passed" => counts.passed += number,
                "failed" | "error" | "errors" => counts.failed += number,
                "skipped" | "xfailed" | "deselected" => counts.ignored += number,
                _ => {}
            }
        }
        counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_summary_lines_count_and_other_lines_do_not() {
        let output = "..s.F\n\
                      FAILED test_x.py::test_b - assert 1 == 2 in 0.1s\n\
                      ===== 3 passed, 1 failed, 1 skipped, 2 warnings in 1.52s =====\n\
                      12 passed in 0.40s\n";
        assert_eq!(
            Counts::of(output),
            Counts {
                passed: 15,
                failed: 1,
                ignored: 1
            }
        );
    }

    #[test]
    fn counts_sum_every_result_line() {
        let output = "running 3 tests\ntest a ... ok\n\
            test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.20s\n\
            test result: FAILED. 5 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.00s\n";
        assert_eq!(
            Counts::of(output),
            Counts {
                passed: 8,
                failed: 2,
                ignored: 1
            }
        );
        assert_eq!(Counts::of("no results here"), Counts::default());
    }

    #[test]
    fn package_names_come_from_the_id_or_the_directory() {
        assert_eq!(
            package_name(
                "path+file:///w/server#cellscope@0.1.0",
                Path::new("/w/server/Cargo.toml")
            ),
            "cellscope"
        );
        // A package named like its directory has only the version after the `#`.
        assert_eq!(
            package_name(
                "path+file:///w/xtask#0.1.0",
                Path::new("/w/xtask/Cargo.toml")
            ),
            "xtask"
        );
    }
}
