//! What `cellscope index --explain` prints of the other tools' fixtures under `data/fixtures/formats/`: the field
//! or rule behind every dimension, through the binary. Their cells against the numpy oracle are tested in the
//! index's own suite (`index/tests/suite/formats.rs`).

use crate::shared::{check, format_fixtures as fixtures, index};
use cellscope_index::Index;
use cellscope_model::Load;
use std::path::Path;

/// What `cellscope index ROOT --explain ROOT/FILE` prints (the command must succeed).
fn explain(root: &Path, file: &str) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_cellscope"))
        .args(["index", &root.to_string_lossy(), "--explain"])
        .arg(root.join(file))
        .output()
        .expect("cellscope runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// What `cellscope index ROOT --explain ROOT/FILE` prints, out and err together, whether or not the file is read.
fn explain_any(root: &Path, file: &str) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_cellscope"))
        .args(["index", &root.to_string_lossy(), "--explain"])
        .arg(root.join(file))
        .output()
        .expect("cellscope runs");
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The line of `--explain` output that says how `dimension` was found.
fn dimension_line(text: &str, dimension: &str) -> String {
    text.lines()
        .find(|line| line.trim_start().starts_with(&format!("{dimension} ")))
        .unwrap_or_else(|| panic!("no {dimension} line in {text}"))
        .to_string()
}

#[test]
fn table_keys_units_and_explain() {
    // Request grain in seconds: converted to ms, failures counted with their text, timestamps give the span.
    let index = index("table-requests");
    let failed = index
        .cells
        .iter()
        .find(|cell| cell.failed_rows > 0)
        .expect("a cell with a failure");
    assert_eq!(failed.key.n().expect("a concurrency"), 4);
    assert_eq!(failed.key.rep, 1);
    assert_eq!(failed.key.backend, "tgi");
    assert_eq!(failed.key.suite, "loadtest");
    assert!(failed.stats.p50_wall_ms.is_some_and(|ms| ms > 100.0));
    assert!(index.cells.iter().all(|cell| cell.efficiency.is_some()));
    // Constants are inferred, columns read.
    assert_eq!(failed.origin.inferred, ["suite", "phase"]);
    // The canonical cell table needs no cellscope.toml; the seeds' constants say they were inferred.
    let index = self::index("seed-cold-start");
    assert!(
        index
            .cells
            .iter()
            .all(|cell| cell.key.n().expect("a concurrency") == 1
                && cell.origin.inferred.contains(&"n".to_string()))
    );
    let root = fixtures().join("seed-tr131");
    let text = explain(&root, "tr131/per_run_summaries.csv");
    assert!(text.contains("format: table"), "{text}");
    assert!(text.contains("run id: 20260226_174224"), "{text}");
    let line = |dimension: &str| dimension_line(&text, dimension);
    assert!(line("model").contains("read from column `model`"), "{text}");
    assert!(line("n").contains("read from column `n`"), "{text}");
    assert!(
        line("suite").contains("inferred: cellscope.toml [[table]] #1"),
        "{text}"
    );
}

#[test]
fn explain_names_the_field_or_rule_behind_every_dimension() {
    let root = fixtures().join("vllm-sweep");
    let file = "results/20260301_101500/SERVE--max_num_seqs=32-BENCH--max_concurrency=4/run=1.json";
    let text = explain(&root, file);
    assert!(text.contains("format: vllm-bench"), "{text}");
    assert!(text.contains("run root: results/20260301_101500"), "{text}");
    let line = |dimension: &str| dimension_line(&text, dimension);
    assert!(line("n").contains("= 4") && line("n").contains("read from field `max_concurrency`"));
    assert!(line("rep").contains("= 1") && line("rep").contains("read from field `run_number`"));
    assert!(line("model").contains("read from field `model_id`"));
    // Nothing in the file or its path names the engine (vLLM's `backend` is the request protocol).
    assert!(
        line("backend").contains("= unknown") && line("backend").contains("inferred: no engine")
    );
    assert!(line("suite").contains("= vllm-bench") && line("suite").contains("inferred"));
    // A file outside the data root is refused with a clear error.
    let outside = std::process::Command::new(env!("CARGO_BIN_EXE_cellscope"))
        .args(["index", &root.to_string_lossy(), "--explain"])
        .arg(fixtures().join("vllm-plain"))
        .output()
        .expect("cellscope runs");
    assert!(!outside.status.success());
    assert!(String::from_utf8_lossy(&outside.stderr).contains("not inside the data root"));
}

/// An aggregate row states every dimension in its fields; the figures per GPU and the interactivity stay the
/// tool's, output tok/s is derived from them, and a status comes from the figures although no count is given.
#[test]
fn inferencex_aggregates_explain_their_dimensions_and_keep_the_tools_figures() {
    let root = fixtures().join("inferencex-agg");
    let text = explain(&root, "agg_bmk.json");
    assert!(text.contains("format: inferencex-agg"), "{text}");
    for (dimension, source) in [
        ("backend", "read from field `framework`"),
        ("model", "read from field `model`"),
        ("workload", "read from fields `isl`, `osl`"),
        ("n", "read from field `conc`"),
    ] {
        assert!(dimension_line(&text, dimension).contains(source), "{text}");
    }
    assert!(
        text.contains("accelerator            = b200             field `hw`"),
        "{text}"
    );
    let index = index("inferencex-agg");
    for cell in &index.cells {
        assert_eq!(
            cell.status,
            cellscope_model::CellStatus::Clean,
            "{}",
            cell.key
        );
        assert!(cell.origin.is_reported("output_tps_per_accelerator"));
        assert!(cell.origin.is_reported("p50_ttft_ms"));
    }
    let single = index
        .cells
        .iter()
        .find(|cell| {
            cell.key.config.get("tp") == Some("8") && cell.key.load == Load::Concurrency(16)
        })
        .expect("the TP8 row at conc 16");
    assert!(single.origin.is_derived("aggregate_tps"));
    // The name's workload and configuration agree with the content of a single-object file.
    let text = explain(
        &root,
        "agg_70b_1k1k_fp8_vllm_tp2_ep1_dpa_false_conc8_h200.json",
    );
    assert!(!text.contains("config_conflict"), "{text}");
}

#[test]
fn csv_exports_read_alone_match_the_oracle() {
    for name in ["perf-csv", "perf-csv-bad"] {
        check(name);
    }
    let root = fixtures().join("perf-csv");
    let text = explain(
        &root,
        "artifacts/Qwen_Qwen3-8B-openai-chat-concurrency16/profile_export_aiperf.csv",
    );
    assert!(text.contains("format: perf-csv"), "{text}");
    assert!(
        dimension_line(&text, "n").contains("inferred: the load level in the directory name"),
        "{text}"
    );
    assert!(
        dimension_line(&text, "model").contains("inferred: the artifact directory"),
        "{text}"
    );
}

#[test]
fn explain_names_where_a_report_states_each_dimension() {
    let root = fixtures().join("llmd-report-v02");
    let text = explain(
        &root,
        "yaml/benchmark_report_v0.2,_stage_1_lifecycle_metrics.json.yaml",
    );
    assert!(text.contains("format: llmd-report"), "{text}");
    assert!(text.contains("run root: yaml"), "{text}");
    let line = |dimension: &str| dimension_line(&text, dimension);
    assert!(
        line("rate").contains("= 10")
            && line("rate").contains("read from field `scenario.load.standardized.rate_qps`"),
        "{text}"
    );
    assert!(
        line("model").contains("= Qwen3-0.6B")
            && line("model")
                .contains("read from field `scenario.stack[0].standardized.model.name`"),
        "{text}"
    );
    assert!(
        line("backend").contains("= vllm")
            && line("backend").contains("read from field `scenario.stack[0].standardized.tool`"),
        "{text}"
    );
    assert!(text.contains("field `run.eid`"), "{text}");
    assert!(text.contains("decode_tp"), "{text}");
    let text = explain(&root, "json/benchmark_report_v0.2,_results_c8.json");
    assert!(
        dimension_line(&text, "n")
            .contains("read from field `scenario.load.standardized.concurrency`"),
        "{text}"
    );
    // The schema 0.1 copy beside a 0.2 report says which report is read instead.
    let text = explain_any(
        &root,
        "yaml/benchmark_report,_stage_0_lifecycle_metrics.json.yaml",
    );
    assert!(
        text.contains("is not read") && text.contains("is read instead"),
        "{text}"
    );
}

#[test]
fn explain_says_the_model_of_an_inference_perf_stage_comes_from_its_config() {
    let root = fixtures().join("inference-perf");
    let text = explain(
        &root,
        "reports-20260310-101500/stage_1_lifecycle_metrics.json",
    );
    assert!(text.contains("format: inference-perf"), "{text}");
    let line = |dimension: &str| dimension_line(&text, dimension);
    assert!(
        line("rate").contains("= 5")
            && line("rate").contains("read from field `load_summary.requested_rate`"),
        "{text}"
    );
    assert!(
        line("model").contains("= Qwen3-0.6B")
            && line("model")
                .contains("read from config.yaml beside the file, field `server.model_name`"),
        "{text}"
    );
    assert!(line("workload").contains("field `data.type`"), "{text}");
    let text = explain_any(
        &root,
        "reports-20260310-101500/summary_lifecycle_metrics.json",
    );
    assert!(text.contains("summary over every stage"), "{text}");
}

#[test]
fn mlperf_explain_names_the_log_and_the_results_path_behind_each_dimension() {
    let root = fixtures().join("mlperf-server");
    let run = "closed/Acme/results/8xH100-SXM-80GB_TRT/llama2-70b-99";
    let text = explain(
        &root,
        &format!("{run}/Server/performance/run_1/mlperf_log_detail.txt"),
    );
    assert!(text.contains("format: mlperf-loadgen"), "{text}");
    assert!(text.contains(&format!("run root: {run}")), "{text}");
    let line = |dimension: &str| dimension_line(&text, dimension);
    assert!(
        line("phase").contains("= Server")
            && line("phase").contains("read from key `effective_scenario`")
    );
    assert!(
        line("rate").contains("= 4")
            && line("rate").contains("read from key `effective_target_qps`")
    );
    assert!(
        line("model").contains("= llama2-70b-99")
            && line("model").contains("inferred: the MLPerf results path")
    );
    assert!(line("rep").contains("= 0") && line("rep").contains("`run_1`"));
    assert!(text.contains("note: slo=llama2-70b"), "{text}");
    assert!(
        text.contains("system                 = 8xH100-SXM-80GB_TRT"),
        "{text}"
    );
    let offline = explain(
        &root,
        &format!("{run}/Offline/performance/run_1/mlperf_log_detail.txt"),
    );
    assert!(
        dimension_line(&offline, "rate").contains("= inf"),
        "{offline}"
    );
    // The summary beside the detail log is its check, and the accuracy log a side file: not read.
    let summary = explain_unread(
        &root,
        &format!("{run}/Server/performance/run_1/mlperf_log_summary.txt"),
    );
    assert!(
        summary.contains("checked against the detail log"),
        "{summary}"
    );
    let accuracy = explain_unread(
        &root,
        &format!("{run}/Server/accuracy/mlperf_log_accuracy.json"),
    );
    assert!(accuracy.contains("LoadGen's accuracy log"), "{accuracy}");
}

/// What `cellscope index ROOT --explain ROOT/FILE` says of a file it does not read (the command fails).
fn explain_unread(root: &Path, file: &str) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_cellscope"))
        .args(["index", &root.to_string_lossy(), "--explain"])
        .arg(root.join(file))
        .output()
        .expect("cellscope runs");
    assert!(!output.status.success(), "{file} is read");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn console_log_explain_names_the_line_behind_each_dimension() {
    let root = fixtures().join("console-vllm");
    let text = explain(&root, "sweep.log");
    assert!(text.contains("format: console-log"), "{text}");
    let records = text.matches("  record ").count();
    assert_eq!(records, 3, "{text}");
    let line = |dimension: &str| dimension_line(&text, dimension);
    assert!(line("n").contains("= 1") && line("n").contains("`Maximum request concurrency`"));
    assert!(line("model").contains("= Qwen3-8B") && line("model").contains("argument dump"));
    assert!(line("workload").contains("= random_1024x128"));
    let rate = explain(&root, "logs/rate4.txt");
    assert!(
        dimension_line(&rate, "rate").contains("= 4")
            && dimension_line(&rate, "rate").contains("`request_rate` of the argument dump"),
        "{rate}"
    );
    let trtllm = explain(&fixtures().join("console-trtllm"), "throughput_c64.log");
    assert!(dimension_line(&trtllm, "n").contains("= 64"), "{trtllm}");
    assert!(
        dimension_line(&trtllm, "n").contains("command line echoed"),
        "{trtllm}"
    );
    assert!(
        dimension_line(&trtllm, "backend").contains("= trtllm"),
        "{trtllm}"
    );
    assert!(
        dimension_line(&trtllm, "model").contains("`Model:` line"),
        "{trtllm}"
    );
    let old = explain(
        &fixtures().join("console-trtllm"),
        "old/throughput_llama2.txt",
    );
    assert!(dimension_line(&old, "rate").contains("= inf"), "{old}");
    let sglang = explain(&fixtures().join("console-sglang"), "bench_serving.out");
    assert!(
        dimension_line(&sglang, "backend").contains("= sglang"),
        "{sglang}"
    );
}

/// The warnings of `kind` in an index, with the files they name.
fn findings<'a>(index: &'a Index, kind: &str) -> Vec<&'a cellscope_model::api::Warning> {
    index
        .warnings
        .iter()
        .filter(|warning| warning.kind == kind)
        .collect()
}

/// The engine a file names (its `backend`, its result name's engine and runner) is the backend by its one name;
/// the folder named after the client only fills a gap, and its contradiction is a `path_disagrees` warning.
#[test]
fn the_engine_the_file_names_is_the_backend_and_a_contradicting_folder_is_named() {
    check("vllm-trt-folder");
    let index = index("vllm-trt-folder");
    assert_eq!(index.cells.len(), 2);
    assert!(
        index.cells.iter().all(|cell| cell.key.backend == "trtllm"),
        "{:?}",
        index
            .cells
            .iter()
            .map(|cell| &cell.key.backend)
            .collect::<Vec<_>>()
    );
    let disagree = findings(&index, "path_disagrees");
    assert_eq!(disagree.len(), 2, "{:#?}", index.warnings);
    for warning in &disagree {
        assert!(
            warning.message.contains("the folder names the engine vllm")
                && warning.message.contains("the file's value is used"),
            "{}",
            warning.message
        );
    }
    // The name as written stays with the cell, for the inspector and `--explain`.
    let notes: Vec<&String> = index
        .provenance
        .values()
        .filter_map(|provenance| provenance.origin.as_ref())
        .flat_map(|origin| &origin.notes)
        .collect();
    assert!(
        notes
            .iter()
            .any(|note| note.contains("`tensorrt-llm`") && note.contains("`trtllm`")),
        "{notes:#?}"
    );
    // The result name's engine is kept as its name writes it, in the rule that read it.
    let inferred: Vec<&cellscope_model::origin::InferredPart> = index
        .provenance
        .values()
        .filter_map(|provenance| provenance.origin.as_ref())
        .flat_map(|origin| &origin.inferred)
        .filter(|part| part.dimension == "backend")
        .collect();
    assert!(
        inferred.iter().any(|part| part.value == "trtllm"
            && part
                .rule
                .contains("dsr1_1k1k_fp8_trt_tp8_ep8_dpa_false_conc16_b200-trt")),
        "{inferred:#?}"
    );
    let root = fixtures().join("vllm-trt-folder");
    let text = explain(
        &root,
        "vllm/tensorrt-llm-concurrency4-Llama-3.1-8B-Instruct-20260306-081500.json",
    );
    let backend = dimension_line(&text, "backend");
    assert!(
        backend.contains("= trtllm")
            && backend.contains("read from field `backend` (written `tensorrt-llm`)"),
        "{text}"
    );
    let text = explain(
        &root,
        "vllm/dsr1_1k1k_fp8_trt_tp8_ep8_dpa_false_conc16_b200-trt.json",
    );
    assert!(text.contains("accelerator            = b200"), "{text}");
    assert!(
        dimension_line(&text, "backend").contains("= trtllm"),
        "{text}"
    );
}

/// LoadGen logs of several submissions in one folder are paired by their own fields, not by their names' order; the
/// system is the log's SUT name there; an Offline summary alone counts no requests.
#[test]
fn mlperf_logs_in_one_folder_pair_by_their_own_fields() {
    check("mlperf-flat");
    let index = index("mlperf-flat");
    assert!(
        findings(&index, "logs_disagree").is_empty(),
        "{:#?}",
        index.warnings
    );
    let systems = cellscope_model::order::sorted_distinct(
        index
            .cells
            .iter()
            .filter_map(|cell| cell.key.config.get("system").map(str::to_string)),
    );
    assert_eq!(
        systems,
        ["Acme-8xH100-TRT", "Nova-4xB200", "Zeta-8xMI300X-vLLM"]
    );
    let offline = index
        .provenance
        .values()
        .filter_map(|provenance| provenance.origin.as_ref())
        .find(|origin| origin.file == "logs/summary_3.txt")
        .expect("the Offline summary read alone");
    assert!(
        offline
            .notes
            .iter()
            .any(|note| note.contains("request count is unknown")),
        "{:#?}",
        offline.notes
    );
    // The summaries paired with a detail log are its checks, not cells.
    let root = fixtures().join("mlperf-flat");
    let summary = explain_unread(&root, "logs/summary_2.txt");
    assert!(
        summary.contains("checked against the detail log"),
        "{summary}"
    );
}
