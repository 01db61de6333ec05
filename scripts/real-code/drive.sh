#!/usr/bin/env bash
# The real-code benchmark: profile each project of projects.tsv under Bloatlens and under plain `java`.
#
# Run by hand, never in CI: the projects are not in this repository (layout.sh puts them in PROJECTS,
# from mirrors and Maven Central); CI cannot fetch them.
#
#   scripts/real-code/drive.sh PROJECTS RESULTS [NAME...]
#
# For each project it writes, under RESULTS/<name>/ (outside this repository):
#   report.json      bloatlens profile --format json (findings in the report's order, shown ones first)
#   report.txt       the text report's findings, rendered from report.json by summarize.py (--top 10)
#   program.txt      what the program printed under Bloatlens
#   java.txt         what it printed under plain `java` (same entry point, same arguments), and
#   compare.txt      whether the two agree, with the wall times of both.
# BLOATLENS (default: target/release/bloatlens of this checkout) names the CLI; MVN the Maven that runs the
# tests under java (as for layout.sh).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
projects=${1:?usage: drive.sh PROJECTS RESULTS [NAME...]}
results=${2:?usage: drive.sh PROJECTS RESULTS [NAME...]}
shift 2
only=("$@")
bloatlens=${BLOATLENS:-$repo/target/release/bloatlens}

while IFS=$'\t' read -r name ghrepo commit module mode entry args; do
  case "$name" in ''|'#'*) continue;; esac
  if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " =~ " $name " ]]; then continue; fi
  tree=$projects/$name
  out=$results/$name
  mkdir -p "$out"
  echo "== $name ($mode $entry $args)"
  # "@/x" in args is a path in the project's work tree
  read -r -a argv <<< "${args//@\//$tree/}"
  rm -f "$out/report.json" "$out/report.txt"
  if [ "$mode" = driver ]; then
    classes=$out/driver-classes
    rm -rf "$classes"; mkdir -p "$classes"
    cp=$tree/$module/target/classes:$(cat "$tree/.realcode-classpath")
    javac -g -d "$classes" -cp "$cp" "$here/drivers/$entry.java" || { echo "   driver does not compile"; continue; }
    start=$(date +%s%N)
    java -cp "$classes:$cp" "$entry" "${argv[@]}" > "$out/java.txt" 2>&1; java_rc=$?
    java_ms=$(( ($(date +%s%N) - start) / 1000000 ))
    start=$(date +%s%N)
    "$bloatlens" profile --format json --output "$out/report.json" --program-output "$out/program.txt" \
      --source-root "$tree/$module/src/main/java" --source-root "$here/drivers" \
      -cp "$classes:$cp" "$entry" "${argv[@]}" 2> "$out/bloatlens.stderr"; vm_rc=$?
    vm_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  else
    # the project's own JUnit tests: under java through Maven's Surefire (online the first time, for
    # Surefire's JUnit provider), under Bloatlens with --test (offline: the project's Maven repository)
    start=$(date +%s%N)
    (cd "$tree/$module" && "${MVN:-mvn}" -q -B -Dtest="$entry" -Dsurefire.failIfNoSpecifiedTests=false \
       -Djacoco.skip=true -Drat.skip=true -Dcheckstyle.skip=true -Denforcer.skip=true -Danimal.sniffer.skip=true \
       -Dspotbugs.skip=true -Dpmd.skip=true -Djapicmp.skip=true test) > "$out/java.txt" 2>&1; java_rc=$?
    java_ms=$(( ($(date +%s%N) - start) / 1000000 ))
    start=$(date +%s%N)
    (cd "$tree/$module" && "$bloatlens" profile --format json --output "$out/report.json" \
       --program-output "$out/program.txt" ${MVN:+--mvn "$MVN"} --test "$entry") 2> "$out/bloatlens.stderr"; vm_rc=$?
    vm_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  fi
  {
    echo "java: exit $java_rc, ${java_ms} ms wall"
    echo "bloatlens profile: exit $vm_rc, ${vm_ms} ms wall"
    if [ "$mode" = driver ]; then
      if diff -q "$out/java.txt" "$out/program.txt" > /dev/null; then echo "output: identical"
      else echo "output: DIFFERS"; echo; diff "$out/java.txt" "$out/program.txt" | head -20; fi
    fi
  } > "$out/compare.txt"
  cat "$out/compare.txt" | sed 's/^/   /'
  [ -f "$out/report.json" ] && python3 "$here/summarize.py" "$out/report.json" > "$out/report.txt"
done < "$here/projects.tsv"
