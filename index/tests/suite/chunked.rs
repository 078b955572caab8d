//! A large metrics.csv parsed in chunks on every core gives exactly what one pass gives: the demo's V3 master
//! files (25 MB each, so several chunks) with the default chunk size against one chunk for the whole file.

use crate::common;

#[test]
fn the_v3_masters_parsed_in_chunks_equal_one_pass() {
    let root = common::demo_root().join("tr164-v3");
    let mut compared = 0;
    for run in ["20260612_204254_036590", "20260612_212816_266127"] {
        let bytes = std::fs::read(root.join(run).join("metrics.csv")).unwrap();
        assert!(bytes.len() > 16 << 20, "{run} is too small to be split");
        let cells = cellscope_index::fuzzing::metrics_csv_in_chunks(&bytes);
        assert!(cells >= 900, "{run}: {cells} cells");
        compared += cells;
    }
    assert!(compared >= 1800);
}
