//! Files no reader recognises are named, never passed over in silence, and nothing else is: every committed
//! fixture root, the demo and the mixed-format root give no `not_recognised` finding (their side files, traces,
//! summaries and companions all belong to a run that was found), while `data/fixtures/not-recognised/` lists each
//! of its unknown files with the reason of the reader it came nearest to.

use crate::common::{cellscope_command, demo_index, demo_root};
use cellscope_index::{Index, IndexOptions, Quiet, build};
use cellscope_model::api::{NOT_RECOGNISED, Severity, Warning};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures")
}

fn not_recognised(index: &Index) -> Vec<&Warning> {
    index
        .warnings
        .iter()
        .filter(|warning| warning.kind == NOT_RECOGNISED)
        .collect()
}

/// Every directory under `parent`, sorted.
fn directories(parent: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(parent)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .collect();
    out.sort();
    out
}

#[test]
fn no_fixture_demo_or_mixed_root_has_a_file_no_reader_recognises() {
    // Every fixture is a root of its own; `formats/` is a directory of them (with the oracle's expected files
    // beside), and `not-recognised/` is the case below; `formats/text-outputs/` and `formats/aiperf-names/` hold
    // files that must be named (their tests are in `formats.rs`).
    let named = ["text-outputs", "aiperf-names"];
    let roots: Vec<PathBuf> = directories(&fixtures())
        .into_iter()
        .filter(|root| !root.ends_with("formats") && !root.ends_with("not-recognised"))
        .chain(
            directories(&fixtures().join("formats"))
                .into_iter()
                .filter(|root| !named.iter().any(|name| root.ends_with(name))),
        )
        .collect();
    assert!(roots.len() > 60, "{} roots", roots.len());
    let mut flagged = Vec::new();
    for root in &roots {
        let index = build(root, &IndexOptions::CELLS, &Quiet).expect("fixture indexes");
        flagged.extend(
            not_recognised(&index)
                .into_iter()
                .map(|warning| format!("{}: {warning}", root.display())),
        );
    }
    flagged.extend(
        not_recognised(demo_index())
            .into_iter()
            .map(|warning| format!("demo: {warning}")),
    );
    let mixed = tempfile::tempdir().unwrap();
    let mixed_root = mixed.path().join("mixed");
    cellscope_demo::generate_mixed(
        demo_root(),
        &mixed_root,
        &cellscope_demo::Options {
            seed: 164,
            scale: 1,
        },
    )
    .expect("the mixed root generates");
    let index = build(&mixed_root, &IndexOptions::CELLS, &Quiet).expect("mixed root indexes");
    flagged.extend(
        not_recognised(&index)
            .into_iter()
            .map(|warning| format!("demo-mixed: {warning}")),
    );
    assert!(flagged.is_empty(), "{flagged:#?}");
}

/// The files of `data/fixtures/not-recognised/` that no reader reads, with words each finding must carry: the
/// reader it came nearest to and what that reader looks for, written from the files and the readers' rules.
const EXPECTED: [(&str, &[&str]); 4] = [
    (
        "chats/conversations.jsonl",
        &[
            "the nearest, vllm-bench, finds a JSON object without the keys of a vLLM result",
            "`model_id` and `num_prompts`",
        ],
    ),
    (
        "exports/host_metrics.csv",
        &[
            "the nearest, table, finds a table whose CSV header (`timestamp`, `host`, `cpu_percent`, `mem_mb`, \
             `gpu_util`) has none of the canonical columns",
            "no `[[table]]` entry of cellscope.toml names it",
        ],
    ),
    (
        "notes/summary.json",
        &[
            "it is a vLLM sweep's summary, its runs again, but no vllm-bench run was found at `notes`",
        ],
    ),
    (
        "unknown-tool/report.json",
        &["the nearest, vllm-bench, finds a JSON object without the keys of a vLLM result"],
    ),
];

#[test]
fn each_file_no_reader_recognises_is_listed_with_the_nearest_readers_reason() {
    let index = build(
        &fixtures().join("not-recognised"),
        &IndexOptions::default(),
        &Quiet,
    )
    .expect("fixture indexes");
    let flagged = not_recognised(&index);
    let files: Vec<&str> = flagged
        .iter()
        .filter_map(|warning| warning.file.as_deref())
        .collect();
    assert_eq!(
        files,
        EXPECTED.iter().map(|(file, _)| *file).collect::<Vec<_>>(),
        "{flagged:#?}"
    );
    for (warning, (file, words)) in flagged.iter().zip(EXPECTED) {
        assert_eq!(warning.severity, Severity::Info, "{file}");
        assert_eq!(warning.run, None, "{file}");
        for word in words {
            assert!(
                warning.message.contains(word),
                "{file}: {}",
                warning.message
            );
        }
        assert!(
            warning
                .message
                .contains("`cellscope index DIR --explain FILE`"),
            "{}",
            warning.message
        );
    }
    // The vLLM result beside them is read, and its sweep summary is its side file, not a finding.
    assert_eq!(index.cells.len(), 1);
    assert_eq!(index.warnings.len(), flagged.len(), "{:#?}", index.warnings);
}

#[test]
fn cellscope_index_names_the_files_and_explain_gives_every_readers_reason() {
    let root = fixtures().join("not-recognised");
    let output = cellscope_command()
        .args(["index", &root.to_string_lossy(), "--no-cache"])
        .output()
        .expect("cellscope runs");
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = stdout.lines().skip(1).collect();
    assert_eq!(lines.len(), EXPECTED.len(), "{stdout}");
    for (line, (file, _)) in lines.iter().zip(EXPECTED) {
        assert!(
            line.starts_with(&format!("info[not_recognised] {file}: ")),
            "{line}"
        );
    }

    let output = cellscope_command()
        .args(["index", &root.to_string_lossy(), "--explain"])
        .arg(root.join("exports/host_metrics.csv"))
        .output()
        .expect("cellscope runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("exports/host_metrics.csv is not read: no reader recognises it"),
        "{stderr}"
    );
    for format in cellscope_index::formats::all() {
        assert!(
            stderr.contains(&format!("\n  {:<13} declines (", format.name())),
            "{}: {stderr}",
            format.name()
        );
    }
    assert!(
        stderr.contains("  table         declines (none of its marks): a table whose CSV header"),
        "{stderr}"
    );
    assert!(stderr.ends_with("  nearest: table\n"), "{stderr}");
}
