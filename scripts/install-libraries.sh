#!/usr/bin/env bash
# Installs the third-party Java libraries the conformance suite runs (Debian's packages), when missing.
set -euo pipefail
exec "$(dirname "$0")/apt-install.sh" install-libraries \
  libcommons-lang3-java libguava-java libcommons-collections4-java libgoogle-gson-java
