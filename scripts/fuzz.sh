#!/usr/bin/env bash
# Coverage-guided fuzzing on a stock stable toolchain.
#
#   scripts/fuzz.sh TARGET SECONDS        # -s none (no sanitizer), all cores
#   ASAN=1 scripts/fuzz.sh TARGET SECONDS # AddressSanitizer via RUSTC_BOOTSTRAP=1
#
# Installs cargo-fuzz when it is missing, seeds fuzz/corpus/TARGET from the
# attack generators when it is empty, and runs with the project dictionary,
# -fork set to the number of cores, for SECONDS in all. A crash leaves its
# input under fuzz/artifacts/TARGET/ and exits non-zero; minimize it with
#   cargo fuzz tmin -s none TARGET fuzz/artifacts/TARGET/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh TARGET SECONDS}
seconds=${2:?usage: scripts/fuzz.sh TARGET SECONDS}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
corpus=fuzz/corpus/$target
mkdir -p "$corpus"
if [ "$target" = raw_stdin ] && [ -z "$(ls -A "$corpus")" ]; then
    cargo run --quiet -- corpus --out "$corpus"
fi
if [ "${ASAN:-0}" = 1 ]; then
    # A toolchain switch leaves a stale fingerprint behind that breaks the build.
    rm -f fuzz/target/.rustc_info.json
    export RUSTC_BOOTSTRAP=1
    sanitizer=address
else
    sanitizer=none
fi
cargo fuzz run -s "$sanitizer" "$target" "$corpus" -- \
    -dict=fuzz/portcullis.dict -fork="$(nproc)" -max_total_time="$seconds" -ignore_crashes=0
