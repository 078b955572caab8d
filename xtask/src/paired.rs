//! Paired runs for `cargo xtask bench`: cellscope and its peers alternate (cellscope, peer 1, peer 2, …,
//! cellscope, …), each run a fresh process, and the verdict is the median of the per-run ratios, so a burst of
//! load on this shared machine moves one pair, not the verdict.

use crate::bench::{median, number};
use anyhow::{Context, bail};
use serde_json::Value;
use std::path::Path;

/// What one child process did: its standard output, wall-clock seconds from spawn to exit, and peak RSS in KB.
pub struct Measured {
    pub stdout: String,
    pub wall_s: f64,
    pub max_rss_kb: Option<u64>,
}

/// Runs a program to completion, timing it and reading its peak RSS from `wait4`.
#[cfg(target_os = "linux")]
pub fn measured(program: &str, args: &[&str]) -> anyhow::Result<Measured> {
    use std::io::Read;
    eprintln!("$ {program} {}", shortened(args));
    let started = std::time::Instant::now();
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {program}"))?;
    let mut stdout = String::new();
    if let Some(mut pipe) = child.stdout.take() {
        pipe.read_to_string(&mut stdout)?;
    }
    let pid = libc::pid_t::try_from(child.id())?;
    let mut status = 0;
    // SAFETY: `rusage` is plain old data, for which all zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet reaped (std never waits on its own), and both pointers are valid.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall_s = started.elapsed().as_secs_f64();
    if reaped != pid {
        bail!("waiting for {program}: {}", std::io::Error::last_os_error());
    }
    if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
        bail!("`{program} {}` failed (status {status})", shortened(args));
    }
    Ok(Measured {
        stdout,
        wall_s,
        max_rss_kb: u64::try_from(usage.ru_maxrss).ok(),
    })
}

#[cfg(not(target_os = "linux"))]
pub fn measured(program: &str, args: &[&str]) -> anyhow::Result<Measured> {
    eprintln!("$ {program} {}", shortened(args));
    let started = std::time::Instant::now();
    let stdout = crate::process::output(program, args)?;
    Ok(Measured {
        stdout,
        wall_s: started.elapsed().as_secs_f64(),
        max_rss_kb: None,
    })
}

/// One run of a peer script: what it wrote to its output file (its `version`, its in-process `seconds` and its
/// cells), and the peak RSS of its process.
pub struct PeerRun {
    pub result: Value,
    pub version: String,
    pub seconds: f64,
    pub max_rss_kb: Option<u64>,
}

/// Runs a peer script (`python args…`, which writes its report to `out`) and reads the report back.
pub fn run_peer(python: &str, args: &[&str], out: &Path) -> anyhow::Result<PeerRun> {
    let ran = measured(python, args)?;
    let result: Value = serde_json::from_slice(&std::fs::read(out)?)
        .with_context(|| format!("reading {}", out.display()))?;
    Ok(PeerRun {
        version: result
            .get("version")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string(),
        seconds: number(&result, "seconds")?,
        max_rss_kb: ran.max_rss_kb,
        result,
    })
}

/// A command line for the log, with a long file list cut short.
fn shortened(args: &[&str]) -> String {
    const SHOWN: usize = 8;
    if args.len() <= SHOWN {
        return args.join(" ");
    }
    format!(
        "{} … ({} more arguments)",
        args[..SHOWN].join(" "),
        args.len() - SHOWN
    )
}

/// One paired run: cellscope's process wall time, its own index time cold and warm, each peer's seconds (timed
/// inside its process after an untimed warm-up run), and peak RSS of each.
pub struct Pair {
    pub cellscope_wall_s: f64,
    /// The index's own time in a fresh process (the first index it builds).
    pub cellscope_index_s: f64,
    /// The index's own time for a second index in the same process: measured as the peers are, after a warm-up.
    pub cellscope_warm_s: f64,
    pub cellscope_rss_kb: Option<u64>,
    pub peers: Vec<(f64, Option<u64>)>,
}

impl Pair {
    fn fastest_peer_s(&self) -> f64 {
        self.peers
            .iter()
            .map(|(seconds, _)| *seconds)
            .fold(f64::INFINITY, f64::min)
    }

    /// Like for like: cellscope's in-process time after a warm-up over the fastest peer's, timed the same way.
    pub fn ratio(&self) -> f64 {
        self.cellscope_warm_s / self.fastest_peer_s()
    }

    /// The strict reading: cellscope's whole process (spawn to exit, cold) over the fastest peer's in-process time
    /// after its warm-up, which leaves out the peer's interpreter start and imports.
    pub fn strict_ratio(&self) -> f64 {
        self.cellscope_wall_s / self.fastest_peer_s()
    }
}

/// One cellscope run of a pair: `cellscope index ROOT --cells-only --json --no-cache` timed from spawn to exit,
/// then the same with `--repeat 2` for the warm figure. Returns the pair without peers and the first report.
pub fn cellscope_index(binary: &str, root: &str) -> anyhow::Result<(Pair, Value)> {
    // Cold, like the peers' files: no cache of read results (which would time a warm start instead).
    let args = ["index", root, "--cells-only", "--json", "--no-cache"];
    let cold = measured(binary, &args)?;
    let report: Value =
        serde_json::from_str(cold.stdout.trim()).context("reading `cellscope index --json`")?;
    let warm = measured(binary, &[&args[..], &["--repeat", "2"]].concat())?;
    let warm_report: Value =
        serde_json::from_str(warm.stdout.trim()).context("reading `cellscope index --json`")?;
    let warm_s = warm_report
        .get("seconds")
        .and_then(Value::as_array)
        .and_then(|seconds| seconds.get(1))
        .and_then(Value::as_f64)
        .context("`cellscope index --repeat 2` reported no second index")?;
    let pair = Pair {
        cellscope_wall_s: cold.wall_s,
        cellscope_index_s: number(&report, "median_s")?,
        cellscope_warm_s: warm_s,
        cellscope_rss_kb: cold.max_rss_kb,
        peers: Vec::new(),
    };
    Ok((pair, report))
}

fn megabytes(kb: Option<u64>) -> String {
    kb.map_or("?".to_string(), |kb| {
        format!("{:.0} MB", kb as f64 / 1024.0)
    })
}

/// The table of every pair, the medians and the verdicts against `budget` (the largest acceptable median
/// ratio), like for like and strict. `peers` are `(name, version)` in the order of each pair's figures. Returns the
/// table and the like-for-like median ratio.
pub fn table(peers: &[(String, String)], pairs: &[Pair], budget: f64) -> (String, f64) {
    let seconds = |value: f64| {
        if value < 1.0 {
            format!("{:.1} ms", value * 1e3)
        } else {
            format!("{value:.2} s")
        }
    };
    let joined = |cells: Vec<String>| cells.join(" | ");
    let mut table = format!(
        "| run | cellscope (spawn to exit) | cellscope (in-process, first index) | cellscope (in-process, after a \
         warm-up) | {} | ratio, like for like | ratio, strict | peak RSS cellscope | {} |\n|---|---|---|---|{}---|---|{}\n",
        joined(
            peers
                .iter()
                .map(|(name, version)| format!("{name} {version} (in-process, after a warm-up)"))
                .collect()
        ),
        joined(
            peers
                .iter()
                .map(|(name, _)| format!("peak RSS {name}"))
                .collect()
        ),
        "---|".repeat(peers.len()),
        "---|".repeat(peers.len() + 2),
    );
    let mut columns: Vec<Vec<f64>> = vec![Vec::new(); peers.len() + 3];
    let mut ratios = Vec::new();
    let mut strict_ratios = Vec::new();
    for (index, pair) in pairs.iter().enumerate() {
        ratios.push(pair.ratio());
        strict_ratios.push(pair.strict_ratio());
        columns[0].push(pair.cellscope_wall_s);
        columns[1].push(pair.cellscope_index_s);
        columns[2].push(pair.cellscope_warm_s);
        for (position, (peer_seconds, _)) in pair.peers.iter().enumerate() {
            columns[position + 3].push(*peer_seconds);
        }
        table.push_str(&format!(
            "| {} | {} | {} | {} | {} | {:.2} | {:.2} | {} | {} |\n",
            index + 1,
            seconds(pair.cellscope_wall_s),
            seconds(pair.cellscope_index_s),
            seconds(pair.cellscope_warm_s),
            joined(
                pair.peers
                    .iter()
                    .map(|(peer_seconds, _)| seconds(*peer_seconds))
                    .collect()
            ),
            pair.ratio(),
            pair.strict_ratio(),
            megabytes(pair.cellscope_rss_kb),
            joined(pair.peers.iter().map(|(_, rss)| megabytes(*rss)).collect()),
        ));
    }
    let worst = ratios.iter().copied().fold(0.0f64, f64::max);
    let median_ratio = median(&mut ratios);
    let median_strict = median(&mut strict_ratios);
    let medians: Vec<f64> = columns.iter_mut().map(|column| median(column)).collect();
    table.push_str(&format!(
        "| median | {} | **{median_ratio:.2}** | **{median_strict:.2}** |{}\n",
        joined(medians.iter().map(|value| seconds(*value)).collect()),
        " |".repeat(peers.len() + 1),
    ));
    let verdict = |ratio: f64| if ratio <= budget { "met" } else { "not met" };
    table.push_str(&format!(
        "\nBudget: median of the per-run ratios ≤ {budget}. Like for like (both timed inside their process after \
         a warm-up run): median {median_ratio:.2} over {} paired runs (largest single ratio {worst:.2}): **{}**. \
         Strict (cellscope's whole cold process against the peer's warm in-process time): median \
         {median_strict:.2}: {}.\n",
        pairs.len(),
        verdict(median_ratio),
        verdict(median_strict),
    ));
    (table, median_ratio)
}
