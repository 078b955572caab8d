//! Fuzz target `run_files`: see `cellscope_index::fuzzing::run_files` for the property it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cellscope_index::fuzzing::run_files(data));
