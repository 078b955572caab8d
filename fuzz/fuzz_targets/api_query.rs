//! Fuzz target `api_query`: see `cellscope_index::fuzzing::api_query` for the property it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cellscope_index::fuzzing::api_query(data));
