//! Fuzz target `exclusions`: see `cellscope::fuzzing::exclusions` for the property it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cellscope::fuzzing::exclusions(data));
