//! Reading a cell's rows back from its own stretch of metrics.csv gives the rows on the lines it names, whether
//! the index counted the line of the cell's first row or the reader counts the lines before it, with a UTF-8
//! BOM, CRLF endings, blank lines, quoted fields and gzip- or zstd-compressed files.

use cellscope_index::storage::LocalDisk;
use cellscope_index::{self as index, CellRows, IndexOptions, Quiet};
use std::io::Read as _;
use std::path::Path;

/// A metrics file's bytes as it is stored, decompressed by its extension (gzip or zstd).
fn metrics_bytes(path: &Path) -> Vec<u8> {
    let stored = std::fs::read(path).unwrap();
    match path.extension().and_then(|extension| extension.to_str()) {
        Some("gz") => {
            let mut text = Vec::new();
            flate2::read::GzDecoder::new(&stored[..])
                .read_to_end(&mut text)
                .unwrap();
            text
        }
        Some("zst") => zstd::decode_all(&stored[..]).unwrap(),
        _ => stored,
    }
}

/// Every cell of `root` read both ways; returns how many cells had rows.
fn both_ways_agree(root: &Path) -> usize {
    let index = index::build(root, &IndexOptions::CELLS, &Quiet).expect("index");
    let disk = LocalDisk::new(root);
    let mut compared = 0;
    for (key, cell) in &index.rows {
        if cell.external.is_some() || cell.offsets.is_empty() {
            continue;
        }
        assert!(
            cell.first_line.is_some(),
            "{key}: the index counted no line"
        );
        let whole_file = CellRows {
            first_line: None,
            ..cell.clone()
        };
        let stretch = index::read_rows(&disk, cell).expect("rows, the line counted by the index");
        let expected =
            index::read_rows(&disk, &whole_file).expect("rows, the lines counted by the reader");
        assert_eq!(stretch, expected, "{key}");
        // Each row is the one on its line of the file: same request id and wall time.
        // As the index read it: decompressed when the file is stored compressed.
        let text = metrics_bytes(&root.join(&cell.file));
        let text = String::from_utf8_lossy(text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&text));
        let lines: Vec<&str> = text.split('\n').collect();
        let header: Vec<&str> = lines[0].trim_end_matches('\r').split(',').collect();
        let column = |name: &str| header.iter().position(|field| *field == name).unwrap();
        for row in &stretch {
            let fields: Vec<&str> = lines[row.line as usize - 1]
                .trim_end_matches('\r')
                .split(',')
                .collect();
            let request_id: u32 = fields[column("request_id")].parse().unwrap();
            assert_eq!(Some(request_id), row.request_id, "{key} line {}", row.line);
            let wall_ms: Option<f64> = fields[column("wall_ms")].parse().ok();
            assert_eq!(wall_ms, row.wall_ms, "{key} line {}", row.line);
        }
        compared += 1;
    }
    compared
}

#[test]
fn fixture_rows_are_the_ones_on_their_lines_either_way() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures");
    let mut compared = 0;
    for entry in std::fs::read_dir(&fixtures).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() && path.file_name().is_some_and(|name| name != "formats") {
            compared += both_ways_agree(&path);
        }
    }
    assert!(compared > 20, "only {compared} cells compared");
}

#[test]
fn bom_crlf_blank_lines_and_quotes_give_the_rows_on_their_lines() {
    let good = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../data/fixtures/good/20260101_000000_000001/metrics.csv");
    let text = std::fs::read_to_string(good).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // A blank line after every tenth row, CRLF endings and a BOM; the second variant also quotes every status.
    let mut crlf = String::from("\u{feff}");
    for (number, line) in lines.iter().enumerate() {
        crlf.push_str(line);
        crlf.push_str("\r\n");
        if number % 10 == 9 {
            crlf.push_str("\r\n");
        }
    }
    let quoted = crlf.replace(",ok\r\n", ",\"ok\"\r\n");
    assert_ne!(crlf, quoted);
    for (name, text) in [("crlf", crlf), ("quoted", quoted)] {
        let root = tempfile::tempdir().unwrap();
        let run = root.path().join("20260101_000000_000001");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join("metrics.csv"), &text).unwrap();
        let compared = both_ways_agree(root.path());
        assert!(compared >= 4, "{name}: only {compared} cells compared");
        // And the lines are the file's own: the first data row is on line 2.
        let index = index::build(root.path(), &IndexOptions::CELLS, &Quiet).unwrap();
        let first_rows: Vec<u64> = index
            .rows
            .values()
            .filter_map(|cell| cell.first_line)
            .collect();
        assert!(first_rows.contains(&2), "{name}: {first_rows:?}");
    }
}
