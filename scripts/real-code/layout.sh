#!/usr/bin/env bash
# The real-code benchmark: lay each project of projects.tsv out at its pinned commit and build it.
#
# Run by hand, never in CI: CI cannot fetch the projects (their sources are not in this repository,
# only their names and pinned commits) and Maven needs Maven Central (or a warm ~/.m2) for their
# dependencies.
#
#   scripts/real-code/layout.sh MIRRORS DEST [NAME...]
#
# MIRRORS: a directory holding a bare git mirror of each project, as MIRRORS/<owner>+<name>/repo
#   (the layout of /work/.mirror) or MIRRORS/<owner>/<name>.git or MIRRORS/<name>.git.
# DEST: where the work trees go (outside this repository), DEST/<name>.
# Each project is built with `mvn -q -DskipTests install` (its module and what it needs), and the
# module's runtime class path is written to DEST/<name>/.realcode-classpath for the drivers.
# With MVN_OFFLINE=1 Maven runs with -o (a warm ~/.m2); MVN=path names the Maven to use.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mirrors=${1:?usage: layout.sh MIRRORS DEST [NAME...]}
dest=${2:?usage: layout.sh MIRRORS DEST [NAME...]}
shift 2
only=("$@")
mkdir -p "$dest"
# Animal Sniffer is not skipped: Bloatlens's own offline Maven step runs the plugins bound up to `compile`
# (jsoup's animal-sniffer check), which then needs its signature in ~/.m2.
mvn_flags=(-q -B -DskipTests -Dmaven.javadoc.skip=true -Drat.skip=true -Djacoco.skip=true
  -Dcheckstyle.skip=true -Dspotbugs.skip=true -Dpmd.skip=true -Dcpd.skip=true -Denforcer.skip=true
  -Dmaven.source.skip=true -Dgpg.skip=true -Djapicmp.skip=true
  -Dcyclonedx.skip=true -Dspotless.check.skip=true -Dspotless.apply.skip=true -Dmoditect.skip=true
-Dmaven.compiler.failOnWarning=false -Dlicense.skip=true -Derrorprone.skip=true -Danimal.sniffer.skip=true)
[ "${MVN_OFFLINE:-0}" = 1 ] && mvn_flags+=(-o)
# MVN names another Maven (the Apache Commons parent pom needs Maven 3.9 or later)
mvn=${MVN:-mvn}

find_mirror() { # owner/name
  local owner=${1%%/*} name=${1#*/}
  for c in "$mirrors/$owner+$name/repo" "$mirrors/$owner/$name.git" "$mirrors/$name.git" "$mirrors/$name"; do
    [ -d "$c" ] && { echo "$c"; return; }
  done
  echo "no mirror of $1 under $mirrors" >&2; return 1
}

declare -A laid_out   # owner/name@commit → the work tree already laid out for it
while IFS=$'\t' read -r name repo commit module mode entry args; do
  case "$name" in ''|'#'*) continue;; esac
  if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " =~ " $name " ]]; then continue; fi
  tree=$dest/$name
  # a second row for the same project and commit (another test class) shares the first row's tree
  if [ -n "${laid_out[$repo@$commit]:-}" ] && [ "${laid_out[$repo@$commit]}" != "$tree" ]; then
    rm -rf "$tree"; ln -s "${laid_out[$repo@$commit]}" "$tree"; echo "== $name: shares ${laid_out[$repo@$commit]}"
    if [ "$mode" = test ]; then (cd "$tree" && "$mvn" "${mvn_flags[@]}" dependency:resolve >/dev/null); fi
    continue
  fi
  git_dir=$(find_mirror "$repo")
  echo "== $name ($repo @ ${commit:0:12}) → $tree"
  if [ ! -f "$tree/.realcode-commit" ] || [ "$(cat "$tree/.realcode-commit")" != "$commit" ]; then
    rm -rf "$tree"; mkdir -p "$tree"
    if ! git --git-dir="$git_dir" archive "$commit" 2>/dev/null | tar -x -C "$tree"; then
      # a snapshot mirror may lack its largest blobs: lay out every file that is there, list the others
      rm -rf "$tree"; mkdir -p "$tree"
      git --git-dir="$git_dir" ls-tree -r "$commit" | while read -r _ type obj path; do
        [ "$type" = blob ] || continue
        if git --git-dir="$git_dir" cat-file -e "$obj" 2>/dev/null; then
          mkdir -p "$tree/$(dirname "$path")"; git --git-dir="$git_dir" cat-file blob "$obj" > "$tree/$path"
        else echo "$path" >> "$tree/.realcode-missing"; fi
      done
      echo "   files missing from the mirror (not laid out): $(wc -l < "$tree/.realcode-missing")"
    fi
    echo "$commit" > "$tree/.realcode-commit"
  fi
  # a project that JDK 17 cannot build as it is gets a small fix-up of its build files (fixups/<name>.sh,
  # run in the work tree; never its sources)
  [ -f "$here/fixups/$name.sh" ] && (cd "$tree" && bash "$here/fixups/$name.sh")

  pl=()
  [ "$module" != . ] && pl=(-pl "$module" -am)
  (cd "$tree" && "$mvn" "${mvn_flags[@]}" "${pl[@]}" install)
  # `bloatlens profile --test` asks Maven, offline, for the whole reactor: every module's dependencies
  if [ "$mode" = test ]; then (cd "$tree" && "$mvn" "${mvn_flags[@]}" dependency:resolve >/dev/null); fi
  (cd "$tree/$module" && "$mvn" "${mvn_flags[@]}" dependency:build-classpath \
     -Dmdep.includeScope=runtime -Dmdep.outputFile="$tree/.realcode-classpath" >/dev/null)
  echo "   built; class path in $tree/.realcode-classpath"
  laid_out[$repo@$commit]=$tree
done < "$here/projects.tsv"
