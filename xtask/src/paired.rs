//! Paired runs for `cargo xtask bench`: cellscope and its peers alternate (cellscope, peer 1, peer 2, …,
//! cellscope, …), each run a fresh process, and the verdict is the median of the per-run ratios, so a burst of
//! load on this shared machine moves one pair, not the verdict.

use anyhow::{Context, bail};
use serde_json::Value;
use std::path::Path;

/// What one child process did: its standard output, wall-clock seconds from spawn to exit, and peak RSS in KB.
pub(crate) struct Measured {
    pub stdout: String,
    pub wall_s: f64,
    pub max_rss_kb: Option<u64>,
}

/// Runs a program to completion, timing it and reading its peak RSS from `wait4`.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // a libc call; see the SAFETY comment.
pub(crate) fn measured(program: &str, args: &[&str]) -> anyhow::Result<Measured> {
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
pub(crate) struct PeerRun {
    pub result: Value,
    pub version: String,
    /// The median of its timed runs (one unless it was asked for more).
    pub seconds: f64,
    /// Every timed run's seconds, in order.
    pub seconds_each: Vec<f64>,
    pub max_rss_kb: Option<u64>,
}

/// Runs a peer script (`python args…`, which writes its report to `out`) and reads the report back.
pub(crate) fn run_peer(python: &str, args: &[&str], out: &Path) -> anyhow::Result<PeerRun> {
    let ran = measured(python, args)?;
    let result: Value = serde_json::from_slice(&std::fs::read(out)?)
        .with_context(|| format!("reading {}", out.display()))?;
    let seconds = number(&result, "seconds")?;
    Ok(PeerRun {
        version: result
            .get("version")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string(),
        seconds,
        // A script timed once (the vLLM bench's) reports no list: its one run is the list.
        seconds_each: seconds_list(&result, "seconds_each").unwrap_or_else(|| vec![seconds]),
        max_rss_kb: ran.max_rss_kb,
        result,
    })
}

/// A list of seconds in a JSON report.
fn seconds_list(report: &Value, key: &str) -> Option<Vec<f64>> {
    report
        .get(key)?
        .as_array()?
        .iter()
        .map(Value::as_f64)
        .collect()
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
pub(crate) struct Pair {
    pub cellscope_wall_s: f64,
    /// The index's own time in a fresh process (the first index it builds).
    pub cellscope_index_s: f64,
    /// The index's own time in the same process after a first index: measured as the peers are, after a warm-up
    /// (the median of the timed indexes when more than one was asked for).
    pub cellscope_warm_s: f64,
    /// Every timed index after the warm-up, in order.
    pub cellscope_warm_each: Vec<f64>,
    pub cellscope_rss_kb: Option<u64>,
    /// Each peer's seconds (the median of its timed runs) and peak RSS.
    pub peers: Vec<(f64, Option<u64>)>,
    /// Each peer's timed runs, in order.
    pub peers_each: Vec<Vec<f64>>,
}

impl Pair {
    fn fastest_peer_s(&self) -> f64 {
        self.peers
            .iter()
            .map(|(seconds, _)| *seconds)
            .fold(f64::INFINITY, f64::min)
    }

    /// Like for like: cellscope's in-process time after a warm-up over the fastest peer's, timed the same way.
    pub(crate) fn ratio(&self) -> f64 {
        self.cellscope_warm_s / self.fastest_peer_s()
    }

    /// The strict reading: cellscope's whole process (spawn to exit, cold) over the fastest peer's in-process time
    /// after its warm-up, which leaves out the peer's interpreter start and imports.
    pub(crate) fn strict_ratio(&self) -> f64 {
        self.cellscope_wall_s / self.fastest_peer_s()
    }
}

/// One cellscope run of a pair: `cellscope index ROOT --cells-only --json --no-cache` timed from spawn to exit,
/// then the same with `--repeat` one more than `timed` for the warm figure: the median of the indexes after the
/// first. Returns the pair without peers and the first report.
pub(crate) fn cellscope_index(
    binary: &str,
    root: &str,
    timed: u32,
) -> anyhow::Result<(Pair, Value)> {
    // Cold, like the peers' files: no cache of read results (which would time a warm start instead).
    let args = ["index", root, "--cells-only", "--json", "--no-cache"];
    let cold = measured(binary, &args)?;
    let report: Value =
        serde_json::from_str(cold.stdout.trim()).context("reading `cellscope index --json`")?;
    let repeat = (timed.max(1) + 1).to_string();
    let warm = measured(binary, &[&args[..], &["--repeat", &repeat]].concat())?;
    let warm_report: Value =
        serde_json::from_str(warm.stdout.trim()).context("reading `cellscope index --json`")?;
    let warm_each: Vec<f64> = seconds_list(&warm_report, "seconds")
        .map(|seconds| seconds.into_iter().skip(1).collect())
        .unwrap_or_default();
    if warm_each.is_empty() {
        bail!("`cellscope index --repeat {repeat}` reported no index after the first");
    }
    let pair = Pair {
        cellscope_wall_s: cold.wall_s,
        cellscope_index_s: number(&report, "median_s")?,
        cellscope_warm_s: median(&mut warm_each.clone()),
        cellscope_warm_each: warm_each,
        cellscope_rss_kb: cold.max_rss_kb,
        peers: Vec::new(),
        peers_each: Vec::new(),
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
pub(crate) fn table(peers: &[(String, String)], pairs: &[Pair], budget: f64) -> (String, f64) {
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
    let timed = pairs
        .iter()
        .map(|pair| pair.cellscope_warm_each.len())
        .max()
        .unwrap_or(1);
    let how = if timed > 1 {
        format!(", each side the median of {timed} timed runs")
    } else {
        String::new()
    };
    table.push_str(&format!(
        "\nBudget: median of the per-run ratios ≤ {budget}. Like for like (both timed inside their process after \
         a warm-up run{how}): median {median_ratio:.2} over {} paired runs (largest single ratio {worst:.2}): **{}**. \
         Strict (cellscope's whole cold process against the peer's warm in-process time): median \
         {median_strict:.2}: {}.\n",
        pairs.len(),
        verdict(median_ratio),
        verdict(median_strict),
    ));
    // With several timed runs per side, each pair's figures are medians: every run's own figure is listed.
    let repeated = pairs.iter().any(|pair| {
        pair.cellscope_warm_each.len() > 1 || pair.peers_each.iter().any(|each| each.len() > 1)
    });
    if repeated {
        let listed = |each: &[f64]| {
            each.iter()
                .map(|value| format!("{:.1}", value * 1e3))
                .collect::<Vec<_>>()
                .join(", ")
        };
        table.push_str(
            "\nEvery timed run after the warm-up (ms), of which each pair's figures above are the medians:\n\n",
        );
        for (index, pair) in pairs.iter().enumerate() {
            let peers: Vec<String> = peers
                .iter()
                .zip(&pair.peers_each)
                .map(|((name, _), each)| format!("{name} {}", listed(each)))
                .collect();
            table.push_str(&format!(
                "- run {}: cellscope {}; {}\n",
                index + 1,
                listed(&pair.cellscope_warm_each),
                peers.join("; ")
            ));
        }
    }
    (table, median_ratio)
}

/// The median (the mean of the middle two for an even count); sorts `values`.
pub(crate) fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let middle = values.len() / 2;
    if values.len() % 2 == 1 {
        values[middle]
    } else {
        (values[middle - 1] + values[middle]) / 2.0
    }
}

/// A number field of a JSON object, or an error naming the key.
pub(crate) fn number(value: &Value, key: &str) -> anyhow::Result<f64> {
    value
        .get(key)
        .and_then(Value::as_f64)
        .with_context(|| format!("`{key}` missing in {value}"))
}
