//! The baseline the benchmark compares exec/s with: a bare serde_json parse.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = serde_json::from_slice::<serde_json::Value>(data);
});
