//! The `cellscope` command line: `serve`, `audit`, `cells`, `index`.

use anyhow::{Context, bail};
use cellscope::audit;
use cellscope::export::{self, Format};
use cellscope::remote::Remote;
use cellscope::terminal::printable;
use cellscope_index::cache::{RunCache, Trust};
use cellscope_index::{self as index, Index, IndexOptions, Progress, Quiet};
use cellscope_model::{Criterion, Dimension};
use clap::{Parser, Subcommand};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "cellscope",
    version,
    about = "Explore LLM serving-benchmark sweeps: index run directories, audit them, export cells."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
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

#[derive(clap::Args)]
struct CompareArgs {
    #[arg(default_value = ".")]
    data_dir: PathBuf,
    /// The dimension whose values are compared: backend, model, run, suite, phase or workload.
    #[arg(long, default_value = "backend")]
    by: String,
    #[arg(long)]
    a: String,
    #[arg(long)]
    b: String,
    /// One group per value of this dimension, or `none`.
    #[arg(long, default_value = "workload")]
    per: String,
    /// efficiency, p95_multiplier, aggregate_tps, p50_wall_ms, p95_wall_ms, p99_wall_ms, p50_ttft_ms,
    /// p95_ttft_ms.
    #[arg(long, default_value = "efficiency")]
    metric: String,
    /// Significance level for claiming an edge (Holm-adjusted).
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    /// What-if toggles, comma-separated: excluded (put ledger exclusions back), pre_refill, partial.
    #[arg(long, value_delimiter = ',')]
    include: Vec<String>,
    /// Leave partial cells out.
    #[arg(long)]
    omit_partial: bool,
    /// Dimension filters, written as in /api/cells (comma-separated values).
    #[arg(long, value_delimiter = ',')]
    run: Vec<String>,
    #[arg(long, value_delimiter = ',')]
    suite: Vec<String>,
    #[arg(long, value_delimiter = ',')]
    phase: Vec<String>,
    #[arg(long, value_delimiter = ',')]
    backend: Vec<String>,
    #[arg(long, value_delimiter = ',')]
    model: Vec<String>,
    #[arg(long, value_delimiter = ',')]
    workload: Vec<String>,
    #[arg(long, value_delimiter = ',')]
    n: Vec<String>,
    #[arg(long, value_delimiter = ',')]
    rep: Vec<String>,
    /// Print every group, pair and dropped pair as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    cache: CacheArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Per-run census, hashes, warnings, refill/exclusion summary and the breakdown table.
    Audit {
        /// The data root holding run directories (directories with a metrics.csv): a directory, or object
        /// storage as `s3://bucket/prefix`, `gs://…`, `az://…` or `file://…` (every command takes either).
        #[arg(default_value = ".")]
        data_dir: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Exit 1 when request-level failures remain that no refill or exclusion accounts for, or when a claim of
        /// a REFILL_NOTE.md does not hold.
        #[arg(long)]
        strict: bool,
        /// Breakdown criterion: v1 (efficiency < 0.65 or p95 multiplier > 2.0) or v3 (efficiency < 0.65).
        #[arg(long, default_value = "v1", value_parser = ["v1", "v3"])]
        criterion: String,
        #[command(flatten)]
        cache: CacheArgs,
    },
    /// Index a data root and report what was found and how long it took (also the benchmark probe).
    Index {
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
    },
    /// Serve the explorer and its API, re-indexing when the data changes.
    Serve {
        #[arg(default_value = ".")]
        data_dir: PathBuf,
        /// Address to listen on (loopback unless told otherwise).
        #[arg(long, default_value = "127.0.0.1:8080")]
        addr: std::net::SocketAddr,
        /// Allow this one origin to call the API from another site (CORS is off by default).
        #[arg(long)]
        cors: Option<String>,
        /// For a data root in object storage: seconds between listings of the bucket prefix (new, changed or
        /// deleted objects re-index). A local root is watched instead.
        #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
        poll: f64,
        /// Threads answering HTTP requests (default: one fewer than the cores, at least one). Indexing, building
        /// bodies and reading rows run on threads of their own, so the answering threads only send what is built.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
        http_threads: Option<u16>,
        /// Benchmarks only: serve this directory's files under /bench-static/ (the static-file peer).
        #[arg(long, hide = true)]
        bench_static: Option<PathBuf>,
        #[command(flatten)]
        cache: CacheArgs,
    },
    /// Head-to-head of two values of one dimension (paired Wilcoxon, Holm, bootstrap CI), per group.
    Compare(Box<CompareArgs>),
    /// Write one self-contained HTML file that reopens a view with no server: the app, the cells, provenance and
    /// the request rows of the cells in view.
    Bundle {
        #[arg(default_value = ".")]
        data_dir: PathBuf,
        /// The view, as the query string of an app link (`view=curves&model=qwen2.5-7b`, with or without `?`);
        /// empty for the default view.
        #[arg(long, default_value = "")]
        view: String,
        /// The HTML file to write (never inside the data root).
        #[arg(short, long, default_value = "cellscope-audit.html")]
        output: PathBuf,
        #[command(flatten)]
        cache: CacheArgs,
    },
    /// Write one row per cell.
    Cells {
        #[arg(default_value = ".")]
        data_dir: PathBuf,
        #[arg(long, value_enum)]
        format: Format,
        /// Output file (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
        #[command(flatten)]
        cache: CacheArgs,
    },
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
    cache: Option<&'a index::cache::CacheReport>,
}

/// The threads answering HTTP requests unless `--http-threads` says otherwise: one fewer than the cores. What
/// costs CPU time (indexing, building and compressing bodies, reading request rows) runs on rayon's and tokio's
/// blocking threads; the answering threads mostly hand built bodies to the kernel. On two cores shared with the
/// clients (a browser, or wrk in `cargo xtask bench http`), a second answering thread only competed with them:
/// `/api/cells` compressed p99 at 64 connections was 5.19–5.52 ms with two and 4.24–4.52 ms with one (README).
fn default_http_threads() -> usize {
    std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .saturating_sub(1)
        .max(1)
}

/// How many snapshots, and how many bytes of them (zstd-compressed), are kept for pinned links.
const KEPT_SNAPSHOTS: usize = 20;
const KEPT_BYTES: u64 = 256 * 1024 * 1024;

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

/// The store of `serve`'s first snapshot (cells only, runs taken from the cache of read results by their stamps).
/// `inputs` is the fingerprint of the root's files taken before indexing; the store remembers it for the complete
/// snapshot only if the files still have it after the second stage (see `Store::with_caches`).
fn first_store(
    root: PathBuf,
    archive: Option<cellscope::http::archive::Archive>,
    runs: Option<std::sync::Arc<cellscope_index::cache::RunCache>>,
    inputs: Option<String>,
) -> anyhow::Result<std::sync::Arc<cellscope::http::snapshot::Store>> {
    let snapshot = cellscope::http::snapshot::first_snapshot(&root, runs.as_deref())
        .map_err(anyhow::Error::msg)?;
    if snapshot.index.runs.is_empty() {
        tracing::warn!(root = %root.display(), "no run directories yet; serving an empty index and watching for new runs");
    }
    if let Some(report) = &snapshot.index.cache {
        tracing::info!(
            used = report.used,
            read = report.read,
            unreadable = report.unreadable.len(),
            "first snapshot: runs taken from the cache of read results"
        );
    }
    Ok(cellscope::http::snapshot::Store::with_caches(
        root, snapshot, archive, runs, inputs,
    ))
}

/// The directory of kept snapshots of `root`: one folder per data root inside the cache directory.
fn snapshot_cache(base: &Path, root: &Path) -> anyhow::Result<PathBuf> {
    let root_hash = cellscope_index::hex::short_sha256(root.to_string_lossy().as_bytes());
    let dir = base.join("snapshots").join(root_hash);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    Ok(dir)
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
        Some(cache) => index::build_cached(data_dir, options, progress, cache, trust),
        None => index::build(data_dir, options, progress),
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

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Audit {
            data_dir,
            json,
            strict,
            criterion,
            cache,
        } => {
            let root = DataRoot::open(data_dir, &cache)?;
            let data_dir = root.path.clone();
            let named = Criterion::named(&criterion)
                .with_context(|| format!("unknown criterion {criterion}"))?;
            let cache = cache.runs(&data_dir)?;
            let index = load(
                &data_dir,
                &IndexOptions::default(),
                cache.as_ref(),
                Trust::Contents,
            )?;
            let mut report = audit::report(&index, &named);
            report.root = root.shown.clone();
            let mut stdout = std::io::stdout().lock();
            if json {
                serde_json::to_writer_pretty(&mut stdout, &report).context("writing JSON")?;
                writeln!(stdout)?;
            } else {
                stdout.write_all(printable(&audit::render_text(&report)).as_bytes())?;
            }
            if strict && !report.strict_ok() {
                if !report.unaccounted_failures.is_empty() {
                    eprintln!(
                        "audit --strict: {} cells with {} failed rows are not accounted for by a refill or exclusion",
                        report.unaccounted_failures.len(),
                        report.unaccounted_failed_rows
                    );
                }
                if report.note_mismatches > 0 {
                    eprintln!(
                        "audit --strict: {} REFILL_NOTE claims are contradicted by the files",
                        report.note_mismatches
                    );
                }
                return Ok(ExitCode::from(1));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Index {
            data_dir,
            explain: Some(file),
            ..
        } => {
            let root = data_dir
                .canonicalize()
                .with_context(|| format!("cannot open {}", data_dir.display()))?;
            let absolute = file
                .canonicalize()
                .or_else(|_| data_dir.join(&file).canonicalize())
                .with_context(|| format!("cannot open {}", file.display()))?;
            let relative = absolute.strip_prefix(&root).map_err(|_| {
                anyhow::anyhow!(
                    "{} is not inside the data root {}",
                    file.display(),
                    root.display()
                )
            })?;
            let relative = index::discover::relative_path(Path::new(""), relative);
            let text = index::formats::explain(&root, &relative)
                .map_err(|message| anyhow::anyhow!(message))?;
            print!("{}", printable(&text));
            Ok(ExitCode::SUCCESS)
        }
        Command::Index {
            data_dir,
            repeat,
            cells_only,
            json,
            explain: None,
            cache,
        } => {
            let root = DataRoot::open(data_dir, &cache)?;
            let data_dir = root.path.clone();
            let options = IndexOptions {
                hashes: !cells_only,
                backup_diff: !cells_only,
            };
            // `--cells-only` is what the server's first snapshot does, trusting sizes and modification times; a
            // full index checks every cached read against its files' contents, as the server's second stage does.
            let trust = if cells_only {
                Trust::Stamps
            } else {
                Trust::Contents
            };
            let cache = cache.runs(&data_dir)?;
            let mut seconds = Vec::new();
            let mut last = None;
            for _ in 0..repeat.max(1) {
                // The index before is let go first, as a repeated run of a script lets go of its last result: held
                // while the next is built, it kept the allocator from reusing its memory, and the second index
                // faulted in fresh pages for all of its own.
                drop(last.take());
                let index = load(&data_dir, &options, cache.as_ref(), trust)?;
                seconds.push(index.elapsed.as_secs_f64());
                last = Some(index);
            }
            let index = last.context("no index was built")?;
            // `seconds` stays in the order the indexes ran: the first is cold, the later ones warm.
            let mut sorted = seconds.clone();
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
                    seconds: &seconds,
                    cache: index.cache.as_ref(),
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
                    index.cache.as_ref().map_or_else(String::new, |report| format!(
                        "; cache: {} read from it, {} from files, {} written, {} stale, {} unreadable",
                        report.used,
                        report.read,
                        report.written,
                        report.stale,
                        report.unreadable.len()
                    ))
                );
            }
            // The process ends here: the system takes its memory back at once, where dropping the index freed
            // it cell by cell (about 3 ms of a 50 ms cold index of the demo data, timed from spawn to exit).
            std::mem::forget(index);
            Ok(ExitCode::SUCCESS)
        }
        Command::Serve {
            data_dir,
            addr,
            cors,
            bench_static,
            poll,
            http_threads,
            cache,
        } => {
            let data_root = DataRoot::open(data_dir, &cache)?;
            let data_dir = data_root.path.clone();
            let root = data_dir
                .canonicalize()
                .with_context(|| format!("data directory {} does not exist", data_dir.display()))?;
            let base = cache.base(&root)?;
            let archive = match &base {
                None => None,
                Some(base) => {
                    let dir = snapshot_cache(base, &root)?;
                    tracing::info!(dir = %dir.display(), "keeping recent snapshots for pinned links");
                    Some(cellscope::http::archive::Archive::new(
                        dir,
                        KEPT_SNAPSHOTS,
                        KEPT_BYTES,
                    ))
                }
            };
            let runs = cache.runs(&root)?.map(std::sync::Arc::new);
            // What the data root's files are now, and the kept answers for exactly these files and this build.
            let inputs = archive.as_ref().and_then(|_| {
                cellscope::http::start::inputs_fingerprint(&root)
                    .map_err(|error| tracing::warn!(%error, root = %root.display(), "cannot list the data root before indexing"))
                    .ok()
            });
            let kept = archive
                .as_ref()
                .zip(inputs.as_deref())
                .and_then(|(archive, inputs)| archive.kept_for_inputs(inputs));
            if let Some(kept) = &kept {
                tracing::info!(
                    snapshot = %kept.id,
                    "the data root is as it was for a kept snapshot: the app's first requests are answered from it while the index is built"
                );
            }
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(http_threads.map_or_else(default_http_threads, usize::from))
                .enable_all()
                .build()
                .context("starting the async runtime")?;
            // As the runtime counts them, so that the log says what runs, not what was asked.
            tracing::info!(
                http_threads = runtime.metrics().num_workers(),
                "threads answering HTTP requests"
            );
            let options = cellscope::http::HttpOptions {
                cors_origin: cors,
                bench_static,
                limits: cellscope::http::limits::Limits::default(),
            };
            runtime.block_on(async {
                // Listening comes first: the app's files are served and a warm start answers the app's first
                // requests from the kept snapshot while the index is built; other API requests wait for it.
                let listener = tokio::net::TcpListener::bind(addr)
                    .await
                    .with_context(|| format!("cannot listen on {addr}"))?;
                let starting = cellscope::http::start::Starting::new(&listener, kept, &options)
                    .map_err(anyhow::Error::msg)?;
                let mut serving = tokio::spawn(starting.clone().serve(listener, async {
                    let _ = tokio::signal::ctrl_c().await;
                }));
                // Indexing runs on a thread of its own, which Ctrl-C does not wait for.
                let (built_sender, built) = tokio::sync::oneshot::channel();
                let building_root = root.clone();
                std::thread::Builder::new()
                    .name("cellscope-first-index".into())
                    .spawn(move || {
                        let _ =
                            built_sender.send(first_store(building_root, archive, runs, inputs));
                    })
                    .context("starting the first index")?;
                let store = tokio::select! {
                    built = built => built.context("the first index stopped")??,
                    served = &mut serving => return served.context("serving")?,
                };
                // A remote root is polled (its listing compared with the mirror's); a local one is watched.
                let _watching = match &data_root.remote {
                    Some(remote) => {
                        cellscope::http::watch::spawn_polling(
                            store.clone(),
                            std::sync::Arc::clone(remote),
                            std::time::Duration::from_secs_f64(poll.max(0.1)),
                        );
                        None
                    }
                    None => Some(cellscope::http::watch::spawn(store.clone())?),
                };
                starting.ready(store).map_err(anyhow::Error::msg)?;
                serving.await.context("serving")?
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Compare(arguments) => {
            let CompareArgs {
                data_dir,
                by,
                a,
                b,
                per,
                metric,
                alpha,
                include,
                omit_partial,
                run,
                suite,
                phase,
                backend,
                model,
                workload,
                n,
                rep,
                json,
                cache,
            } = *arguments;
            let root = DataRoot::open(data_dir, &cache)?;
            let data_dir = root.path.clone();
            // The same name/value pairs `/api/compare` takes, read by the same parser.
            let mut pairs: Vec<(String, String)> = vec![
                ("by".into(), by),
                ("a".into(), a),
                ("b".into(), b),
                ("per".into(), per),
                ("metric".into(), metric),
                ("alpha".into(), alpha.to_string()),
            ];
            if !include.is_empty() {
                pairs.push(("include".into(), include.join(",")));
            }
            if omit_partial {
                pairs.push(("omit".into(), "partial".into()));
            }
            for (dimension, values) in [
                (Dimension::Run, run),
                (Dimension::Suite, suite),
                (Dimension::Phase, phase),
                (Dimension::Backend, backend),
                (Dimension::Model, model),
                (Dimension::Workload, workload),
                (Dimension::N, n),
                (Dimension::Rep, rep),
            ] {
                if !values.is_empty() {
                    pairs.push((dimension.name().into(), values.join(",")));
                }
            }
            let query = cellscope_model::compare::parse_query(&pairs)?;
            let cache = cache.runs(&data_dir)?;
            let index = load(
                &data_dir,
                &IndexOptions::CELLS,
                cache.as_ref(),
                Trust::Contents,
            )?;
            let cells = cellscope_model::explore::working_cells(
                &index.cells,
                &index.pre_refill_cells,
                &query.what_if,
            );
            let comparison = query.run(&cells)?;
            let confounders = cellscope_model::compare::confounders::confounders(
                &comparison,
                &cells,
                &index.runs,
            );
            let body = cellscope_model::api::CompareBody {
                comparison,
                confounders,
            };
            let mut stdout = std::io::stdout().lock();
            if json {
                serde_json::to_writer_pretty(&mut stdout, &body).context("writing JSON")?;
                writeln!(stdout)?;
            } else {
                stdout.write_all(printable(&cellscope::compare::render_body(&body)).as_bytes())?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Bundle {
            data_dir,
            view,
            output,
            cache,
        } => {
            let data_root = DataRoot::open(data_dir, &cache)?;
            let data_dir = data_root.path.clone();
            let root = data_dir
                .canonicalize()
                .with_context(|| format!("cannot index {}", data_dir.display()))?;
            let target = resolved(&output)?;
            if target.starts_with(&root) {
                bail!(
                    "{} is inside the data root {}, which cellscope never writes to; write the bundle elsewhere \
                     with -o FILE",
                    output.display(),
                    root.display()
                );
            }
            let cache = cache.runs(&data_dir)?;
            let index = load(
                &data_dir,
                &IndexOptions::default(),
                cache.as_ref(),
                Trust::Contents,
            )?;
            for warning in &index.warnings {
                eprintln!("{}", printable(&warning.to_string()));
            }
            let snapshot = cellscope::http::snapshot::Snapshot::new(index, true)
                .map_err(anyhow::Error::msg)?;
            let made_at_unix_ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |elapsed| elapsed.as_millis() as u64);
            let bundle = cellscope::bundle::build(&snapshot, &view, made_at_unix_ms)?;
            for (key, reason) in &bundle.unreadable {
                eprintln!(
                    "{}",
                    printable(&format!("rows of {key} left out: {reason}"))
                );
            }
            std::fs::write(&output, &bundle.html)
                .with_context(|| format!("writing {}", output.display()))?;
            println!(
                "wrote {}: {:.1} MB, snapshot {}, {} cells in view, request rows of {}{}",
                output.display(),
                bundle.html.len() as f64 / 1e6,
                snapshot.id,
                bundle.cells_in_view,
                bundle.cells_with_rows,
                if bundle.cells_with_rows < bundle.cells_in_view {
                    format!(
                        " (the rest left out beyond {} MB of rows; narrow the view for all)",
                        cellscope::bundle::MAX_ROW_BYTES >> 20
                    )
                } else {
                    String::new()
                }
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Cells {
            data_dir,
            format,
            output,
            cache,
        } => {
            let root = DataRoot::open(data_dir, &cache)?;
            let data_dir = root.path.clone();
            let cache = cache.runs(&data_dir)?;
            let index = load(
                &data_dir,
                &IndexOptions::CELLS,
                cache.as_ref(),
                Trust::Contents,
            )?;
            for warning in &index.warnings {
                eprintln!("{}", printable(&warning.to_string()));
            }
            let bytes = export::encode(&index.cells, format)?;
            match output {
                Some(path) => std::fs::write(&path, bytes)
                    .with_context(|| format!("writing {}", path.display()))?,
                None => std::io::stdout()
                    .lock()
                    .write_all(&bytes)
                    .context("writing to standard output")?,
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CELLSCOPE_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}
