//! The command line's parser and what its subcommands share: the cache flags, the data root (local or mirrored
//! from object storage) and indexing with a progress bar. Each subcommand's arguments and work are in `cli/`.

mod audit;
mod bundle;
mod cells;
mod compare;
mod history;
mod index;
mod query_flags;
mod requests;
mod serve;

use anyhow::{Context, bail};
use cellscope::remote::Remote;
use cellscope_index::cache::{RunCache, Trust};
use cellscope_index::{self as indexer, Index, IndexOptions, Progress, Quiet};
use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "cellscope",
    version,
    about = "Explore LLM serving-benchmark sweeps: index run directories, audit them, export cells."
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Per-run census, hashes, warnings, refill/exclusion summary and the breakdown table.
    Audit(audit::AuditArgs),
    /// Index a data root and report what was found and how long it took (also the benchmark probe).
    Index(index::IndexArgs),
    /// Serve the explorer and its API, re-indexing when the data changes.
    Serve(serve::ServeArgs),
    /// Head-to-head of two values of one dimension (paired Wilcoxon, Holm, bootstrap CI), per group.
    Compare(Box<compare::CompareArgs>),
    /// Every configuration × workload × load across runs: change points (E-divisive means, t-test merge) and
    /// whether it regressed; `--strict` exits 1 on a regression.
    History(Box<history::HistoryArgs>),
    /// Write one self-contained HTML file that reopens a view with no server: the app, the cells, provenance and
    /// the request rows of the cells in view.
    Bundle(bundle::BundleArgs),
    /// Write one row per cell, all of them or a slice (the filters of `/api/cells`).
    Cells(cells::CellsArgs),
    /// Write the request rows of one cell, current and replaced by a refill (what `/api/requests` gives).
    Requests(requests::RequestsArgs),
}

/// Runs the parsed command; the exit code is 1 for a failed `audit --strict` or `history --strict`, errors are the caller's to print.
pub(crate) fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Audit(arguments) => audit::run(arguments),
        Command::Index(arguments) => index::run(arguments),
        Command::Serve(arguments) => serve::run(arguments),
        Command::Compare(arguments) => compare::run(*arguments),
        Command::History(arguments) => history::run(*arguments),
        Command::Bundle(arguments) => bundle::run(arguments),
        Command::Cells(arguments) => cells::run(arguments),
        Command::Requests(arguments) => requests::run(arguments),
    }
}

/// Where read results and kept snapshots go.
#[derive(clap::Args)]
struct CacheArgs {
    /// The cache directory (default: the user's, `$XDG_CACHE_HOME/cellscope` or `~/.cache/cellscope`), or a
    /// bucket prefix (`s3://…`) for read results shared by replicas: what
    /// reading each run gave, so that runs whose files have not changed are not parsed again, and for `serve`
    /// recent snapshots for pinned links and for answering a restart on unchanged data before it has indexed.
    /// Never inside the data root.
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    cache: Option<PathBuf>,
    /// Use no cache: read every run from its files and keep nothing (a pinned link to an older snapshot then
    /// says that snapshot is gone).
    #[arg(long)]
    no_cache: bool,
}

impl CacheArgs {
    /// The cache directory: the chosen one or the user's, `None` with `--no-cache` or when the data root does not
    /// exist (indexing then says so). A chosen one inside the data root, which cellscope never writes to, is
    /// refused, and the user's is then not used; checked before anything is created, since creating it first
    /// would already write there.
    fn base(&self, data_dir: &Path) -> anyhow::Result<Option<PathBuf>> {
        if self.no_cache {
            return Ok(None);
        }
        let Ok(root) = data_dir.canonicalize() else {
            return Ok(None);
        };
        let base = self.chosen_or_default()?;
        if base.starts_with(&root) && (self.cache.is_none() || self.remote().is_some()) {
            // The user's cache directory lies inside the data root (a data root that is a home directory): run
            // without a cache rather than refuse a command nobody asked to cache.
            tracing::warn!(
                cache = %base.display(),
                root = %root.display(),
                "the default cache directory is inside the data root, which cellscope never writes to; running \
                 without a cache (choose one with --cache DIR)"
            );
            return Ok(None);
        }
        if base.starts_with(&root) {
            bail!(
                "the cache directory {} is inside the data root {}, which cellscope never writes to; choose \
                 another with --cache DIR (or --no-cache)",
                base.display(),
                root.display()
            );
        }
        Ok(Some(base))
    }

    /// `--cache` when it names object storage: the read results then live in the bucket, shared by replicas.
    fn remote(&self) -> Option<String> {
        let chosen = self.cache.as_ref()?.to_string_lossy().into_owned();
        cellscope::remote::is_remote(&chosen).then_some(chosen)
    }

    /// The chosen cache directory or the user's, resolved (it may not exist yet). With a cache in object storage,
    /// the user's directory still holds what must be local: a remote data root's mirror and kept snapshots.
    fn chosen_or_default(&self) -> anyhow::Result<PathBuf> {
        let base = match self.cache.as_ref().filter(|_| self.remote().is_none()) {
            Some(dir) => dir.clone(),
            None => std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .filter(|dir| dir.is_absolute())
                .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache")))
                .context(
                    "no cache directory: set XDG_CACHE_HOME or HOME, or pass --cache DIR or --no-cache",
                )?
                .join("cellscope"),
        };
        resolved(&base)
    }

    /// The cache of read results, shared by every data root (its entries name files relative to their root).
    fn runs(&self, data_dir: &Path) -> anyhow::Result<Option<RunCache>> {
        if let Some(url) = self.remote() {
            let store = cellscope::remote::ObjectCacheStore::open(&url)?;
            return Ok(Some(RunCache::new(Box::new(store))));
        }
        Ok(self
            .base(data_dir)?
            .map(|base| RunCache::in_directory(base.join("runs"))))
    }
}

/// A data root named on the command line: a local directory, or object storage mirrored into the cache
/// directory (see `cellscope::remote`) and then indexed like any local directory.
struct DataRoot {
    /// What the indexer reads: the directory itself, or the remote root's mirror.
    path: PathBuf,
    /// How to name the root to the user: the argument as given, or the URL (without credentials).
    shown: String,
    remote: Option<std::sync::Arc<Remote>>,
    /// With `--no-cache`, a remote root's mirror lives in a temporary directory removed at exit.
    _scratch: Option<tempfile::TempDir>,
}

impl DataRoot {
    fn open(data_dir: PathBuf, cache: &CacheArgs) -> anyhow::Result<DataRoot> {
        let argument = data_dir.to_string_lossy().into_owned();
        if !cellscope::remote::is_remote(&argument) {
            return Ok(DataRoot {
                shown: argument,
                path: data_dir,
                remote: None,
                _scratch: None,
            });
        }
        let (mirror_base, scratch) = if cache.no_cache {
            let scratch = tempfile::Builder::new()
                .prefix("cellscope-remote-")
                .tempdir()
                .context("creating a temporary directory for the mirror of the remote root")?;
            (scratch.path().to_path_buf(), Some(scratch))
        } else {
            (cache.chosen_or_default()?, None)
        };
        let remote = Remote::open(&argument, &mirror_base)?;
        let started = std::time::Instant::now();
        let report = remote.sync_blocking()?;
        tracing::info!(
            url = %remote.url,
            objects = report.objects,
            bytes = report.bytes,
            fetched = report.fetched,
            removed = report.removed,
            ms = started.elapsed().as_millis() as u64,
            "remote data root mirrored"
        );
        Ok(DataRoot {
            path: remote.tree(),
            shown: remote.url.clone(),
            remote: Some(std::sync::Arc::new(remote)),
            _scratch: scratch,
        })
    }
}

/// `path` made absolute with symbolic links resolved, even where it does not exist yet: its nearest existing
/// ancestor resolved, the rest appended.
fn resolved(path: &Path) -> anyhow::Result<PathBuf> {
    let absolute =
        std::path::absolute(path).with_context(|| format!("resolving {}", path.display()))?;
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        let Some(parent) = existing.parent() else {
            break;
        };
        rest.push(
            existing
                .file_name()
                .map(ToOwned::to_owned)
                .unwrap_or_default(),
        );
        existing = parent;
    }
    let mut resolved = existing
        .canonicalize()
        .with_context(|| format!("resolving {}", existing.display()))?;
    for part in rest.into_iter().rev() {
        resolved.push(part);
    }
    Ok(resolved)
}

/// A progress bar on standard error, shown only on a terminal.
struct Bar(indicatif::ProgressBar);

impl Progress for Bar {
    fn files_found(&self, _files: u64, bytes: u64) {
        self.0.set_length(bytes);
    }
    fn file_done(&self, bytes: u64) {
        self.0.inc(bytes);
    }
}

/// Indexes `data_dir`, taking unchanged runs' reads from `cache` as `trust` says.
fn load(
    data_dir: &Path,
    options: &IndexOptions,
    cache: Option<&RunCache>,
    trust: Trust,
) -> anyhow::Result<Index> {
    let build = |progress: &dyn Progress| match cache {
        Some(cache) => indexer::build_cached(data_dir, options, progress, cache, trust),
        None => indexer::build(data_dir, options, progress),
    };
    let index = if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(0).with_style(
            indicatif::ProgressStyle::with_template(
                "indexing {bar:30} {binary_bytes}/{binary_total_bytes} {elapsed}",
            )
            .context("progress bar template")?,
        );
        let index = build(&Bar(bar.clone()));
        bar.finish_and_clear();
        index
    } else {
        build(&Quiet)
    }
    .with_context(|| format!("cannot index {}", data_dir.display()))?;
    if index.runs.is_empty() {
        bail!(
            "no run directories under {}: expected directories holding a metrics.csv (try `cargo xtask demo-data` for demo data)",
            data_dir.display()
        );
    }
    Ok(index)
}

/// Indexes an opened data root with the cache of read results, trusting only contents: what `audit`, `compare`,
/// `bundle` and `cells` read.
fn load_root(root: &DataRoot, cache: &CacheArgs, options: &IndexOptions) -> anyhow::Result<Index> {
    let runs = cache.runs(&root.path)?;
    load(&root.path, options, runs.as_ref(), Trust::Contents)
}
