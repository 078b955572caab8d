//! The offline audit bundle (`cellscope bundle`, `GET /api/bundle`): what the file holds for a view, checked
//! against the index it was made from, and the command's output and refusals. The browser opening it from disk
//! is `tests/tests/offline.rs`.
//!
//! A bundle inlines the app, so these tests need the app embedded in the binary (`cargo xtask build-web` before
//! the build; `cargo xtask ci` and `cargo xtask e2e` do that): without it they fail saying so.

use crate::common;

use base64::Engine as _;
use cellscope::http::snapshot::Snapshot;
use cellscope_index::{IndexOptions, Quiet, read_rows, storage::LocalDisk};
use cellscope_model::requests::{requests_from_ipc, requests_query};

/// The JSON the page carries in its data element.
fn page_data(html: &str) -> serde_json::Value {
    let start_tag = r#"<script type="application/json" id="cellscope-offline">"#;
    let start = html.find(start_tag).expect("the page has its data element") + start_tag.len();
    let end = start
        + html[start..]
            .find("</script>")
            .expect("the data element ends");
    serde_json::from_str(&html[start..end]).expect("the data element holds JSON")
}

fn body(data: &serde_json::Value, path: &str) -> Vec<u8> {
    let text = data["bodies"][path]
        .as_str()
        .unwrap_or_else(|| panic!("no body for {path}"));
    let gzipped = base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap();
    let mut plain = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gzipped[..]), &mut plain)
        .unwrap();
    plain
}

#[test]
fn a_bundle_holds_the_snapshots_bodies_and_the_rows_of_every_cell_in_its_view() {
    let root = common::demo_root();
    let index = cellscope_index::build(root, &IndexOptions::default(), &Quiet).unwrap();
    let snapshot = Snapshot::new(index, true).unwrap();
    let bundle = cellscope::bundle::build(
        &snapshot,
        "?view=curves&model=qwen2.5-7b&at=0123456789abcdef",
        1_764_000_000_000,
    )
    .unwrap_or_else(|error| panic!("{error} (run `cargo xtask build-web` first)"));
    let data = page_data(&bundle.html);

    // The view without its pin (the copy is of this snapshot), and the snapshot it is of.
    assert_eq!(data["meta"]["view"], "view=curves&model=qwen2.5-7b");
    assert_eq!(data["meta"]["snapshot"], snapshot.id.as_str());
    assert_eq!(data["meta"]["made_at_unix_ms"], 1_764_000_000_000u64);

    // The cells in view are those of the model, counted here from the table itself.
    let in_view: Vec<_> = snapshot
        .index
        .cells
        .iter()
        .filter(|cell| cell.key.model == "qwen2.5-7b")
        .collect();
    assert_eq!(in_view.len(), 360);
    assert_eq!(bundle.cells_in_view, in_view.len());
    assert_eq!(bundle.cells_with_rows, in_view.len());
    assert_eq!(data["meta"]["cells_with_rows"], in_view.len());
    let request_bodies = data["bodies"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|path| path.starts_with("/api/requests?"))
        .count();
    assert_eq!(request_bodies, in_view.len());

    // The snapshot's own bodies, byte for byte.
    assert_eq!(body(&data, "/api/cells"), snapshot.cells_arrow.to_vec());
    assert_eq!(body(&data, "/api/index"), snapshot.index_json.to_vec());
    assert_eq!(
        body(&data, "/api/provenance"),
        snapshot.provenance_json.to_vec()
    );

    // Each cell's rows are what reading its file gives (three cells spread over the view).
    let disk = LocalDisk::new(root);
    for cell in [in_view[0], in_view[180], in_view[359]] {
        let expected = read_rows(&disk, &snapshot.index.rows[&cell.key]).unwrap();
        let held = requests_from_ipc(&body(
            &data,
            &format!("/api/requests?{}", requests_query(&cell.key)),
        ))
        .unwrap();
        assert!(!held.is_empty(), "{}", cell.key);
        assert_eq!(held, expected, "{}", cell.key);
    }

    // The app and its WebAssembly are inlined: nothing is loaded from anywhere.
    assert!(
        bundle
            .html
            .contains(r#"<script type="application/octet-stream" id="cellscope-wasm">"#)
    );
    assert!(
        !bundle.html.contains(" src=\""),
        "no script or image loads a file"
    );
    assert!(!bundle.html.contains("<link rel=\"stylesheet\""));
}

#[test]
fn the_bundle_command_writes_the_file_and_reports_it_but_never_into_the_data_root() {
    let root = common::demo_root();
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("audit.html");
    let output = common::cellscope_command()
        .args(["bundle"])
        .arg(root)
        .args([
            "--view",
            "view=audit&backend=sglang&workload=long_prefill_8k",
            "-o",
        ])
        .arg(&file)
        .arg("--no-cache")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let bytes = std::fs::metadata(&file).unwrap().len();
    assert!(
        stdout.contains(&format!("{:.1} MB", bytes as f64 / 1e6)),
        "the size written is reported: {stdout}"
    );
    // The cells of sglang × long_prefill_8k, as the index counts them.
    let expected = common::demo_index()
        .cells
        .iter()
        .filter(|cell| cell.key.backend == "sglang" && cell.key.workload == "long_prefill_8k")
        .count();
    assert!(
        stdout.contains(&format!(
            "{expected} cells in view, request rows of {expected}"
        )),
        "{stdout}"
    );

    let inside = root.join("audit.html");
    let output = common::cellscope_command()
        .args(["bundle"])
        .arg(root)
        .arg("-o")
        .arg(&inside)
        .arg("--no-cache")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("inside the data root"), "{stderr}");
    assert!(!inside.exists(), "nothing is written under the data root");
}
