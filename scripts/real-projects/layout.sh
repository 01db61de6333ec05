#!/usr/bin/env bash
# The real-projects benchmark, step 1: lay each project of projects.tsv out at its pinned commit and run
# its own tests with Maven, as its developers do.
#
# Run by hand, never in CI: the projects' sources are not in this repository (only their names and
# pinned commits), and Maven needs Maven Central for their dependencies and plugins.
#
#   scripts/real-projects/layout.sh MIRRORS DEST [NAME...]
#
# MIRRORS: bare git mirrors, as MIRRORS/<owner>+<name>/repo (the layout of /work/.mirror) or
#   MIRRORS/<owner>/<name>.git or MIRRORS/<name>.git.
# DEST: where the work trees go (outside this repository): DEST/<name>.
# For each project:
#   1. `mvn test` and `mvn dependency:build-classpath` ONLINE (fills ~/.m2 with the dependencies, the
#      plugins and Surefire's JUnit provider, so that Bloatlens, which asks Maven offline, finds
#      everything later), failures ignored;
#   2. `mvn -o test` again, timed (unless TIMED=0): DEST/.state/<name>/.rp-mvn-seconds (the online run's
#      time, downloads included, is in .rp-mvn-online-seconds); the layout's own records are kept there,
#      outside the tree, where a licence check (Apache RAT) would count them as unlicensed files;
#   3. Surefire's reports (every module's target/surefire-reports/TEST-*.xml) copied to
#      DEST/.reports/<name>/<module>/ (module `.` for the root).
# MAVEN39: the Maven 3.9 for rows whose `maven` is 3.9 (default: DEST/.tools/apache-maven-3.9.11,
#   unpacked from Maven Central's org.apache.maven:apache-maven:3.9.11:tar.gz:bin on first use).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mirrors=${1:?usage: layout.sh MIRRORS DEST [NAME...]}
dest=${2:?usage: layout.sh MIRRORS DEST [NAME...]}
shift 2
only=("$@")
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)

# `mvn test` as the project's developers run it: every plugin it binds runs (checks, reports, enforcer,
# Animal Sniffer, formatters' validate goals), so that what Bloatlens's own offline Maven run executes
# (the plugins bound up to `compile`) is in ~/.m2 too. Failing tests do not stop the build.
# SKIP_CHECKS=1 skips the checks that are not tests (licence headers, style, API compatibility, signing):
# then what those plugins need may be missing when Bloatlens asks Maven offline.
mvn_flags=(-B -fae -Dmaven.test.failure.ignore=true)
[ "${SKIP_CHECKS:-0}" = 1 ] && mvn_flags+=(-Drat.skip=true -Dcheckstyle.skip=true -Dspotbugs.skip=true
  -Dpmd.skip=true -Dcpd.skip=true -Djapicmp.skip=true -Drevapi.skip=true -Dmaven.javadoc.skip=true
  -Dgpg.skip=true -Dcyclonedx.skip=true -Dlicense.skip=true -Dspotless.check.skip=true)

maven_for() { # 3.8 | 3.9 → the mvn command
  if [ "$1" = 3.9 ]; then
    local m=${MAVEN39:-$dest/.tools/apache-maven-3.9.11/bin/mvn}
    if [ ! -x "$m" ]; then
      mkdir -p "$dest/.tools"
      mvn -q -B -Dstyle.color=never org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy \
        -Dartifact=org.apache.maven:apache-maven:3.9.11:tar.gz:bin -DoutputDirectory="$dest/.tools" >/dev/null
      tar -xzf "$dest/.tools/apache-maven-3.9.11-bin.tar.gz" -C "$dest/.tools"
    fi
    echo "$m"
  else echo mvn; fi
}

find_mirror() { # owner/name
  local owner=${1%%/*} name=${1#*/}
  for c in "$mirrors/$owner+$name/repo" "$mirrors/$owner/$name.git" "$mirrors/$name.git" "$mirrors/$name"; do
    [ -d "$c" ] && { echo "$c"; return; }
  done
  echo "no mirror of $1 under $mirrors" >&2; return 1
}

while IFS=$'\t' read -r name repo commit maven modules kinds main; do
  case "$name" in ''|'#'*) continue;; esac
  if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " =~ " $name " ]]; then continue; fi
  tree=$dest/$name
  state=$dest/.state/$name; mkdir -p "$state"
  git_dir=$(find_mirror "$repo")
  echo "== $name ($repo @ ${commit:0:12}) → $tree"
  if [ ! -f "$state/.rp-commit" ] || [ "$(cat "$state/.rp-commit")" != "$commit" ]; then
    rm -rf "$tree"; mkdir -p "$tree"
    if ! git --git-dir="$git_dir" archive "$commit" 2>/dev/null | tar -x -C "$tree"; then
      # a snapshot mirror may lack its largest blobs: lay out every file that is there, list the others
      rm -rf "$tree"; mkdir -p "$tree"; rm -f "$state/.rp-missing"
      git --git-dir="$git_dir" ls-tree -r "$commit" | while read -r _ type obj path; do
        [ "$type" = blob ] || continue
        if git --git-dir="$git_dir" cat-file -e "$obj" 2>/dev/null; then
          mkdir -p "$tree/$(dirname "$path")"; git --git-dir="$git_dir" cat-file blob "$obj" > "$tree/$path"
        else echo "$path" >> "$state/.rp-missing"; fi
      done
      echo "   files missing from the mirror (not laid out): $(wc -l < "$state/.rp-missing")"
    fi
    # a project JDK 17 cannot build as it is gets a small fix-up of its build files (never its sources)
    [ -f "$here/fixups/$name.sh" ] && (cd "$tree" && bash "$here/fixups/$name.sh")
    echo "$commit" > "$state/.rp-commit"
  fi
  mvn_cmd=$(maven_for "$maven")
  pl=()
  [ "$modules" != . ] && pl=(-pl "$modules" -am)
  log=$dest/.logs/$name; mkdir -p "$log"
  echo "   mvn test (online) → $log/mvn-online.txt"
  start=$(date +%s%N)
  (cd "$tree" && nice "$mvn_cmd" "${mvn_flags[@]}" "${pl[@]}" test) > "$log/mvn-online.txt" 2>&1 \
    || echo "   mvn test failed (status $?): $(grep -m1 -E '^\[ERROR\]' "$log/mvn-online.txt")"
  echo "scale=1; ($(date +%s%N) - $start) / 1000000000" | bc > "$state/.rp-mvn-online-seconds"
  # What Bloatlens asks Maven for, offline (the dependency plugin: `mvn test` does not download it).
  (cd "$tree" && "$mvn_cmd" -q -B "${pl[@]}" dependency:build-classpath -Dmdep.outputFile=/dev/null) \
    > "$log/mvn-classpath.txt" 2>&1 || echo "   mvn dependency:build-classpath failed: see $log/mvn-classpath.txt"
  if [ "${TIMED:-1}" = 1 ]; then
    echo "   mvn -o test (timed) → $log/mvn-offline.txt"
    start=$(date +%s%N)
    (cd "$tree" && nice "$mvn_cmd" -o "${mvn_flags[@]}" "${pl[@]}" test) > "$log/mvn-offline.txt" 2>&1 \
      || echo "   mvn -o test failed (status $?): $(grep -m1 -E '^\[ERROR\]' "$log/mvn-offline.txt")"
    echo "scale=1; ($(date +%s%N) - $start) / 1000000000" | bc > "$state/.rp-mvn-seconds"
  fi
  rm -rf "$dest/.reports/$name"
  (cd "$tree" && find . -path '*/target/surefire-reports/TEST-*.xml' -not -path './.rp-*') | while read -r f; do
    case "$f" in ./target/*) module=.;; *) module=${f#./}; module=${module%/target/surefire-reports/*};; esac
    mkdir -p "$dest/.reports/$name/$module"; cp "$tree/$f" "$dest/.reports/$name/$module/"
  done
  echo "   $(find "$dest/.reports/$name" -name 'TEST-*.xml' 2>/dev/null | wc -l) Surefire reports; mvn test $(cat "$state/.rp-mvn-seconds" 2>/dev/null || echo '?') s (online: $(cat "$state/.rp-mvn-online-seconds") s)"
done < "$here/projects.tsv"
