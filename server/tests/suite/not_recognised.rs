//! What `cellscope index` prints of the files no reader recognises, and what `--explain` says of one: every
//! reader's reason. The findings themselves are tested in the index's own suite (`index/tests/suite/not_recognised.rs`).

use crate::common::cellscope_command;
use crate::shared::{NOT_RECOGNISED_FILES as EXPECTED, fixtures};

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
    for name in cellscope_index::format_names() {
        assert!(
            stderr.contains(&format!("\n  {name:<13} declines (")),
            "{name}: {stderr}"
        );
    }
    assert!(
        stderr.contains("  table         declines (none of its marks): a table whose CSV header"),
        "{stderr}"
    );
    assert!(stderr.ends_with("  nearest: table\n"), "{stderr}");
}
