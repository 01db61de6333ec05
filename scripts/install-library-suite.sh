#!/usr/bin/env bash
# Installs what the real-library suite (fixtures/libraries/) needs, when missing: the Debian packages of
# every packages.txt (`apt-get update` runs only when something is to be installed), and the Maven
# coordinates of every maven.txt with their transitive dependencies, downloaded into ~/.m2 by one `mvn`
# run over all the lists whose class path is not cached yet (see scripts/library-suite-maven.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
wanted=$(cat "$root"/fixtures/libraries/*/packages.txt 2>/dev/null | grep -v '^[[:space:]]*\(#\|$\)' | awk '{print $1}' | sort -u)
# shellcheck disable=SC2086 # one word per package
"$root/scripts/apt-install.sh" install-library-suite --no-install-recommends $wanted
# shellcheck source=library-suite-maven.sh
. "$root/scripts/library-suite-maven.sh"
pending=()
for list in "$root"/fixtures/libraries/*/maven.txt; do
  [ -f "$list" ] || continue
  library_suite_cached "$list" >/dev/null || pending+=("$(basename "$(dirname "$list")")" "$list")
done
[ ${#pending[@]} -eq 0 ] && exit 0
echo "install-library-suite: resolving the Maven dependencies of $((${#pending[@]} / 2)) workloads" >&2
library_suite_resolve -- "${pending[@]}"
