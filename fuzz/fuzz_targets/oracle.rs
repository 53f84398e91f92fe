//! Arbitrary observations of arbitrary scripts: the checks must never panic.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    portcullis::libfuzzer::check_oracle(data);
});
