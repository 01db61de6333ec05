#!/usr/bin/env bash
# Runs every test: formatting, lints, unit tests and the VM conformance suite against HotSpot.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-jdk.sh
scripts/install-libraries.sh
scripts/install-tools.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --release -- -D warnings
cargo test --workspace --release
