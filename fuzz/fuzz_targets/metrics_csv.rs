//! Fuzz target `metrics_csv`: see `cellscope_index::fuzzing::metrics_csv` for the property it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cellscope_index::fuzzing::metrics_csv(data));
