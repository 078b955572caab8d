//! Fuzz target `view_state`: see `cellscope::fuzzing::view_state` for the property it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cellscope::fuzzing::view_state(data));
