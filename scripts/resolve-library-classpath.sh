#!/usr/bin/env bash
# Prints the class path of one real-library workload (fixtures/libraries/NAME): the absolute paths of its
# jars, ':'-separated: first those named in its packages.txt, in the file's order, then those of its
# maven.txt, in Maven's order.
#
# Each line of packages.txt is `PACKAGE JARNAME`; the jar is found among the files `dpkg -L PACKAGE` lists
# (never a hard-coded version). Each line of maven.txt is `groupId:artifactId:version`; Maven resolves them
# and their transitive dependencies from the local repository (offline; the class path is cached, see
# scripts/library-suite-maven.sh). Blank lines and lines starting with '#' are skipped. A workload with
# neither file (the JDK module workloads) prints an empty line. Fails, naming the package or the list, when
# a package is not installed, does not hold the jar, or a coordinate is not in ~/.m2
# (scripts/install-library-suite.sh installs both kinds).
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 WORKLOAD_DIR" >&2
  exit 2
fi
dir=$1
list="$dir/packages.txt"
cp=()
[ -f "$list" ] || list=/dev/null
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
maven="$dir/maven.txt"
if [ -f "$maven" ]; then
  # shellcheck source=library-suite-maven.sh
  . "$(dirname "$0")/library-suite-maven.sh"
  if ! jars=$(library_suite_cached "$maven"); then
    name=$(basename "$(cd "$dir" && pwd)")
    if ! library_suite_resolve -o -- "$name" "$maven" || ! jars=$(library_suite_cached "$maven"); then
      echo "resolve-library-classpath: $maven: not all of it is in ~/.m2 (mvn -o failed); run scripts/install-library-suite.sh" >&2
      exit 1
    fi
  fi
  cp+=("$jars")
fi
(IFS=:; echo "${cp[*]}")
