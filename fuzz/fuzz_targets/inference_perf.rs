//! Fuzz target `inference_perf`: see `cellscope_index::fuzzing::TARGETS` for the reader it drives and the property it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (_, check) = cellscope_index::fuzzing::TARGETS
        .into_iter()
        .find(|(name, _)| *name == "inference_perf")
        .expect("a target of that name");
    check(data)
});
