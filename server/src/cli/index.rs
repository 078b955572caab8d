//! `cellscope index`: index a data root, possibly several times, and report what was found and how long it took
//! (the benchmark probe), or show how one file is read (`--explain`).

use super::{CacheArgs, DataRoot, load};
use anyhow::Context;
use cellscope::terminal::printable;
use cellscope_index::cache::{CacheReport, Trust};
use cellscope_index::{self as indexer, Index, IndexOptions};
use cellscope_model::api::NOT_RECOGNISED;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub(super) struct IndexArgs {
    #[arg(default_value = ".")]
    data_dir: PathBuf,
    /// Index this many times and report the median and the fastest.
    #[arg(long, default_value_t = 1)]
    repeat: u32,
    /// Only what `/api/cells` needs: skip hashes and the backup comparison.
    #[arg(long)]
    cells_only: bool,
    #[arg(long)]
    json: bool,
    /// Show how one file of the data root is read: its format, run, and for each record the cell key with
    /// the field each dimension was read from or the rule (or cellscope.toml entry) that inferred it.
    #[arg(long, value_name = "FILE")]
    explain: Option<PathBuf>,
    #[command(flatten)]
    cache: CacheArgs,
}

/// `cellscope index --json`: what was indexed and how long it took (read by `cargo xtask bench`).
#[derive(serde::Serialize)]
struct IndexReport<'a> {
    runs: usize,
    cells: usize,
    rows: u64,
    warnings: usize,
    cells_only: bool,
    repeat: usize,
    median_s: f64,
    min_s: f64,
    /// Every index's seconds in the order they ran: the first cold, the later ones with the process warm.
    seconds: &'a [f64],
    /// What the last index did with the cache (absent with `--no-cache`).
    cache: Option<&'a CacheReport>,
    /// The process's peak resident memory so far (`VmHWM` of `/proc/self/status`; absent where there is none).
    peak_rss_bytes: Option<u64>,
}

/// This process's peak resident memory, from `/proc/self/status` (Linux).
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kilobytes: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kilobytes * 1024)
}

pub(super) fn run(arguments: IndexArgs) -> anyhow::Result<ExitCode> {
    if let Some(file) = &arguments.explain {
        return explain(&arguments.data_dir, file);
    }
    let IndexArgs {
        data_dir,
        repeat,
        cells_only,
        json,
        explain: _,
        cache,
    } = arguments;
    let root = DataRoot::open(data_dir, &cache)?;
    let data_dir = root.path.clone();
    let options = IndexOptions {
        hashes: !cells_only,
        backup_diff: !cells_only,
    };
    // `--cells-only` is what the server's first snapshot does, trusting sizes and modification times; a full
    // index checks every cached read against its files' contents, as the server's second stage does.
    let trust = if cells_only {
        Trust::Stamps
    } else {
        Trust::Contents
    };
    let cache = cache.runs(&data_dir)?;
    let mut seconds = Vec::new();
    let mut last = None;
    for _ in 0..repeat.max(1) {
        // The index before is let go first, as a repeated run of a script lets go of its last result: held while
        // the next is built, it kept the allocator from reusing its memory, and the second index faulted in
        // fresh pages for all of its own.
        drop(last.take());
        let index = load(&data_dir, &options, cache.as_ref(), trust)?;
        seconds.push(index.elapsed.as_secs_f64());
        last = Some(index);
    }
    let index = last.context("no index was built")?;
    print_report(&index, &seconds, cells_only, json)?;
    // The process ends here: the system takes its memory back at once, where dropping the index freed it cell by
    // cell (about 3 ms of a 50 ms cold index of the demo data, timed from spawn to exit).
    std::mem::forget(index);
    Ok(ExitCode::SUCCESS)
}

/// `--explain FILE`: how one file of the data root is read.
fn explain(data_dir: &Path, file: &Path) -> anyhow::Result<ExitCode> {
    let root = data_dir
        .canonicalize()
        .with_context(|| format!("cannot open {}", data_dir.display()))?;
    let absolute = file
        .canonicalize()
        .or_else(|_| data_dir.join(file).canonicalize())
        .with_context(|| format!("cannot open {}", file.display()))?;
    let relative = absolute.strip_prefix(&root).map_err(|_| {
        anyhow::anyhow!(
            "{} is not inside the data root {}",
            file.display(),
            root.display()
        )
    })?;
    let relative = indexer::relative_path(Path::new(""), relative);
    let text = indexer::explain(&root, &relative).map_err(|message| anyhow::anyhow!(message))?;
    print!("{}", printable(&text));
    Ok(ExitCode::SUCCESS)
}

/// Prints the last index's counts and the timings of all, as JSON or one line of text.
fn print_report(
    index: &Index,
    seconds: &[f64],
    cells_only: bool,
    json: bool,
) -> anyhow::Result<()> {
    // `seconds` stays in the order the indexes ran: the first is cold, the later ones warm.
    let mut sorted = seconds.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median_s = sorted[sorted.len() / 2];
    let min_s = sorted[0];
    let rows: u64 = index
        .runs
        .iter()
        .map(|run| run.census.rows + run.census.skip_rows)
        .sum();
    if json {
        let report = IndexReport {
            runs: index.runs.len(),
            cells: index.cells.len(),
            rows,
            warnings: index.warnings.len(),
            cells_only,
            repeat: seconds.len(),
            median_s,
            min_s,
            seconds,
            cache: index.cache.as_ref(),
            peak_rss_bytes: peak_rss_bytes(),
        };
        println!("{}", serde_json::to_string(&report)?);
    } else {
        println!(
            "{} runs, {} cells, {rows} rows, {} warnings; index {} in {:.1} ms median, {:.1} ms fastest of {}{}",
            index.runs.len(),
            index.cells.len(),
            index.warnings.len(),
            if cells_only { "(cells only)" } else { "(full)" },
            median_s * 1e3,
            min_s * 1e3,
            seconds.len(),
            index
                .cache
                .as_ref()
                .map_or_else(String::new, |report| format!(
                    "; cache: {} read from it, {} from files, {} written, {} stale, {} unreadable",
                    report.used,
                    report.read,
                    report.written,
                    report.stale,
                    report.unreadable.len()
                ))
        );
        // Files passed over are named, since a user whose results are in a shape no reader knows sees no run.
        for warning in index
            .warnings
            .iter()
            .filter(|warning| warning.kind == NOT_RECOGNISED)
        {
            println!("{}", printable(&warning.to_string()));
        }
    }
    Ok(())
}
