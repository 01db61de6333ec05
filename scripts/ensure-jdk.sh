#!/usr/bin/env bash
# Installs a JDK (javac + java) from Debian's packages when the machine has none.
set -euo pipefail
if command -v javac >/dev/null 2>&1 && command -v java >/dev/null 2>&1; then
  exit 0
fi
echo "ensure-jdk: no javac on PATH; installing openjdk-17-jdk-headless" >&2
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq openjdk-17-jdk-headless >/dev/null
