#!/usr/bin/env bash
# Runs every test: formatting, lints, unit tests, the VM conformance suite against HotSpot, the
# server in a real Neovim, and the VS Code extension in a real VS Code workbench.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-jdk.sh
scripts/install-libraries.sh
scripts/install-library-suite.sh
scripts/install-tools.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --release -- -D warnings
cargo test --workspace --release
scripts/test-vscode.sh
