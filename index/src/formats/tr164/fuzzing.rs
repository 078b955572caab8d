//! The bodies of the fuzz targets of TR164's own parsers, `metrics.csv` and the run files, each given arbitrary bytes
//! and panicking when its property fails; `crate::fuzzing` lists them among the index's targets.

use super::metrics_csv::{self, Reading};
use crate::run::parsed::ParsedMetrics;
use cellscope_model::api::Warning;

/// The metrics.csv reader never panics, and where the plain split applies (no quote, no carriage return other
/// than before a line feed) it gives the same cells, counts and warnings as the csv crate's reader; read in
/// chunks, in pieces, or with the portable row code, the same as in one pass.
pub fn metrics_csv(data: &[u8]) {
    let mut warnings = Vec::new();
    let plain = metrics_csv::parse(data, &mut warnings);
    let bare_cr = data
        .iter()
        .enumerate()
        .any(|(at, byte)| *byte == b'\r' && data.get(at + 1) != Some(&b'\n'));
    if data.contains(&b'"') || bare_cr {
        return;
    }
    // The same file in chunks of a few bytes (the size drawn from the input) gives exactly one pass's result.
    let mut chunked_warnings = Vec::new();
    let chunked = metrics_csv::parse_as(
        data,
        &mut chunked_warnings,
        Reading {
            chunk_bytes: 1 + data.len() % 61,
            ..Reading::default()
        },
    );
    assert_eq!(
        format!("{plain:?}"),
        format!("{chunked:?}"),
        "chunked parse differs"
    );
    assert_eq!(
        warnings, chunked_warnings,
        "chunked parse warns differently"
    );
    // Read in pieces of a few bytes, in chunks of a few more (the sizes drawn from the input), the file gives one
    // pass's result, where that reading takes it.
    let mut piece_warnings = Vec::new();
    if let Some(pieces) = metrics_csv::parse_source_in(
        &data,
        data.len() as u64,
        &mut piece_warnings,
        1 + data.len() % 53,
        1 + data.len() % 17,
    ) {
        assert_eq!(
            format!("{plain:?}"),
            format!("{pieces:?}"),
            "the reading in pieces differs"
        );
        assert_eq!(
            warnings, piece_warnings,
            "the reading in pieces warns differently"
        );
    }
    // The row code compiled for every processor gives what the one with bit instructions gives.
    let mut portable_warnings = Vec::new();
    let portable = metrics_csv::parse_as(
        data,
        &mut portable_warnings,
        Reading {
            portable: true,
            ..Reading::default()
        },
    );
    assert_eq!(
        format!("{plain:?}"),
        format!("{portable:?}"),
        "the portable row code differs"
    );
    assert_eq!(
        warnings, portable_warnings,
        "the portable row code warns differently"
    );
    let mut general_warnings = Vec::new();
    let general = metrics_csv::parse_as(
        data,
        &mut general_warnings,
        Reading {
            general: true,
            ..Reading::default()
        },
    );
    match (&plain, &general) {
        (Ok(plain), Ok(general)) => assert_same_cells(plain, general),
        (Err(plain), Err(general)) => assert_eq!(plain, general),
        _ => panic!("one reader rejected the file and the other did not: {plain:?} / {general:?}"),
    }
    assert_eq!(
        warning_places(&warnings),
        warning_places(&general_warnings),
        "the two readers warn differently"
    );
}

/// What a warning is about and where, without its wording (a field count past the cap is worded differently).
fn warning_places(warnings: &[Warning]) -> Vec<(String, Option<u64>)> {
    warnings
        .iter()
        .map(|warning| (warning.kind.clone(), warning.line))
        .collect()
}

fn assert_same_cells(plain: &ParsedMetrics, general: &ParsedMetrics) {
    assert_eq!(
        (plain.records, plain.malformed_rows, &plain.header),
        (general.records, general.malformed_rows, &general.header)
    );
    assert_eq!(plain.cells.len(), general.cells.len());
    for ((plain_key, plain_cell), (general_key, general_cell)) in
        plain.cells.iter().zip(&general.cells)
    {
        assert_eq!(plain_key, general_key);
        assert_eq!(
            (
                plain_cell.rows,
                plain_cell.ok_rows,
                plain_cell.failed_rows,
                plain_cell.skip_rows,
                &plain_cell.failed_by_status,
                &plain_cell.row_offsets,
                plain_cell.first_row_line,
                plain_cell.first_line,
            ),
            (
                general_cell.rows,
                general_cell.ok_rows,
                general_cell.failed_rows,
                general_cell.skip_rows,
                &general_cell.failed_by_status,
                &general_cell.row_offsets,
                general_cell.first_row_line,
                general_cell.first_line,
            ),
            "cell {plain_key:?}"
        );
        // Bit for bit: both readers hand the same numbers to the same accumulator.
        assert_eq!(
            format!("{:?}", plain_cell.stats),
            format!("{:?}", general_cell.stats),
            "cell {plain_key:?}"
        );
    }
}

/// `manifest.json` and `execution_plan.json` are read or refused with a line, never a panic.
pub fn run_files(data: &[u8]) {
    use super::run_files::{parse_manifest, parse_plan};
    // A refusal says where: serde_json counts lines from 1 (0 only for an error it cannot place, such as
    // trailing data reported past the end), and always says what.
    for problem in [parse_manifest(data).err(), parse_plan(data).err()]
        .into_iter()
        .flatten()
    {
        assert!(!problem.message.is_empty(), "{problem:?}");
    }
}

/// A metrics.csv parsed as the index parses it (in chunks on every core, when it is large enough to split) gives
/// exactly what one pass over the whole file gives: every field of every cell, the statistics bit for bit (Debug
/// prints floats exactly), and every warning. Returns how many cells it has.
pub fn metrics_csv_in_chunks(data: &[u8]) -> usize {
    let (mut chunked_warnings, mut whole_warnings) = (Vec::new(), Vec::new());
    let chunked = metrics_csv::parse(data, &mut chunked_warnings);
    let whole = metrics_csv::parse_as(
        data,
        &mut whole_warnings,
        Reading {
            chunk_bytes: usize::MAX,
            ..Reading::default()
        },
    );
    assert_eq!(format!("{chunked:?}"), format!("{whole:?}"));
    assert_eq!(chunked_warnings, whole_warnings);
    chunked.map_or(0, |parsed| parsed.cells.len())
}
