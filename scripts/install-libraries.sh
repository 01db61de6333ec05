#!/usr/bin/env bash
# Installs the third-party Java libraries the conformance suite runs (Debian's packages), and what
# the Maven fixture project needs offline (Maven, its plugins, JUnit 5 and 4 in /usr/share/maven-repo),
# when missing.
set -euo pipefail
exec "$(dirname "$0")/apt-install.sh" install-libraries \
  libcommons-lang3-java libguava-java libcommons-collections4-java libgoogle-gson-java \
  maven libmaven-dependency-plugin-java libmaven-resources-plugin-java libmaven-compiler-plugin-java \
  junit5 junit4
