//! Generates the demo data root from the command line and reports the time it took:
//! `cargo run -p cellscope-demo --release --example generate -- OUT_DIR [--seed N] [--scale K]`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut out_dir = None;
    let mut options = cellscope_demo::Options::default();
    while let Some(arg) = args.next() {
        let parsed = match arg.as_str() {
            "--seed" => args
                .next()
                .and_then(|v| v.parse().ok())
                .map(|seed| options.seed = seed),
            "--scale" => args
                .next()
                .and_then(|v| v.parse().ok())
                .map(|scale| options.scale = scale),
            _ if out_dir.is_none() => {
                out_dir = Some(std::path::PathBuf::from(arg));
                Some(())
            }
            _ => None,
        };
        if parsed.is_none() {
            eprintln!("usage: generate OUT_DIR [--seed N] [--scale K]");
            return ExitCode::from(2);
        }
    }
    let Some(out_dir) = out_dir else {
        eprintln!("usage: generate OUT_DIR [--seed N] [--scale K]");
        return ExitCode::from(2);
    };
    let started = std::time::Instant::now();
    match cellscope_demo::generate(&out_dir, &options) {
        Ok(summary) => {
            println!(
                "{} runs, {} metrics rows, {} files, {} bytes in {:.2?}",
                summary.runs,
                summary.metrics_rows,
                summary.files,
                summary.bytes,
                started.elapsed()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}
