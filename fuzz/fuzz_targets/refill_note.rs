//! Fuzz target `refill_note`: see `cellscope::fuzzing::refill_note` for the property it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| cellscope::fuzzing::refill_note(data));
