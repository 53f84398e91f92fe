//! Raw bytes on the reference gateway's stdin, after the handshake: no
//! crash, exit on EOF, a clean stdout, and the same outcome whatever the
//! write boundaries. PORTCULLIS_FUZZ_MUTANT=NAME plants a built-in bug.
#![no_main]

use portcullis::libfuzzer::RawStdin;
use portcullis::reference::{Mutant, Reference};
use std::sync::LazyLock;

static RAW: LazyLock<RawStdin<Reference>> = LazyLock::new(|| {
    RawStdin::new(match std::env::var("PORTCULLIS_FUZZ_MUTANT") {
        Ok(name) => {
            Reference::mutant(Mutant::from_name(&name).expect("PORTCULLIS_FUZZ_MUTANT names a built-in mutant"))
        }
        Err(_) => Reference::strict(),
    })
});

libfuzzer_sys::fuzz_target!(|data: &[u8]| RAW.check(data));
