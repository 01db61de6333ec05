#!/usr/bin/env bash
# Installs the Debian packages that the real-library suite (fixtures/libraries/*/packages.txt) needs, when
# missing. `apt-get update` runs only when something is to be installed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
wanted=$(cat "$root"/fixtures/libraries/*/packages.txt 2>/dev/null | grep -v '^[[:space:]]*\(#\|$\)' | awk '{print $1}' | sort -u)
# shellcheck disable=SC2086 # one word per package
exec "$root/scripts/apt-install.sh" install-library-suite --no-install-recommends $wanted
