# Sourced by scripts/resolve-library-classpath.sh and scripts/install-library-suite.sh: the Maven side of
# the real-library suite. A workload's `maven.txt` lists `groupId:artifactId:version` coordinates, one a
# line ('#' comments and blank lines skipped); Maven resolves them with their transitive dependencies into
# the local repository (~/.m2) and prints the class path in its order (nearest wins, as a project with
# those dependencies gets). The class path is cached per maven.txt content under
# $BLOATLENS_LIBRARY_CACHE (default ~/.cache/bloatlens/library-suite), so a test asks Maven once.

# The version of maven-dependency-plugin the generated poms use.
LIBRARY_SUITE_DEPENDENCY_PLUGIN=3.6.1

library_suite_cache_dir() {
  echo "${BLOATLENS_LIBRARY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/bloatlens/library-suite}"
}

# The coordinates of a maven.txt, one a line, without comments and blanks.
library_suite_coordinates() {
  sed -e 's/#.*//' -e 's/[[:space:]]//g' "$1" | grep -v '^$' || true
}

# The cache file of a maven.txt: named after the digest of its coordinates and the plugin version.
library_suite_cache_file() {
  local digest
  digest=$( (echo "$LIBRARY_SUITE_DEPENDENCY_PLUGIN"; library_suite_coordinates "$1") | sha256sum | cut -c1-32)
  echo "$(library_suite_cache_dir)/$digest.classpath"
}

# Writes to stdout the pom of one workload (artifactId $1) whose dependencies are the coordinates of
# maven.txt $2, and whose build-classpath goal writes the class path to $3.
library_suite_pom() {
  local name=$1 list=$2 out=$3 coord g a v extra
  cat <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>bloatlens.library-suite</groupId>
  <artifactId>$name</artifactId>
  <version>0</version>
  <packaging>pom</packaging>
  <dependencies>
EOF
  while read -r coord; do
    IFS=: read -r g a v extra <<<"$coord"
    if [ -z "$g" ] || [ -z "$a" ] || [ -z "$v" ] || [ -n "${extra:-}" ]; then
      echo "library-suite: $list: '$coord' is not groupId:artifactId:version" >&2
      return 1
    fi
    echo "    <dependency><groupId>$g</groupId><artifactId>$a</artifactId><version>$v</version></dependency>"
  done < <(library_suite_coordinates "$list")
  cat <<EOF
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-dependency-plugin</artifactId>
        <version>$LIBRARY_SUITE_DEPENDENCY_PLUGIN</version>
        <configuration>
          <outputFile>$out</outputFile>
          <includeScope>runtime</includeScope>
        </configuration>
      </plugin>
    </plugins>
  </build>
</project>
EOF
}

# Runs `mvn [options] dependency:build-classpath` on a generated pom for each (name, maven.txt) pair,
# all in one reactor, and fills the cache. Options: -o for offline (nothing downloaded).
# Usage: library_suite_resolve MVN_OPTION... -- NAME LIST [NAME LIST]...
library_suite_resolve() {
  local options=() work cache name list file modules=() out status=0
  while [ "$1" != -- ]; do options+=("$1"); shift; done
  shift
  cache=$(library_suite_cache_dir)
  mkdir -p "$cache"
  work=$(mktemp -d)
  while [ $# -gt 0 ]; do
    name=$1 list=$2
    shift 2
    file=$(library_suite_cache_file "$list")
    mkdir -p "$work/$name"
    library_suite_pom "$name" "$list" "$work/$name/classpath.txt" >"$work/$name/pom.xml" || { rm -rf "$work"; return 1; }
    modules+=("$name:$file")
  done
  {
    echo '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion>'
    echo '<groupId>bloatlens.library-suite</groupId><artifactId>all</artifactId><version>0</version><packaging>pom</packaging><modules>'
    for m in "${modules[@]}"; do echo "<module>${m%%:*}</module>"; done
    echo '</modules></project>'
  } >"$work/pom.xml"
  if ! out=$(cd "$work" && mvn -B -q "${options[@]}" dependency:build-classpath 2>&1); then
    echo "$out" | grep -E '^\[ERROR\]' | head -n 5 >&2
    status=1
  fi
  for m in "${modules[@]}"; do
    name=${m%%:*} file=${m#*:}
    if [ -f "$work/$name/classpath.txt" ]; then
      # Atomic: trials of the suite run in parallel and may resolve the same list at once.
      cp "$work/$name/classpath.txt" "$file.$$" && mv "$file.$$" "$file"
    fi
  done
  rm -rf "$work"
  return $status
}

# Prints the cached class path of a maven.txt when every jar in it is still there; fails otherwise.
library_suite_cached() {
  local file jar
  file=$(library_suite_cache_file "$1")
  [ -s "$file" ] || return 1
  local IFS=:
  for jar in $(cat "$file"); do [ -f "$jar" ] || return 1; done
  cat "$file"
}
