//! Fuzz target `view_state`: see `cellscope_index::fuzzing::view_state` for the property it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cellscope_index::fuzzing::view_state(data));
