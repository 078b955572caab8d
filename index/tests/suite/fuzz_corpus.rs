//! The index's fuzz targets (`cellscope_index::fuzzing`) on the committed corpus (`fuzz/corpus/<target>/`) and on
//! seeded mutations of it: what `cargo xtask fuzz` runs for hours under libFuzzer, run briefly in every test run with
//! a stable compiler. A finding of the fuzzer becomes a corpus file here, so it stays fixed.

#[test]
fn every_fuzz_target_holds_on_its_corpus_and_seeded_mutations_of_it() {
    cellscope_index::fuzzing::check_corpus(&cellscope_index::fuzzing::TARGETS);
}
