#!/usr/bin/env bash
# Installs the Debian packages that the real-library suite (fixtures/libraries/*/packages.txt) needs, when
# missing. `apt-get update` runs only when something is to be installed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
wanted=$(cat "$root"/fixtures/libraries/*/packages.txt 2>/dev/null | grep -v '^[[:space:]]*\(#\|$\)' | awk '{print $1}' | sort -u)
needed=()
for pkg in $wanted; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    needed+=("$pkg")
  fi
done
if [ ${#needed[@]} -eq 0 ]; then
  exit 0
fi
echo "install-library-suite: installing ${needed[*]}" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${needed[@]}" >/dev/null
