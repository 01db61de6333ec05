#!/usr/bin/env bash
# Prints the class path of one real-library workload (fixtures/libraries/NAME): the absolute paths of the
# jars named in its packages.txt, ':'-separated, in the file's order. Each line of packages.txt is
# `PACKAGE JARNAME`; the jar is found among the files `dpkg -L PACKAGE` lists (never a hard-coded
# version). Blank lines and lines starting with '#' are skipped. A workload without packages.txt (the JDK
# module workloads) prints an empty line. Fails, naming the package, when a package is not installed or
# does not hold the jar (scripts/install-library-suite.sh installs them).
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 WORKLOAD_DIR" >&2
  exit 2
fi
dir=$1
list="$dir/packages.txt"
if [ ! -f "$list" ]; then
  echo
  exit 0
fi
cp=()
while read -r pkg jar rest || [ -n "${pkg:-}" ]; do
  case "${pkg:-}" in ''|'#'*) continue ;; esac
  if [ -z "${jar:-}" ]; then
    echo "resolve-library-classpath: $list: line '$pkg' has no jar name (want: PACKAGE JARNAME)" >&2
    exit 1
  fi
  if ! files=$(dpkg -L "$pkg" 2>/dev/null); then
    echo "resolve-library-classpath: package $pkg (for $jar) is not installed; run scripts/install-library-suite.sh" >&2
    exit 1
  fi
  # Prefer the copy in /usr/share/java (the unversioned symlink), then any other path with that base name.
  path=$(printf '%s\n' "$files" | grep -E "^/usr/share/java/$jar\$" | head -n1 || true)
  if [ -z "$path" ]; then
    path=$(printf '%s\n' "$files" | grep -E "/$jar\$" | head -n1 || true)
  fi
  if [ -z "$path" ] || [ ! -e "$path" ]; then
    echo "resolve-library-classpath: package $pkg holds no jar named $jar (dpkg -L $pkg)" >&2
    exit 1
  fi
  cp+=("$path")
done < "$list"
(IFS=:; echo "${cp[*]}")
