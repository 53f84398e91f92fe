//! Structure-aware: the bytes build a script through `arbitrary`; against
//! the reference gateway every check must hold, under both policies.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    portcullis::libfuzzer::check_script_in(&portcullis::reference::Reference::strict(), data, &portcullis::Revision::ALL);
});
