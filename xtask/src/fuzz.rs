//! `cargo xtask fuzz [--minutes N] [--target NAME]`: runs the libFuzzer targets in `fuzz/` (one per reader of
//! outside input, their bodies in `cellscope_index::fuzzing` and `cellscope::fuzzing`) for N minutes in all, split evenly between the targets.
//! It installs what is missing (a nightly toolchain, `cargo-fuzz`), fuzzes from a working copy of the committed
//! corpus under `target/fuzz/` (the repository's corpus is never written), and prints and writes
//! `target/fuzz/summary.md`: executions, corpus size and crashes per target. Without a nightly toolchain it falls
//! back to the stable mutation runner (`cellscope_index::fuzzing::check_corpus`, run by the index's and the server's
//! `fuzz_corpus` tests), with a new seed per round.

use crate::process;
use crate::workspace_root;
use anyhow::{Context, bail};
use std::path::Path;
use std::time::{Duration, Instant};

/// The targets, one per file of `fuzz/fuzz_targets/` (each names its body in `cellscope_index::fuzzing::TARGETS` or
/// `cellscope::fuzzing::TARGETS`).
fn targets() -> anyhow::Result<Vec<String>> {
    let directory = workspace_root().join("fuzz/fuzz_targets");
    let mut names: Vec<String> = std::fs::read_dir(&directory)
        .with_context(|| format!("listing {}", directory.display()))?
        .filter_map(|entry| {
            entry
                .ok()?
                .file_name()
                .to_str()?
                .strip_suffix(".rs")
                .map(str::to_string)
        })
        .collect();
    names.sort();
    Ok(names)
}

struct Outcome {
    target: String,
    seconds: f64,
    executions: u64,
    corpus_files: usize,
    crashes: Vec<String>,
}

pub(crate) fn run(minutes: f64, only: Option<&str>) -> anyhow::Result<()> {
    let all = targets()?;
    let targets: Vec<&str> = all
        .iter()
        .map(String::as_str)
        .filter(|target| only.is_none_or(|only| only == *target))
        .collect();
    if targets.is_empty() {
        bail!(
            "no fuzz target {only:?}; the targets are {}",
            all.join(", ")
        );
    }
    let per_target_s = ((minutes * 60.0) / targets.len() as f64).max(5.0).round() as u64;
    if !nightly_available() {
        eprintln!("no nightly toolchain: installing one for cargo-fuzz");
        if process::run(
            "rustup",
            &["toolchain", "install", "nightly", "--profile", "minimal"],
        )
        .is_err()
        {
            eprintln!("nightly could not be installed: running the stable mutation runner instead");
            return stable_fallback(Duration::from_secs(per_target_s * targets.len() as u64));
        }
    }
    if process::output("cargo", &["fuzz", "--version"]).is_err() {
        process::run("cargo", &["install", "cargo-fuzz", "--locked"])?;
    }
    let root = workspace_root();
    let work = root.join("target/fuzz");
    // Every target built once, then each binary run directly: a change to the sources during a long run does
    // not rebuild anything under it.
    let build = work.join("build");
    process::run(
        "cargo",
        &[
            "+nightly",
            "fuzz",
            "build",
            "--fuzz-dir",
            &root.join("fuzz").to_string_lossy(),
            "--target-dir",
            &build.to_string_lossy(),
        ],
    )?;
    let binaries = build.join(format!("{}/release", host_triple()?));
    let mut outcomes = Vec::new();
    for target in targets {
        let corpus = work.join("corpus").join(target);
        let artifacts = work.join("artifacts").join(target);
        std::fs::create_dir_all(&corpus)?;
        std::fs::create_dir_all(&artifacts)?;
        let before: Vec<_> = files_in(&artifacts);
        let seeds = root.join("fuzz/corpus").join(target);
        let started = Instant::now();
        let output = std::process::Command::new(binaries.join(target))
            .current_dir(&root)
            .arg(&corpus)
            .arg(&seeds)
            .arg(format!("-max_total_time={per_target_s}"))
            .arg("-print_final_stats=1")
            .arg(format!("-artifact_prefix={}/", artifacts.display()))
            .stderr(std::process::Stdio::piped())
            .output()
            .with_context(|| format!("running the fuzz target {target}"))?;
        let log = String::from_utf8_lossy(&output.stderr).into_owned();
        std::fs::write(work.join(format!("{target}.log")), &log)?;
        let crashes: Vec<String> = files_in(&artifacts)
            .into_iter()
            .filter(|file| !before.contains(file))
            .collect();
        if !output.status.success() && crashes.is_empty() {
            bail!(
                "the fuzz target {target} failed without leaving a crash input; the end of its log:\n{}",
                tail(&log, 40)
            );
        }
        outcomes.push(Outcome {
            target: target.to_string(),
            seconds: started.elapsed().as_secs_f64(),
            executions: final_stat(&log, "stat::number_of_executed_units").unwrap_or(0),
            corpus_files: files_in(&corpus).len(),
            crashes,
        });
    }
    let mut summary = String::from(
        "| target | seconds | executions | corpus files | crashes |\n|---|---|---|---|---|\n",
    );
    for outcome in &outcomes {
        summary.push_str(&format!(
            "| {} | {:.0} | {} | {} | {} |\n",
            outcome.target,
            outcome.seconds,
            outcome.executions,
            outcome.corpus_files,
            if outcome.crashes.is_empty() {
                "0".to_string()
            } else {
                outcome.crashes.join(", ")
            }
        ));
    }
    let total: u64 = outcomes.iter().map(|outcome| outcome.executions).sum();
    summary.push_str(&format!(
        "\n{total} executions in all, {per_target_s} s of fuzzing per target.\n"
    ));
    std::fs::write(work.join("summary.md"), &summary)?;
    println!("{summary}");
    let crashed: Vec<&Outcome> = outcomes
        .iter()
        .filter(|outcome| !outcome.crashes.is_empty())
        .collect();
    if !crashed.is_empty() {
        bail!(
            "{} target(s) crashed; the inputs are in target/fuzz/artifacts/ (replay with `cargo +nightly fuzz run \
             --fuzz-dir fuzz TARGET FILE`, then add the file to fuzz/corpus/TARGET/ with the fix)",
            crashed.len()
        );
    }
    Ok(())
}

/// The triple cargo-fuzz builds for (its output directory's name), from `rustc -vV`.
fn host_triple() -> anyhow::Result<String> {
    let version = process::output("rustc", &["-vV"])?;
    version
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(str::to_string)
        .context("rustc -vV named no host")
}

fn nightly_available() -> bool {
    process::output("rustup", &["toolchain", "list"])
        .is_ok_and(|list| list.lines().any(|line| line.starts_with("nightly")))
}

/// The stable runner of the same targets: the corpus test with a fresh seed and many mutants per round.
fn stable_fallback(budget: Duration) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut round = 0u64;
    while started.elapsed() < budget {
        round += 1;
        let seed = format!("{}", 0x9E37_79B9_7F4A_7C15u64.wrapping_mul(round));
        for (package, suite) in [("cellscope-index", "suite"), ("cellscope", "suite")] {
            process::run_with_env(
                "cargo",
                &[
                    "test",
                    "--release",
                    "-p",
                    package,
                    "--test",
                    suite,
                    "fuzz_corpus::",
                ],
                &[
                    ("CELLSCOPE_FUZZ_SEED", seed.clone()),
                    ("CELLSCOPE_FUZZ_MUTANTS", "20000".to_string()),
                ],
            )?;
        }
    }
    println!(
        "stable mutation runner: {round} rounds of 20,000 mutants per corpus file, no failure"
    );
    Ok(())
}

fn files_in(directory: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(directory)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// The value of a `-print_final_stats` line such as `stat::number_of_executed_units: 123`.
fn final_stat(log: &str, name: &str) -> Option<u64> {
    log.lines()
        .filter_map(|line| line.strip_prefix(name))
        .filter_map(|rest| rest.trim_start_matches(':').trim().parse().ok())
        .next_back()
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}
