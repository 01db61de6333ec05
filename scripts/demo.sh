#!/usr/bin/env bash
# The main job: compiles the bundled example and runs it under the Bloatlens VM.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-jdk.sh
cargo build --release --quiet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
javac -g -d "$out" examples/WordFrequency.java
exec target/release/bloatlens run -cp "$out" WordFrequency "$@"
