#!/usr/bin/env bash
# Installs the third-party Java libraries the conformance suite runs (Debian's packages), when missing.
set -euo pipefail
needed=()
[ -f /usr/share/java/commons-lang3.jar ] || needed+=(libcommons-lang3-java)
[ -f /usr/share/java/guava.jar ] || needed+=(libguava-java)
[ -f /usr/share/java/commons-collections4.jar ] || needed+=(libcommons-collections4-java)
[ -f /usr/share/java/gson.jar ] || needed+=(libgoogle-gson-java)
if [ ${#needed[@]} -eq 0 ]; then
  exit 0
fi
echo "install-libraries: installing ${needed[*]}" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${needed[@]}" >/dev/null
