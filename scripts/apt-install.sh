#!/usr/bin/env bash
# Installs the Debian packages given that are not installed yet (apt-get update first; sudo when not root).
# Usage: scripts/apt-install.sh WHO [--no-install-recommends] PACKAGE...
# (WHO names the caller in the one line said).
set -euo pipefail
who=$1
shift
options=()
if [ "${1:-}" = --no-install-recommends ]; then
  options+=("$1")
  shift
fi
needed=()
for pkg in "$@"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || needed+=("$pkg")
done
[ ${#needed[@]} -eq 0 ] && exit 0
echo "$who: installing ${needed[*]}" >&2
SUDO=()
[ "$(id -u)" = 0 ] || SUDO=(sudo -n)
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${options[@]}" "${needed[@]}" >/dev/null
