//! Fixtures the binary reads as a user without permission to read some of their files: the unreadable ones are
//! named, the rest is read, and a cached run made unreadable is not called stale. The fixtures' cells and warnings
//! through the library are tested in the index's own suite (`index/tests/suite/fixtures.rs`).

use crate::shared::{copy_tree, fixtures};
use std::path::{Path, PathBuf};

/// Every file under `dir`, in no particular order.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path))
        } else {
            files.push(path)
        }
    }
    files
}

/// Files and directories the reading user may not open. A test running as root reads any file, so as root the
/// binary is run as the unprivileged user 65534 (`nobody`) through util-linux's `setpriv`; as any other user it
/// is run as that user. The binary is copied into the test's own directory so that `nobody` may run it wherever
/// the checkout lies.
#[test]
fn files_and_directories_without_read_permission_are_named_and_the_rest_is_read() {
    let work = tempfile::tempdir().unwrap();
    set_mode(work.path(), 0o755);
    let reader = Reader::copied_into(work.path());
    let (alone, root) = (
        good_root(work.path(), "alone"),
        good_root(work.path(), "locked"),
    );
    let run = lock_beside_good(&root);
    for tree in [&alone, &root] {
        for entry in walk(&tree.join("good")) {
            set_mode(&entry, 0o644);
        }
        for directory in [
            tree.clone(),
            tree.join("good"),
            tree.join("good/20260101_000000_000001"),
        ] {
            set_mode(&directory, 0o755);
        }
    }

    let audit: serde_json::Value = serde_json::from_slice(
        &reader
            .run(&["audit", root.to_str().unwrap(), "--json", "--no-cache"])
            .stdout,
    )
    .unwrap();
    let expected = [
        ("unreadable_directory", "shut"),
        ("unreadable_file", "exclusions.toml"),
        (
            "unreadable_file",
            "locked/20260401_000000_000001/metrics.csv",
        ),
        (
            "unreadable_file",
            "side/20260402_000000_000002/manifest.json",
        ),
    ];
    assert_eq!(
        named_warnings(&audit),
        expected.map(|(kind, file)| (kind.to_string(), file.to_string())),
        "each unreadable thing is named once, and nothing else is said (an unread metrics.csv is not also \
         called empty): {audit:#}"
    );
    // The good run's rows, and the readable run beside the unreadable manifest, give the same numbers as the
    // good run alone.
    let cache = work.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    set_mode(&cache, 0o777);
    let good_alone = reader.cells(&alone, &cache);
    let with_locked = reader.cells(&root, &cache);
    let baseline = of_run(&good_alone, "20260101_000000_000001");
    assert!(!baseline.is_empty());
    assert_eq!(of_run(&with_locked, "20260101_000000_000001"), baseline);
    assert_eq!(of_run(&with_locked, "20260402_000000_000002"), baseline);
    assert!(of_run(&with_locked, "20260401_000000_000001").is_empty());
    assert!(of_run(&with_locked, "20260403_000000_000003").is_empty());
    // Made readable (which changes no size or modification time), every run is read: a read that failed was not
    // kept in the cache to be trusted later.
    set_mode(&root.join("shut"), 0o755);
    set_mode(&run.join("metrics.csv"), 0o644);
    let readable = reader.cells(&root, &cache);
    for run in ["20260401_000000_000001", "20260403_000000_000003"] {
        assert_eq!(of_run(&readable, run), baseline, "{run}");
    }
}

/// A run read into the cache and then made unreadable (which changes no size or modification time): the next full
/// index names the file `unreadable_file` and says nothing of the cache, whose entry it neither calls stale nor
/// replaces; once readable again, the entry is used. Run as `nobody` when the test runs as root (see [`Reader`]).
#[test]
fn a_cached_run_made_unreadable_is_named_unreadable_and_its_entry_not_called_stale() {
    let work = tempfile::tempdir().unwrap();
    set_mode(work.path(), 0o755);
    let reader = Reader::copied_into(work.path());
    let root = good_root(work.path(), "root");
    for entry in walk(&root.join("good")) {
        set_mode(&entry, 0o644);
    }
    for directory in [
        root.clone(),
        root.join("good"),
        root.join("good/20260101_000000_000001"),
    ] {
        set_mode(&directory, 0o755);
    }
    let cache = work.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    set_mode(&cache, 0o777);
    let (root_arg, cache_arg) = (root.to_str().unwrap(), cache.to_str().unwrap());
    let index = || -> serde_json::Value {
        let output = reader.run(&["index", root_arg, "--json", "--cache", cache_arg]);
        serde_json::from_slice(&output.stdout).unwrap()
    };
    // (runs read from the cache, from the files, entries written, stale entries, rows, warnings)
    let summary = |index: &serde_json::Value| {
        [
            &index["cache"]["used"],
            &index["cache"]["read"],
            &index["cache"]["written"],
            &index["cache"]["stale"],
            &index["rows"],
            &index["warnings"],
        ]
        .map(|value| value.as_u64().unwrap())
    };
    assert_eq!(summary(&index()), [0, 1, 1, 0, 12, 0]);
    let metrics = root.join("good/20260101_000000_000001/metrics.csv");
    set_mode(&metrics, 0o000);
    let audit: serde_json::Value = serde_json::from_slice(
        &reader
            .run(&["audit", root_arg, "--json", "--cache", cache_arg])
            .stdout,
    )
    .unwrap();
    assert_eq!(
        named_warnings(&audit),
        [(
            "unreadable_file".to_string(),
            "good/20260101_000000_000001/metrics.csv".to_string()
        )],
        "{audit:#}"
    );
    assert_eq!(summary(&index()), [0, 1, 0, 0, 0, 1]);
    set_mode(&metrics, 0o644);
    assert_eq!(summary(&index()), [1, 0, 0, 0, 12, 0]);
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
}

/// A data root `work/name` holding the good fixture.
fn good_root(work: &Path, name: &str) -> PathBuf {
    let root = work.join(name);
    copy_tree(&fixtures().join("good"), &root.join("good"));
    root
}

/// Beside the good run in `root`: a metrics.csv, a manifest beside a readable metrics.csv, a whole directory of
/// runs, and the root's ledger, each unreadable. Returns the run whose metrics.csv is locked.
fn lock_beside_good(root: &Path) -> PathBuf {
    // Good's rows under another run id (the id is a column), so that no run is a copy of another.
    let good_metrics =
        std::fs::read_to_string(fixtures().join("good/20260101_000000_000001/metrics.csv"))
            .unwrap();
    // A run directory at `relative` (its last part the run id) holding good's rows under that id.
    let add_run = |relative: &str| -> PathBuf {
        let run = root.join(relative);
        std::fs::create_dir_all(&run).unwrap();
        let run_id = run.file_name().unwrap().to_str().unwrap();
        let metrics = good_metrics.replace("20260101_000000_000001", run_id);
        std::fs::write(run.join("metrics.csv"), metrics).unwrap();
        run
    };
    let run = add_run("locked/20260401_000000_000001");
    set_mode(&run.join("metrics.csv"), 0o000);
    let side = add_run("side/20260402_000000_000002");
    std::fs::write(side.join("manifest.json"), b"{}").unwrap();
    set_mode(&side.join("manifest.json"), 0o000);
    add_run("shut/20260403_000000_000003");
    set_mode(&root.join("shut"), 0o000);
    std::fs::write(root.join("exclusions.toml"), b"").unwrap();
    set_mode(&root.join("exclusions.toml"), 0o000);
    run
}

/// The copied binary, run as a user who cannot read the locked files.
struct Reader {
    binary: PathBuf,
    /// `HOME` of the runs (the test's directory, so that the default cache is writable).
    home: PathBuf,
}

impl Reader {
    /// The binary copied into `work` (the test's own directory, with `HOME` there).
    fn copied_into(work: &Path) -> Reader {
        let binary = work.join("cellscope");
        std::fs::copy(env!("CARGO_BIN_EXE_cellscope"), &binary).unwrap();
        set_mode(&binary, 0o755);
        Reader {
            binary,
            home: work.to_path_buf(),
        }
    }

    /// Runs the binary with `args`, asserting that it succeeds.
    fn run(&self, args: &[&str]) -> std::process::Output {
        // The effective user id, from /proc (libc is not a dependency of the tests).
        let root_user = std::fs::read_to_string("/proc/self/status")
            .unwrap()
            .lines()
            .find_map(|line| line.strip_prefix("Uid:"))
            .is_some_and(|ids| ids.split_whitespace().nth(1) == Some("0"));
        let mut command = if root_user {
            let mut command = std::process::Command::new("setpriv");
            command
                .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(&self.binary);
            command
        } else {
            std::process::Command::new(&self.binary)
        };
        let output = command
            .args(args)
            .env("HOME", &self.home)
            .output()
            .expect("cellscope runs (as root: through setpriv)");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    /// The lines of `cells ROOT --format csv` with the cache in `cache`.
    fn cells(&self, root: &Path, cache: &Path) -> Vec<String> {
        let args = ["cells", root.to_str().unwrap(), "--format", "csv"];
        let csv = self
            .run(&[&args[..], &["--cache", cache.to_str().unwrap()]].concat())
            .stdout;
        String::from_utf8(csv)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

/// The kind and file of every warning of an `audit --json` report (the root's and each run's), sorted.
fn named_warnings(audit: &serde_json::Value) -> Vec<(String, String)> {
    let mut named = crate::common::kinds_and_files(audit);
    named.sort();
    named
}

/// The cells of run `run` among the lines of a cells CSV, without the run id.
fn of_run(lines: &[String], run: &str) -> Vec<String> {
    lines
        .iter()
        .filter_map(|line| line.strip_prefix(&format!("{run},")).map(str::to_string))
        .collect()
}
