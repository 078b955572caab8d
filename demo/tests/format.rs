//! File-format and determinism tests: CRLF CSVs, Python float text, App. B skip rows, request-row consistency,
//! byte-identical regeneration, the `--scale` copies, the atomic replacement of the output directory and the mixed
//! root that links the TR164 trees.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn generate(name: &str, options: &cellscope_demo::Options) -> PathBuf {
    let root =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cellscope-demo-format-{name}"));
    cellscope_demo::generate(&root, options).expect("generate");
    root
}

/// A scale-2 tree (the default set plus one day-shifted V3 copy), generated once.
fn scaled() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        generate(
            "a",
            &cellscope_demo::Options {
                seed: 164,
                scale: 2,
            },
        )
    })
}

fn files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                walk(&path, root, out);
            } else {
                let relative = path
                    .strip_prefix(root)
                    .expect("prefix")
                    .to_string_lossy()
                    .into_owned();
                out.insert(relative, std::fs::read(&path).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

#[test]
fn same_seed_gives_byte_identical_trees() {
    let first = files(scaled());
    let second_root = generate(
        "b",
        &cellscope_demo::Options {
            seed: 164,
            scale: 2,
        },
    );
    let second = files(&second_root);
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        second.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &first {
        assert!(
            bytes == &second[name],
            "{name} differs between two generations"
        );
    }
    std::fs::remove_dir_all(second_root).ok();
}

#[test]
fn every_csv_uses_crlf_and_python_float_text() {
    for (name, bytes) in files(scaled())
        .iter()
        .filter(|(name, _)| name.ends_with(".csv"))
    {
        let text = std::str::from_utf8(bytes).expect("utf-8");
        assert!(text.ends_with("\r\n"), "{name}");
        assert_eq!(
            text.matches('\n').count(),
            text.matches("\r\n").count(),
            "{name}: bare LF"
        );
        let mut reader = csv::Reader::from_reader(bytes.as_slice());
        let headers = reader.headers().expect("header").clone();
        for record in reader.records().take(5_000) {
            let record = record.expect("record");
            for (column, field) in headers.iter().zip(record.iter()) {
                // Python's repr is the shortest text that round-trips: re-printing a float must give the same text.
                if field.contains(['.', 'e'])
                    && let Ok(value) = field.parse::<f64>()
                {
                    assert_eq!(cellscope_demo::py_float(value), field, "{name}: {column}");
                }
            }
        }
    }
    assert_eq!(cellscope_demo::py_float(12.0), "12.0");
    assert_eq!(cellscope_demo::py_float(1e-5), "1e-05");
}

#[test]
fn skip_rows_are_exactly_appendix_b() {
    let metrics = &files(scaled())["tr164-v1/20260531_120428_552237/metrics.csv"];
    let text = std::str::from_utf8(metrics).expect("utf-8");
    let skip: Vec<&str> = text
        .split_terminator("\r\n")
        .filter(|line| line.ends_with(",0,0,0,0,0,0,0,,,0,,,0,0,ok"))
        .collect();
    assert_eq!(skip.len(), 14);
    assert!(skip.iter().all(
        |line| line.starts_with("20260531_120428_552237,local_core,")
            && line.contains(",llama3.2-3b,unsloth/Llama-3.2-3B-Instruct,small_plus,3.21,FP16,")
            && line.contains(",16,")
    ));
}

#[test]
fn request_rows_are_internally_consistent() {
    for run in [
        "tr164-v1/20260531_120428_552237",
        "tr164-v3/20260612_212816_266127",
        "tr164-v3-copy-002/20260613_204254_036590",
    ] {
        let mut reader =
            csv::Reader::from_path(scaled().join(run).join("metrics.csv")).expect("open");
        let headers = reader.headers().expect("header").clone();
        let index = |name: &str| headers.iter().position(|h| h == name).expect(name);
        let (wall, submit, complete, agent, id, status) = (
            index("wall_ms"),
            index("submit_time_s"),
            index("complete_time_s"),
            index("agent_id"),
            index("request_id"),
            index("status"),
        );
        let key_columns: Vec<usize> = ["phase", "model", "workload", "n_agents", "rep"]
            .iter()
            .map(|c| index(c))
            .collect();
        let mut ids: HashSet<(Vec<String>, u32)> = HashSet::new();
        for record in reader.records() {
            let record = record.expect("record");
            let number = |i: usize| record[i].parse::<f64>().expect("number");
            if number(wall) == 0.0 && number(agent) == 0.0 {
                continue;
            }
            let span = number(complete) - number(submit);
            assert!(
                (span - number(wall) / 1000.0).abs() < 2e-6,
                "{run}: complete - submit != wall_ms / 1000"
            );
            assert!(
                number(agent) >= 1.0 && number(id) >= 1.0,
                "{run}: ids are 1-based"
            );
            assert!(number(submit) > 1.78e9, "{run}: epoch seconds");
            let key: Vec<String> = key_columns.iter().map(|i| record[*i].to_string()).collect();
            assert!(
                ids.insert((key, number(id) as u32)),
                "{run}: duplicate request_id in a cell"
            );
            assert!(matches!(&record[status], "ok" | "http_400"));
        }
    }
}

#[test]
fn scale_copies_shift_run_ids_by_whole_days() {
    let tree = files(scaled());
    let dirs: HashSet<String> = tree
        .keys()
        .filter_map(|name| {
            let mut parts = name.split('/');
            Some(format!("{}/{}", parts.next()?, parts.next()?))
        })
        .collect();
    for expected in [
        "tr164-v3-copy-002/20260613_204254_036590",
        "tr164-v3-copy-002/20260613_212816_266127",
        "tr164-v3-copy-002/20260613_212816_266127_BACKUP_preRefill",
        "tr164-v3-copy-002/20260614_055519_963364",
    ] {
        assert!(dirs.contains(expected), "{expected}");
    }
    let run_ids: Vec<&str> = dirs
        .iter()
        .filter_map(|d| d.split('/').nth(1))
        .filter(|id| !id.contains("BACKUP") && id.len() == 22)
        .collect();
    assert_eq!(
        run_ids.len(),
        run_ids.iter().collect::<HashSet<_>>().len(),
        "run ids collide"
    );
    let note =
        std::str::from_utf8(&tree["tr164-v3-copy-002/20260613_212816_266127/REFILL_NOTE.md"])
            .expect("utf-8");
    assert!(note.contains("20260614_055519_963364"));
    // The copy's master carries its own refill run id in the spliced rows, and different random draws.
    let copy = std::str::from_utf8(&tree["tr164-v3-copy-002/20260613_212816_266127/metrics.csv"])
        .expect("utf-8");
    assert!(
        copy.contains(",20260614_055519_963364,") || copy.contains("\r\n20260614_055519_963364,")
    );
    assert_ne!(
        tree["tr164-v3/20260612_204254_036590/cell_summary.csv"],
        tree["tr164-v3-copy-002/20260613_204254_036590/cell_summary.csv"]
    );
}

#[test]
fn the_output_directory_is_replaced_whole() {
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cellscope-demo-format-replace");
    std::fs::create_dir_all(root.join("stale")).expect("mkdir");
    std::fs::write(root.join("stale/file.txt"), b"old").expect("write");
    let summary =
        cellscope_demo::generate(&root, &cellscope_demo::Options::default()).expect("generate");
    assert!(!root.join("stale").exists(), "old contents must be gone");
    assert_eq!(
        summary.runs, 4,
        "V1 + vLLM + SGLang master + refill (the backup is not a run)"
    );
    assert_eq!(summary.metrics_rows, 23_930 + 94_500 * 3 + 3_780);
    let exclusions = std::fs::read_to_string(root.join("exclusions.toml")).expect("exclusions");
    assert!(
        exclusions.contains("select = { model = \"mistral-7b\", workload = \"long_prefill_8k\" }")
    );
    assert!(exclusions.contains("scope = \"comparison\""));
    let siblings: Vec<_> = std::fs::read_dir(root.parent().expect("parent"))
        .expect("read_dir")
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .contains("cellscope-demo-format-replace.partial-")
        })
        .collect();
    assert!(siblings.is_empty(), "no staging directory is left behind");
    assert!(
        cellscope_demo::generate(&root, &cellscope_demo::Options { seed: 1, scale: 0 }).is_err()
    );
    std::fs::remove_dir_all(root).ok();
}

#[test]
fn the_mixed_root_links_the_tr164_trees_and_adds_the_external_sweep() {
    let demo = scaled();
    let mixed = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cellscope-demo-format-mixed");
    let options = cellscope_demo::Options {
        seed: 164,
        scale: 2,
    };
    let summary = cellscope_demo::generate_mixed(demo, &mixed, &options).expect("generate_mixed");
    // The V3-shaped sweep, then the vLLM rate sweep (18 runs, 30 files), the InferenceX runs (10 files), the llm-d
    // experiment (3 stage reports), the inference-perf run (4 stages, its summary and its config.yaml), the
    // InferenceX aggregate (6 rows, no request counts), the GenAI-Perf CSV exports (2, no request counts), the
    // MLPerf results tree (5 summaries, 3 detail logs) and the console logs (5 result blocks in 2 files).
    assert_eq!(
        summary.external_cells,
        180 + 18 + 10 + 3 + 4 + 6 + 2 + 5 + 5
    );
    assert_eq!(
        summary.external_requests,
        4464 + 4230 + 2480 + 850 + 780 + 119_018 + 1216
    );
    assert_eq!(
        summary.external_files,
        225 + 30 + 10 + 3 + 6 + 1 + 2 + 8 + 2
    );
    let demo_files = files(demo);
    let mixed_files = files(&mixed);
    let shared: Vec<&String> = demo_files
        .keys()
        .filter(|path| {
            path.as_str() == "exclusions.toml"
                || path.starts_with("tr164-v1/")
                || path.starts_with("tr164-v3/")
        })
        .collect();
    assert_eq!(summary.linked_files + summary.copied_files, shared.len());
    for path in &shared {
        assert_eq!(mixed_files.get(*path), demo_files.get(*path), "{path}");
    }
    assert!(
        !mixed_files
            .keys()
            .any(|path| path.starts_with("tr164-v3-copy-")),
        "only the default V3 tree is shared"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let inode = |root: &Path| {
            std::fs::metadata(root.join("tr164-v3/20260612_204254_036590/metrics.csv"))
                .expect("metadata")
                .ino()
        };
        if summary.copied_files == 0 {
            assert_eq!(inode(demo), inode(&mixed), "hard-linked, not copied");
        }
    }
    let mapping = String::from_utf8(mixed_files["cellscope.toml"].clone()).expect("utf-8");
    for glob in [
        "glob = \"external/vllm-sweep/**\"",
        "glob = \"external/sglang/**\"",
        "glob = \"external/aiperf-sweep/**\"",
    ] {
        assert!(mapping.contains(glob), "{glob}");
    }
    let external = mixed_files
        .keys()
        .filter(|path| path.starts_with("external/"))
        .count();
    assert_eq!(external + 1, summary.external_files);
    assert!(
        cellscope_demo::generate_mixed(&mixed.join("absent"), &mixed, &options).is_err(),
        "a demo root is required"
    );
    assert!(
        mixed.join("cellscope.toml").is_file(),
        "a failed run keeps the old root"
    );
    std::fs::remove_dir_all(mixed).ok();
}
