#!/usr/bin/env bash
# The main job: profiles the bundled example (examples/orders/OrderReport.java) for bloat and prints
# the report. Extra arguments go to `bloatlens profile` (e.g. --format json).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-jdk.sh
cargo build --release --quiet
exec target/release/bloatlens profile "$@" examples/orders/OrderReport.java
