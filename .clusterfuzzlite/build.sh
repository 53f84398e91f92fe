#!/bin/bash -eu
# Builds the fuzz targets and copies them, with a dictionary and a seed
# corpus each, into $OUT — what ClusterFuzzLite and OSS-Fuzz run.
# FUZZ_SANITIZER overrides the sanitizer (OSS-Fuzz images build with
# address); `none` builds on a stable toolchain.
cd "$SRC/portcullis"
targets="raw_stdin script oracle my_gateway"
cargo fuzz build -O -s "${FUZZ_SANITIZER:-address}"
release=fuzz/target/x86_64-unknown-linux-gnu/release
seeds=$(mktemp -d)
cargo run --release --quiet -- corpus --out "$seeds" --count 256 >/dev/null
for t in $targets; do
    cp "$release/$t" "$OUT/$t"
    cp fuzz/portcullis.dict "$OUT/$t.dict"
done
(cd "$seeds" && zip -q -r "$OUT/raw_stdin_seed_corpus.zip" .)
rm -rf "$seeds"
