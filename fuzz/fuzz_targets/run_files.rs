//! Fuzz target `run_files`: see `cellscope::fuzzing::run_files` for the property it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cellscope::fuzzing::run_files(data));
