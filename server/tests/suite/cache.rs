//! The cache of read results (warm start): a warm index equals a cold one byte for byte, on the demo data, the
//! mixed-format root and every bad-input fixture; a changed file is read again (by its stamp, or by its content
//! when only the content changed); a damaged entry is ignored; entries carry no absolute path, so a copy of the
//! data elsewhere uses them; the data root is never written; a cache inside the data root is refused.

use crate::common;

use cellscope::export::{self, Format};
use cellscope::http::snapshot::{Snapshot, first_snapshot};
use cellscope_index::cache::{CacheReport, RunCache, Trust};
use cellscope_index::{self as index, Index, IndexOptions, Quiet};
use cellscope_model::api::IndexBody;
use common::{cellscope_command, demo_root};
use sha2::Digest as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

const CELLS_ONLY: IndexOptions = IndexOptions {
    hashes: false,
    backup_diff: false,
};
const FULL: IndexOptions = IndexOptions {
    hashes: true,
    backup_diff: true,
};

/// Every kind of index and the trust it gives the cache where the product uses it: the server's first snapshot
/// and `index --cells-only` (stamps), `cells`/`compare`, and full indexes (contents).
const KINDS: [(IndexOptions, Trust); 3] = [
    (CELLS_ONLY, Trust::Stamps),
    (IndexOptions::CELLS, Trust::Contents),
    (FULL, Trust::Contents),
];

fn cold(root: &Path, options: &IndexOptions) -> Index {
    index::build(root, options, &Quiet).unwrap()
}

fn warm(root: &Path, options: &IndexOptions, cache: &RunCache, trust: Trust) -> Index {
    index::build_cached(root, options, &Quiet, cache, trust).unwrap()
}

fn report(index: &Index) -> &CacheReport {
    index.cache.as_ref().expect("a cached index reports")
}

/// Everything an index shows, as bytes: the Arrow tables, the `/api/index` body without its two timing fields,
/// `/api/provenance`, the snapshot id and content hash (which cover the pre-refill cells and every cell's row
/// locations), the warnings and the row locators.
fn shown(index: Index, complete: bool) -> Vec<(&'static str, Vec<u8>)> {
    let tables = [
        (
            "cells",
            export::encode(&index.cells, Format::Arrow).unwrap(),
        ),
        (
            "refill_cells",
            export::encode(&index.refill_cells, Format::Arrow).unwrap(),
        ),
        (
            "pre_refill_cells",
            export::encode(&index.pre_refill_cells, Format::Arrow).unwrap(),
        ),
        ("warnings", serde_json::to_vec(&index.warnings).unwrap()),
        ("rows", format!("{:?}", index.rows).into_bytes()),
    ];
    let snapshot = Snapshot::new(index, complete).unwrap();
    let mut body: IndexBody = serde_json::from_slice(&snapshot.index_json).unwrap();
    body.indexed_at_unix_ms = 0;
    body.index_ms = 0.0;
    let mut shown = tables.to_vec();
    shown.extend([
        ("index_json", serde_json::to_vec(&body).unwrap()),
        ("provenance_json", snapshot.provenance_json.to_vec()),
        ("snapshot", snapshot.id.into_bytes()),
        ("content", snapshot.content.into_bytes()),
    ]);
    shown
}

fn assert_same(left: Index, right: Index, complete: bool, what: &str) {
    for ((name, left), (_, right)) in shown(left, complete)
        .into_iter()
        .zip(shown(right, complete))
    {
        assert!(
            left == right,
            "{what}: {name} differs between the cold and the warm index"
        );
    }
}

/// Runs and backups of an index: what a fully warm index takes from the cache.
fn reads(index: &Index) -> u32 {
    (index.runs.len()
        + index
            .runs
            .iter()
            .map(|run| run.backups.len())
            .sum::<usize>()) as u32
}

/// Warms a cache on `root` with a full index, then checks every kind of warm index against its cold index.
fn assert_warm_equals_cold(root: &Path, what: &str) {
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = RunCache::in_directory(cache_dir.path().to_path_buf());
    let first = warm(root, &FULL, &cache, Trust::Contents);
    let expected = reads(&first);
    assert_eq!(
        (report(&first).used, report(&first).written),
        (0, expected),
        "{what}: the first index reads everything and caches it"
    );
    for (options, trust) in KINDS {
        let warm = warm(root, &options, &cache, trust);
        let done = report(&warm).clone();
        // Without checksums and the backup comparison a backup is not read at all, so it has nothing to take.
        let used = if options.hashes || options.backup_diff {
            expected
        } else {
            warm.runs.len() as u32
        };
        assert_eq!(
            (done.used, done.read, done.written),
            (used, 0, 0),
            "{what}: {options:?}"
        );
        assert!(
            done.unreadable.is_empty() && done.stale == 0,
            "{what}: {done:?}"
        );
        let complete = options.hashes && options.backup_diff;
        assert_same(
            cold(root, &options),
            warm,
            complete,
            &format!("{what}, {options:?}"),
        );
    }
}

/// Copies a tree, keeping each file's modification time (as a second replica of the same data would have it).
fn copy_keeping_times(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_keeping_times(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
            set_modified(&target, entry.metadata().unwrap().modified().unwrap());
        }
    }
}

fn set_modified(path: &Path, time: SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(time)
        .unwrap();
}

/// Every file under `dir` with its size, modification time and sha256, to show nothing changed.
fn fingerprint(dir: &Path) -> Vec<(PathBuf, u64, SystemTime, Vec<u8>)> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                pending.push(entry.path());
            } else {
                let metadata = entry.metadata().unwrap();
                let bytes = std::fs::read(entry.path()).unwrap();
                files.push((
                    entry.path(),
                    metadata.len(),
                    metadata.modified().unwrap(),
                    sha2::Sha256::digest(&bytes).to_vec(),
                ));
            }
        }
    }
    files.sort();
    files
}

/// The V1 demo sweep alone (one run, its manifest and plan) in a fresh root: small enough to change.
fn small_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    copy_keeping_times(&demo_root().join("tr164-v1"), root.path());
    root
}

/// The one metrics.csv of [`small_root`], relative and absolute.
fn only_metrics(root: &Path) -> (String, PathBuf) {
    let run = std::fs::read_dir(root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.join("metrics.csv").is_file())
        .expect("a run directory");
    let name = run.file_name().unwrap().to_string_lossy().into_owned();
    (format!("{name}/metrics.csv"), run.join("metrics.csv"))
}

#[test]
fn a_warm_index_of_the_demo_data_equals_a_cold_one_byte_for_byte() {
    assert_warm_equals_cold(demo_root(), "demo data");
}

#[test]
fn a_warm_index_of_other_tools_files_equals_a_cold_one_byte_for_byte() {
    let mixed = tempfile::tempdir().unwrap();
    let root = mixed.path().join("mixed");
    cellscope_demo::generate_mixed(
        demo_root(),
        &root,
        &cellscope_demo::Options {
            seed: 164,
            scale: 1,
        },
    )
    .unwrap();
    assert_warm_equals_cold(&root, "mixed-format root");
}

#[test]
fn a_warm_index_of_every_bad_input_fixture_equals_a_cold_one_byte_for_byte() {
    let root = tempfile::tempdir().unwrap();
    copy_keeping_times(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures"),
        root.path(),
    );
    let index = cold(root.path(), &FULL);
    // The fixtures' own warnings are part of what must come back the same: a rejected file, invalid side files.
    for kind in [
        "missing_column",
        "empty_file",
        "invalid_manifest",
        "invalid_config",
        "ragged_row",
    ] {
        assert!(
            index.warnings.iter().any(|warning| warning.kind == kind),
            "no {kind} among the fixtures' warnings"
        );
    }
    assert_warm_equals_cold(root.path(), "fixtures");
}

#[test]
fn the_first_snapshot_from_a_warm_cache_is_the_cold_one() {
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = RunCache::in_directory(cache_dir.path().to_path_buf());
    warm(demo_root(), &FULL, &cache, Trust::Contents);
    let cold = first_snapshot(demo_root(), None).unwrap();
    let warm = first_snapshot(demo_root(), Some(&cache)).unwrap();
    assert_eq!(
        report(&warm.index).used,
        reads(&warm.index) - 1,
        "all but the backup, which is not read"
    );
    assert_eq!(warm.id, cold.id);
    assert_eq!(warm.content, cold.content);
    assert_eq!(warm.cells_arrow, cold.cells_arrow);
    assert_eq!(warm.provenance_json, cold.provenance_json);
}

#[test]
fn a_file_with_a_new_modification_time_is_read_again() {
    let root = small_root();
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = RunCache::in_directory(cache_dir.path().to_path_buf());
    warm(root.path(), &FULL, &cache, Trust::Contents);
    // Touch a side file only: the run's key changes, its content does not.
    let (_, metrics) = only_metrics(root.path());
    let manifest = metrics.with_file_name("manifest.json");
    assert!(manifest.is_file());
    set_modified(&manifest, SystemTime::now() + Duration::from_secs(5));
    let index = warm(root.path(), &CELLS_ONLY, &cache, Trust::Stamps);
    assert_eq!((report(&index).used, report(&index).read), (0, 1));
    assert_same(
        cold(root.path(), &CELLS_ONLY),
        index,
        false,
        "touched manifest",
    );
}

#[test]
fn a_file_changed_behind_its_size_and_time_is_caught_by_its_content_and_read_again() {
    let root = small_root();
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = RunCache::in_directory(cache_dir.path().to_path_buf());
    let before = warm(root.path(), &FULL, &cache, Trust::Contents);
    let (relative, metrics) = only_metrics(root.path());
    let modified = std::fs::metadata(&metrics).unwrap().modified().unwrap();
    // One digit of the first row's wall_ms changes; the size stays, and the modification time is put back.
    let text = std::fs::read_to_string(&metrics).unwrap();
    let (header, rest) = text.split_once('\n').unwrap();
    let column = header
        .split(',')
        .position(|name| name.trim() == "wall_ms")
        .unwrap();
    let row_end = rest.find('\n').unwrap();
    let mut fields: Vec<String> = rest[..row_end].split(',').map(str::to_string).collect();
    let digit = fields[column].chars().next().unwrap();
    let other = if digit == '9' {
        '1'
    } else {
        char::from(digit as u8 + 1)
    };
    fields[column].replace_range(0..1, &other.to_string());
    let changed = format!("{header}\n{}{}", fields.join(","), &rest[row_end..]);
    assert_eq!(changed.len(), text.len());
    std::fs::write(&metrics, &changed).unwrap();
    set_modified(&metrics, modified);

    // Sizes and times alone still match: the quick first stage takes the cached read, as designed.
    let quick = warm(root.path(), &CELLS_ONLY, &cache, Trust::Stamps);
    assert_eq!((report(&quick).used, report(&quick).stale), (1, 0));
    assert_eq!(
        export::encode(&quick.cells, Format::Arrow).unwrap(),
        export::encode(&before.cells, Format::Arrow).unwrap()
    );
    // Checked by content, the entry is dropped with a warning naming run and file, and the numbers are the new file's.
    let checked = warm(root.path(), &FULL, &cache, Trust::Contents);
    assert_eq!(
        (
            report(&checked).used,
            report(&checked).read,
            report(&checked).stale
        ),
        (0, 1, 1)
    );
    let stale: Vec<_> = checked
        .warnings
        .iter()
        .filter(|warning| warning.kind == "stale_cache_entry")
        .collect();
    assert_eq!(stale.len(), 1, "{:#?}", checked.warnings);
    assert_eq!(stale[0].file.as_deref(), Some(relative.as_str()));
    assert_eq!(
        stale[0].run.as_deref(),
        Some(relative.split('/').next().unwrap())
    );
    let mut cold_full = cold(root.path(), &FULL);
    assert_ne!(
        export::encode(&cold_full.cells, Format::Arrow).unwrap(),
        export::encode(&before.cells, Format::Arrow).unwrap(),
        "the change moved a number"
    );
    let mut checked_without_warning = checked;
    checked_without_warning
        .warnings
        .retain(|warning| warning.kind != "stale_cache_entry");
    cold_full.warnings.sort();
    checked_without_warning.warnings.sort();
    assert_same(cold_full, checked_without_warning, true, "stale entry");
    // The entry was written again from the files: the next index uses it without a warning.
    let again = warm(root.path(), &FULL, &cache, Trust::Contents);
    assert_eq!((report(&again).used, report(&again).stale), (1, 0));
    assert_same(cold(root.path(), &FULL), again, true, "rewritten entry");
}

#[test]
fn a_damaged_entry_is_ignored_and_the_run_read_from_its_files() {
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = RunCache::in_directory(cache_dir.path().to_path_buf());
    let first = warm(demo_root(), &FULL, &cache, Trust::Contents);
    let mut entries: Vec<PathBuf> = std::fs::read_dir(cache_dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    assert_eq!(entries.len() as u32, reads(&first));
    // One cut short (a crash without the rename would never leave this, but a disk can), one with a bit flipped.
    let bytes = std::fs::read(&entries[0]).unwrap();
    std::fs::write(&entries[0], &bytes[..bytes.len() / 2]).unwrap();
    let mut bytes = std::fs::read(&entries[1]).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x10;
    std::fs::write(&entries[1], &bytes).unwrap();
    let index = warm(demo_root(), &FULL, &cache, Trust::Contents);
    let done = report(&index).clone();
    assert_eq!(
        (done.used, done.read, done.written),
        (reads(&first) - 2, 2, 2)
    );
    assert_eq!(done.unreadable.len(), 2, "{done:?}");
    assert!(
        done.unreadable
            .iter()
            .any(|reason| reason.contains("checksum")),
        "{done:?}"
    );
    assert_same(cold(demo_root(), &FULL), index, true, "damaged entries");
}

#[test]
fn entries_name_no_absolute_path_so_a_copy_of_the_data_elsewhere_uses_them() {
    let first_root = small_root();
    let second_root = tempfile::tempdir().unwrap();
    copy_keeping_times(first_root.path(), second_root.path());
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = RunCache::in_directory(cache_dir.path().to_path_buf());
    warm(first_root.path(), &FULL, &cache, Trust::Contents);
    for entry in std::fs::read_dir(cache_dir.path()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        let root_text = first_root.path().to_string_lossy();
        assert!(
            !bytes
                .windows(root_text.len())
                .any(|window| window == root_text.as_bytes()),
            "an entry names the data root's absolute path"
        );
    }
    let index = warm(second_root.path(), &FULL, &cache, Trust::Contents);
    assert_eq!((report(&index).used, report(&index).read), (1, 0));
    assert_same(
        cold(second_root.path(), &FULL),
        index,
        true,
        "second replica",
    );
}

#[test]
fn the_data_root_is_never_written() {
    let root = small_root();
    let before = fingerprint(root.path());
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = RunCache::in_directory(cache_dir.path().to_path_buf());
    for (options, trust) in KINDS.into_iter().chain(KINDS) {
        warm(root.path(), &options, &cache, trust);
    }
    assert_eq!(fingerprint(root.path()), before);
}

#[test]
fn the_index_command_writes_then_uses_the_cache_and_refuses_one_inside_the_data_root() {
    let root = small_root();
    let cache_dir = tempfile::tempdir().unwrap();
    let index = |extra: &[&str]| {
        let output = cellscope_command()
            .args(["index", &root.path().to_string_lossy(), "--json"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap()
    };
    let cache_arg = cache_dir.path().to_string_lossy().into_owned();
    let first = index(&["--cache", &cache_arg]);
    assert_eq!(first["cache"]["written"], 1);
    let second = index(&["--cache", &cache_arg, "--cells-only"]);
    assert_eq!(
        (&second["cache"]["used"], &second["cache"]["read"]),
        (&1.into(), &0.into())
    );
    assert_eq!(second["cells"], first["cells"]);
    assert!(index(&["--no-cache"])["cache"].is_null());
    let inside = root.path().join("cache");
    let refused = cellscope_command()
        .args(["index", &root.path().to_string_lossy(), "--cache"])
        .arg(&inside)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("is inside the data root"));
    assert!(!inside.exists(), "nothing was created under the data root");
    // The user's cache directory inside the data root (a home directory served as data): no cache, no failure.
    let home_cache = root.path().join(".cache");
    let output = cellscope_command()
        .env("XDG_CACHE_HOME", &home_cache)
        .args(["index", &root.path().to_string_lossy(), "--json"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(report["cache"].is_null());
    assert!(String::from_utf8_lossy(&output.stderr).contains("running without a cache"));
    assert!(
        !home_cache.exists(),
        "nothing was created under the data root"
    );
}

#[test]
fn a_companion_file_another_format_reads_beside_its_own_is_an_input_too() {
    // LLMPerf's summary is the run's file; its per-request file beside it is read too and must key the entry.
    let root = tempfile::tempdir().unwrap();
    copy_keeping_times(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/fixtures/formats/llmperf"),
        &root.path().join("llmperf"),
    );
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = RunCache::in_directory(cache_dir.path().to_path_buf());
    let first = warm(root.path(), &FULL, &cache, Trust::Contents);
    assert_eq!(report(&first).written, 1);
    let unchanged = warm(root.path(), &CELLS_ONLY, &cache, Trust::Stamps);
    assert_eq!((report(&unchanged).used, report(&unchanged).read), (1, 0));
    let responses = std::fs::read_dir(root.path().join("llmperf/n1"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| {
            path.to_string_lossy()
                .ends_with("_individual_responses.json")
        })
        .expect("the per-request file");
    // The last request goes: the summary is untouched, the numbers change.
    let requests: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(&responses).unwrap()).unwrap();
    std::fs::write(
        &responses,
        serde_json::to_vec(&requests[..requests.len() - 1]).unwrap(),
    )
    .unwrap();
    let changed = warm(root.path(), &CELLS_ONLY, &cache, Trust::Stamps);
    assert_eq!((report(&changed).used, report(&changed).read), (0, 1));
    assert_ne!(
        export::encode(&changed.cells, Format::Arrow).unwrap(),
        export::encode(&unchanged.cells, Format::Arrow).unwrap()
    );
    assert_same(
        cold(root.path(), &CELLS_ONLY),
        changed,
        false,
        "companion file",
    );
}
