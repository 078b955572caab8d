//! The fuzz targets (`cellscope::fuzzing`) on the committed corpus (`fuzz/corpus/<target>/`) and on seeded
//! mutations of it: what `cargo xtask fuzz` runs for hours under libFuzzer, run briefly in every test run with a
//! stable compiler. A finding of the fuzzer becomes a corpus file here, so it stays fixed.

use cellscope::fuzzing::TARGETS;
use std::path::{Path, PathBuf};

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let directory = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut files: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&directory)
        .unwrap_or_else(|error| panic!("{}: {error}", directory.display()))
        .map(|entry| entry.unwrap().path())
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    files.sort();
    files
}

/// Small pieces that change how the readers split and read: delimiters, quotes, line ends, numbers, markup.
const TOKENS: [&[u8]; 18] = [
    b",",
    b"\n",
    b"\r\n",
    b"\r",
    b"\"",
    b"0",
    b"-1",
    b"NaN",
    b"1e400",
    b"ok",
    b"\xef\xbb\xbf",
    b"\xff",
    b"<script>",
    b"javascript:",
    b"=",
    b"&",
    b"%",
    b"[[exclude]]\n",
];

struct Mutator(u64);

impl Mutator {
    fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % bound.max(1) as u64) as usize
    }

    /// One to four edits of `bytes`: a byte changed, a token inserted, a stretch removed or repeated, a cut.
    fn mutate(&mut self, bytes: &[u8]) -> Vec<u8> {
        let mut out = bytes.to_vec();
        for _ in 0..1 + self.below(4) {
            let at = self.below(out.len() + 1);
            match self.below(5) {
                0 if !out.is_empty() => {
                    let at = at.min(out.len() - 1);
                    out[at] = self.below(256) as u8;
                }
                1 => {
                    let token = TOKENS[self.below(TOKENS.len())];
                    out.splice(at..at, token.iter().copied());
                }
                2 => {
                    let end = (at + self.below(64)).min(out.len());
                    out.drain(at..end);
                }
                3 => {
                    let end = (at + self.below(256)).min(out.len());
                    let stretch = out[at..end].to_vec();
                    out.splice(at..at, stretch);
                }
                _ => out.truncate(at),
            }
        }
        out
    }
}

#[test]
fn every_fuzz_target_holds_on_its_corpus_and_seeded_mutations_of_it() {
    // Enough to exercise every reader's error paths in a second or two; `cargo xtask fuzz` goes much further
    // (and, without a nightly compiler, runs this test with other seeds and many more mutants).
    let mutants_per_file: usize = std::env::var("CELLSCOPE_FUZZ_MUTANTS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(600);
    let seed: u64 = std::env::var("CELLSCOPE_FUZZ_SEED")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(0x2545_F491_4F6C_DD1D);
    for (name, check) in TARGETS {
        let files = corpus(name);
        assert!(!files.is_empty(), "no corpus for {name}");
        // Never zero: the xorshift would stay at zero.
        let mut mutator = Mutator((seed ^ name.len() as u64) | 1);
        for (path, bytes) in &files {
            check(bytes);
            // A large seed (a 125 KB GuideLLM report) gets fewer mutants: about 16 MB of mutated input per
            // target, shared between its seeds, keeps the whole test to seconds.
            let budget_bytes = (16 << 20) / files.len();
            let mutants = mutants_per_file
                .min(budget_bytes / bytes.len().max(1))
                .max(16);
            for round in 0..mutants {
                let mutant = mutator.mutate(bytes);
                let outcome = std::panic::catch_unwind(|| check(&mutant));
                if outcome.is_err() {
                    let kept = std::env::temp_dir().join(format!("cellscope-fuzz-{name}-{round}"));
                    std::fs::write(&kept, &mutant).unwrap();
                    panic!(
                        "{name}: mutant {round} of {} fails; its bytes are in {}",
                        path.display(),
                        kept.display()
                    );
                }
            }
        }
    }
}
