//! Files no reader recognises are named, never passed over in silence, and nothing else is: every committed
//! fixture root, the demo and the mixed-format root give no `not_recognised` finding (their side files, traces,
//! summaries and companions all belong to a run that was found), while `data/fixtures/not-recognised/` lists each
//! of its unknown files with the reason of the reader it came nearest to. What `cellscope index` prints of them is
//! tested with the binary, in the server's suite.

use crate::common::{NOT_RECOGNISED_FILES as EXPECTED, demo_index, demo_root, fixtures};
use cellscope_index::{Index, IndexOptions, Quiet, build};
use cellscope_model::api::{NOT_RECOGNISED, Severity, Warning};
use std::path::{Path, PathBuf};

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
