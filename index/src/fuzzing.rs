//! The bodies of the fuzz targets of every reader of outside input in the index and the model, each given arbitrary
//! bytes, with the property it must keep, and the stable runner of them on the committed corpus ([`check_corpus`]).
//! `fuzz/` runs them under libFuzzer (`cargo xtask fuzz`), and the index's and the server's test suites run them on
//! the corpus and seeded mutations of it in every test run, so one definition serves both.
//!
//! Each function panics when its property fails: that is how libFuzzer and the tests see a finding. Built only with
//! the `fuzzing` feature, which `fuzz/` and the tests turn on.

pub use crate::formats::fuzz_entry_points::*;
use crate::run::record::FileAt;
use std::path::{Path, PathBuf};

/// A target's body: arbitrary bytes in, a panic when its property fails.
pub type Check = fn(&[u8]);

/// The fuzz targets of the index's and the model's readers by name, as `fuzz/fuzz_targets/<name>.rs` and the corpus
/// directories call them.
pub const TARGETS: [(&str, Check); 21] = [
    ("metrics_csv", metrics_csv),
    ("run_files", run_files),
    ("formats", formats),
    ("exclusions", exclusions),
    ("view_state", view_state),
    ("api_query", api_query),
    ("toml_mapping", toml_mapping),
    ("vllm_bench", |data| reader("vllm_bench", data)),
    ("sglang_bench", |data| reader("sglang_bench", data)),
    ("aiperf", |data| reader("aiperf", data)),
    ("genai_perf", |data| reader("genai_perf", data)),
    ("llmperf", |data| reader("llmperf", data)),
    ("guidellm", |data| reader("guidellm", data)),
    ("inferencex_agg", |data| reader("inferencex_agg", data)),
    ("perf_csv", |data| reader("perf_csv", data)),
    ("llmd_report", |data| reader("llmd_report", data)),
    ("inference_perf", |data| reader("inference_perf", data)),
    ("mlperf_loadgen", |data| reader("mlperf_loadgen", data)),
    ("console_log", |data| reader("console_log", data)),
    ("table_csv", |data| reader("table_csv", data)),
    ("table_parquet", |data| reader("table_parquet", data)),
];

/// The file names other tools write, one of which each `formats` input is given (its first byte chooses).
const FORMAT_FILE_NAMES: [&str; 12] = [
    "sweep/openai-infqps-concurrency4-Qwen3-8B-20260302-090130.json",
    "sweep/sglang_0302_16_1024_128.jsonl",
    "sweep/c8/profile_export_aiperf.json",
    "sweep/c8/profile_export_aiperf.csv",
    "sweep/c8/profile_export.jsonl",
    "sweep/c2/profile_export_genai_perf.json",
    "sweep/c2/profile_export.json",
    "sweep/n4/model_256_64_summary.json",
    "sweep/n4/model_256_64_individual_responses.json",
    "sweep/benchmarks.json",
    "sweep/requests.csv",
    "sweep/requests.parquet",
];

/// A data root holding one file.
struct OneFile<'a> {
    path: &'a str,
    bytes: &'a [u8],
}

impl crate::storage::Storage for OneFile<'_> {
    fn list(&self, directory: &str) -> std::io::Result<Vec<crate::storage::Entry>> {
        use crate::storage::{Entry, EntryKind, file_name, parent};
        Ok(if parent(self.path) == directory {
            vec![Entry {
                name: file_name(self.path).to_string(),
                kind: EntryKind::File,
                bytes: self.bytes.len() as u64,
                modified: None,
            }]
        } else {
            Vec::new()
        })
    }

    fn stat(&self, path: &str) -> std::io::Result<crate::storage::Meta> {
        if path == self.path {
            Ok(crate::storage::Meta {
                bytes: self.bytes.len() as u64,
                modified: None,
                kind: crate::storage::EntryKind::File,
            })
        } else {
            Err(std::io::ErrorKind::NotFound.into())
        }
    }

    fn read(&self, path: &str) -> std::io::Result<Vec<u8>> {
        self.stat(path).map(|_| self.bytes.to_vec())
    }

    fn read_range(&self, path: &str, range: std::ops::Range<u64>) -> std::io::Result<Vec<u8>> {
        self.stat(path)?;
        let end = (range.end as usize).min(self.bytes.len());
        let start = (range.start as usize).min(end);
        Ok(self.bytes[start..end].to_vec())
    }

    fn display(&self, path: &str) -> String {
        path.to_string()
    }
}

/// Every other tool's reader (each format of the registry) takes any file under any of the names those tools write
/// without panicking, and every warning it gives names the file.
pub fn formats(data: &[u8]) {
    let Some((&choice, content)) = data.split_first() else {
        return;
    };
    let path = FORMAT_FILE_NAMES[usize::from(choice) % FORMAT_FILE_NAMES.len()];
    for format in crate::formats::all() {
        read_as(format, path, content);
    }
}

/// Each reader alone, under the file names its tool writes: `(target, format, names)`. Fuzzing one reader at a
/// time lets libFuzzer's coverage feedback go deep into that reader's code.
const READERS: [(&str, &str, &[&str]); 14] = [
    (
        "vllm_bench",
        "vllm-bench",
        &[
            "sweep/openai-infqps-concurrency4-Qwen3-8B-20260302-090130.json",
            "sweep/bench-results.json",
            "results/20260302_093000/SERVE--max_num_seqs=4-BENCH--max_concurrency=2/run=0.json",
        ],
    ),
    (
        "sglang_bench",
        "sglang-bench",
        &[
            "sweep/sglang_0302_16_1024_128.jsonl",
            "sweep/sglang_aggregates.jsonl",
        ],
    ),
    (
        "aiperf",
        "aiperf",
        &[
            "sweep/c8/profile_export_aiperf.json",
            "sweep/c8/profile_export.jsonl",
        ],
    ),
    (
        "genai_perf",
        "genai-perf",
        &[
            "sweep/c2/profile_export_genai_perf.json",
            "sweep/c2/profile_export.json",
        ],
    ),
    (
        "llmperf",
        "llmperf",
        &[
            "sweep/n4/model_256_64_summary.json",
            "sweep/n4/model_256_64_individual_responses.json",
        ],
    ),
    (
        "guidellm",
        "guidellm",
        &["sweep/benchmarks.json", "sweep/benchmarks.yaml"],
    ),
    (
        "inferencex_agg",
        "inferencex-agg",
        &[
            "sweep/agg_bmk.json",
            "sweep/agg_70b_1k1k_fp8_vllm_tp2_conc8_h200.json",
            "api/benchmarks.json",
        ],
    ),
    (
        "perf_csv",
        "perf-csv",
        &[
            "sweep/c8/profile_export_aiperf.csv",
            "sweep/c2/profile_export_genai_perf.csv",
        ],
    ),
    (
        "llmd_report",
        "llmd-report",
        &[
            "exp/benchmark_report_v0.2,_stage_0_lifecycle_metrics.json.yaml",
            "exp/benchmark_report_v0.2,_results_c8.json",
            "exp/benchmark_report,_stage_1_lifecycle_metrics.json.yaml",
        ],
    ),
    (
        "inference_perf",
        "inference-perf",
        &["reports-20260310-101500/stage_0_lifecycle_metrics.json"],
    ),
    (
        "mlperf_loadgen",
        "mlperf-loadgen",
        &[
            "results/8xH100/llama2-70b-99/Server/performance/run_1/mlperf_log_detail.txt",
            "results/8xH100/llama2-70b-99/Offline/performance/run_1/mlperf_log_summary.txt",
        ],
    ),
    (
        "console_log",
        "console-log",
        &[
            "logs/sweep.log",
            "logs/bench_serving.out",
            "logs/throughput_c64.txt",
        ],
    ),
    (
        "table_csv",
        "table",
        &["sweep/requests.csv", "sweep/summary_by_cell.csv"],
    ),
    ("table_parquet", "table", &["sweep/requests.parquet"]),
];

/// The target `target` of [`READERS`]: its reader on `data` (after the first byte, which chooses the name).
fn reader(target: &str, data: &[u8]) {
    let Some((&choice, content)) = data.split_first() else {
        return;
    };
    let (_, format, names) = READERS
        .iter()
        .find(|(name, _, _)| *name == target)
        .unwrap_or_else(|| panic!("no reader target {target}"));
    let format = crate::formats::by_name(format).unwrap_or_else(|| panic!("no format {format}"));
    read_as(format, names[usize::from(choice) % names.len()], content);
}

/// One reader on one file: detection and reading never panic, and every warning names the file.
fn read_as(format: &dyn crate::formats::RunFormat, path: &str, content: &[u8]) {
    let storage = OneFile {
        path,
        bytes: content,
    };
    let mapping = crate::mapping::Mapping::default();
    let _ = format.examine(&FileAt {
        storage: &storage,
        mapping: &mapping,
        path,
        head: &content[..content.len().min(64 * 1024)],
    });
    let mut warnings = Vec::new();
    let _records = with_caught_panics_allowed(|| {
        format.records(&FileAt::whole(&storage, &mapping, path), &mut warnings)
    });
    for warning in &warnings {
        assert!(
            warning.file.is_some(),
            "{}: a warning without its file: {warning:?}",
            format.name()
        );
    }
}

/// `body` run with a silent panic hook instead of libFuzzer's aborting one, so that a panic the code under test
/// catches itself (the Parquet decoder's, which the table reader runs under `catch_unwind`) is not taken for a
/// crash; a panic that escapes `body` is raised again and still fails the target.
fn with_caught_panics_allowed<T>(body: impl FnOnce() -> T) -> T {
    let fuzzer_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
    std::panic::set_hook(fuzzer_hook);
    outcome.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// `cellscope.toml` is mapped or refused key by key, never a panic, and every warning names the file.
pub fn toml_mapping(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut warnings = Vec::new();
    let _mapping = crate::mapping::Mapping::parse(&text, "cellscope.toml", &mut warnings);
    for warning in &warnings {
        assert_eq!(warning.file.as_deref(), Some("cellscope.toml"), "{warning}");
    }
}

/// An exclusion ledger is read entry by entry; every warning names the ledger file.
pub fn exclusions(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut warnings = Vec::new();
    let entries = crate::ledger::load(text, "exclusions.toml", "", &mut warnings);
    for warning in &warnings {
        assert_eq!(
            warning.file.as_deref(),
            Some("exclusions.toml"),
            "{warning}"
        );
    }
    for entry in &entries {
        assert!(
            !entry.entry.id.trim().is_empty(),
            "an entry without an id was applied"
        );
    }
}

/// Any query string opens the app: the state read from it prints to a query that reads back as the same state.
pub fn view_state(data: &[u8]) {
    use cellscope_model::view_state::ViewState;
    let text = String::from_utf8_lossy(data);
    let (state, _ignored) = ViewState::parse_query(&text);
    let printed = state.to_query();
    let (again, ignored_again) = ViewState::parse_query(&printed);
    assert!(
        ignored_again.is_empty(),
        "{printed} is not read back whole: {ignored_again:?}"
    );
    assert_eq!(again, state, "{printed}");
    assert_eq!(again.to_query(), printed);
}

/// The API's query parser answers any query with a typed query or an error naming the problem, on every
/// endpoint, never a panic.
pub fn api_query(data: &[u8]) {
    use cellscope_model::query::{Endpoint, Query};
    let text = String::from_utf8_lossy(data);
    for endpoint in Endpoint::ALL {
        if let Err(error) = Query::parse(&text, endpoint) {
            assert!(!error.to_string().is_empty());
        }
    }
}

/// Small pieces that change how the readers split and read: delimiters, quotes, line ends, numbers, markup.
const TOKENS: [&[u8]; 18] = [
    b",",
    b"\n",
    b"\r\n",
    b"\r",
    b"\"",
    b"0",
    b"-1",
    b"NaN",
    b"1e400",
    b"ok",
    b"\xef\xbb\xbf",
    b"\xff",
    b"<script>",
    b"javascript:",
    b"=",
    b"&",
    b"%",
    b"[[exclude]]\n",
];

/// Seeded edits of a corpus file (xorshift: the same seed gives the same mutants on every platform).
struct Mutator(u64);

impl Mutator {
    fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % bound.max(1) as u64) as usize
    }

    /// One to four edits of `bytes`: a byte changed, a token inserted, a stretch removed or repeated, a cut.
    fn mutate(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut out = bytes.to_vec();
        for _ in 0..1 + self.below(4) {
            let at = self.below(out.len() + 1);
            match self.below(5) {
                0 if !out.is_empty() => {
                    let at = at.min(out.len() - 1);
                    out[at] = self.below(256) as u8;
                }
                1 => {
                    let token = TOKENS[self.below(TOKENS.len())];
                    out.splice(at..at, token.iter().copied());
                }
                2 => {
                    let end = (at + self.below(64)).min(out.len());
                    out.drain(at..end);
                }
                3 => {
                    let end = (at + self.below(256)).min(out.len());
                    let stretch = out[at..end].to_vec();
                    out.splice(at..at, stretch);
                }
                _ => out.truncate(at),
            }
        }
        out
    }
}

/// The committed corpus of `target` (`fuzz/corpus/<target>/`), each file with its bytes, in name order.
fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let directory = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&directory)
        .unwrap_or_else(|error| panic!("{}: {error}", directory.display()))
        .map(|entry| entry.unwrap_or_else(|error| panic!("{}: {error}", directory.display())))
        .map(|entry| entry.path())
        .map(|path| {
            let bytes =
                std::fs::read(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            (path, bytes)
        })
        .collect();
    files.sort();
    files
}

/// Every target of `targets` on its corpus and on seeded mutations of it: what `cargo xtask fuzz` runs for hours
/// under libFuzzer, run briefly with a stable compiler. `CELLSCOPE_FUZZ_MUTANTS` (mutants per file, 600 unless
/// set) and `CELLSCOPE_FUZZ_SEED` let `cargo xtask fuzz` go further; a failing mutant is kept in the temporary
/// directory and named in the panic.
pub fn check_corpus(targets: &[(&str, Check)]) {
    let mutants_per_file: usize = std::env::var("CELLSCOPE_FUZZ_MUTANTS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(600);
    let seed: u64 = std::env::var("CELLSCOPE_FUZZ_SEED")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(0x2545_F491_4F6C_DD1D);
    for (name, check) in targets {
        let files = corpus(name);
        assert!(!files.is_empty(), "no corpus for {name}");
        // Never zero: the xorshift would stay at zero.
        let mut mutator = Mutator((seed ^ name.len() as u64) | 1);
        for (path, bytes) in &files {
            check(bytes);
            // A large seed (a 125 KB GuideLLM report) gets fewer mutants: about 16 MB of mutated input per
            // target, shared between its seeds, keeps the whole run to seconds.
            let budget_bytes = (16 << 20) / files.len();
            let mutants = mutants_per_file
                .min(budget_bytes / bytes.len().max(1))
                .max(16);
            for round in 0..mutants {
                let mutant = mutator.mutate(bytes);
                if std::panic::catch_unwind(|| check(&mutant)).is_err() {
                    let kept = std::env::temp_dir().join(format!("cellscope-fuzz-{name}-{round}"));
                    let saved = std::fs::write(&kept, &mutant);
                    panic!(
                        "{name}: mutant {round} of {} fails; its bytes are in {} ({saved:?})",
                        path.display(),
                        kept.display()
                    );
                }
            }
        }
    }
}
