#!/usr/bin/env bash
# Installs a JDK (javac + java) from Debian's packages when the machine has none.
set -euo pipefail
if command -v javac >/dev/null 2>&1 && command -v java >/dev/null 2>&1; then
  exit 0
fi
echo "ensure-jdk: no javac on PATH" >&2
exec "$(dirname "$0")/apt-install.sh" ensure-jdk openjdk-17-jdk-headless
