//! A large metrics.csv parsed in chunks on every core gives exactly what one pass gives: the demo's V3 master
//! files (25 MB each, so several chunks) with the default chunk size against one chunk for the whole file.

use crate::common;

use cellscope_index::formats::tr164::metrics_csv::{self, Reading};

#[test]
fn the_v3_masters_parsed_in_chunks_equal_one_pass() {
    let root = common::demo_root().join("tr164-v3");
    let mut compared = 0;
    for run in ["20260612_204254_036590", "20260612_212816_266127"] {
        let bytes = std::fs::read(root.join(run).join("metrics.csv")).unwrap();
        assert!(bytes.len() > 16 << 20, "{run} is too small to be split");
        let (mut chunked_warnings, mut whole_warnings) = (Vec::new(), Vec::new());
        let chunked = metrics_csv::parse(&bytes, &mut chunked_warnings).unwrap();
        let whole = metrics_csv::parse_as(
            &bytes,
            &mut whole_warnings,
            Reading {
                chunk_bytes: usize::MAX,
                ..Reading::default()
            },
        )
        .unwrap();
        assert_eq!(chunked.cells.len(), whole.cells.len());
        assert!(
            chunked.cells.len() >= 900,
            "{run}: {} cells",
            chunked.cells.len()
        );
        // Every field of every cell, the statistics bit for bit (Debug prints floats exactly).
        assert_eq!(format!("{chunked:?}"), format!("{whole:?}"), "{run}");
        assert_eq!(chunked_warnings, whole_warnings, "{run}");
        compared += chunked.cells.len();
    }
    assert!(compared >= 1800);
}
