#!/usr/bin/env bash
# The real-projects benchmark, step 2: run each test class Surefire ran under Bloatlens, one class at a
# time, and compare every test's outcome with Surefire's (summarize.py).
#
# Run by hand, never in CI (layout.sh first: it needs the projects, Surefire's reports and a warm ~/.m2).
#
#   scripts/real-projects/drive.sh DEST RESULTS [NAME...]
#
# DEST: layout.sh's directory. RESULTS: where the runs go (outside this repository):
#   RESULTS/<name>/<module>/<Class>.out|.err   what Bloatlens printed (stdout: the tests' own output,
#                                              then one `test Class#name outcome` line per test)
#   RESULTS/<name>/<module>/<Class>.json       with PROFILE=1, the report (`tests` holds the outcomes)
#   RESULTS/<name>/runs.tsv                    module, class, exit status, wall s, CPU s (user+sys)
# then summarize.py writes RESULTS/summary.tsv, RESULTS/summary.md and RESULTS/mismatches.tsv.
# Environment:
#   BLOATLENS  the CLI (default: target/release/bloatlens of this checkout)
#   SAMPLE     at most this many test classes per project, spread evenly over the sorted list (default: all)
#   TIMEOUT    seconds per class (Bloatlens's --max-seconds; default 300); the process is killed 60 s later
#   PROFILE=1  `bloatlens profile --test` (analyses on, JSON report) instead of `bloatlens run --test`
#   MAVEN39    the Maven 3.9 for rows that need it (default: DEST/.tools/apache-maven-3.9.11/bin/mvn)
#   RERUN=1    run classes again that already have results
#   WORKAROUNDS=1  run in a copy of the work tree (DEST/.workarounds/<name>) to which workarounds/<name>.sh
#              was applied: a small change that sidesteps a cause blocking the whole project (each script
#              names it), to see what fails behind it. Use another RESULTS directory.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
dest=${1:?usage: drive.sh DEST RESULTS [NAME...]}
results=${2:?usage: drive.sh DEST RESULTS [NAME...]}
shift 2
only=("$@")
dest=$(cd "$dest" && pwd)
mkdir -p "$results"; results=$(cd "$results" && pwd)
bloatlens=${BLOATLENS:-$repo/target/release/bloatlens}
timeout=${TIMEOUT:-300}
mode=run; [ "${PROFILE:-0}" = 1 ] && mode=profile
TIMEFORMAT='%R %U %S'

while IFS=$'\t' read -r name ghrepo commit maven modules kinds main; do
  case "$name" in ''|'#'*) continue;; esac
  if [ ${#only[@]} -gt 0 ] && [[ ! " ${only[*]} " =~ " $name " ]]; then continue; fi
  tree=$dest/$name
  if [ "${WORKAROUNDS:-0}" = 1 ]; then
    [ -f "$here/workarounds/$name.sh" ] || continue
    wa=$dest/.workarounds/$name
    if [ ! -f "$wa/.rp-workaround" ] || ! cmp -s "$wa/.rp-workaround" "$here/workarounds/$name.sh"; then
      rm -rf "$wa"; mkdir -p "$dest/.workarounds"; cp -a "$tree" "$wa"
      (cd "$wa" && bash "$here/workarounds/$name.sh") && cp "$here/workarounds/$name.sh" "$wa/.rp-workaround"
    fi
    tree=$wa
  fi
  mvn_flag=()
  [ "$maven" = 3.9 ] && mvn_flag=(--mvn "${MAVEN39:-$dest/.tools/apache-maven-3.9.11/bin/mvn}")
  out=$results/$name; mkdir -p "$out"
  runs=$out/runs.tsv
  [ "${RERUN:-0}" = 1 ] && rm -f "$runs"
  echo "== $name"
  python3 "$here/summarize.py" classes "$dest/.reports/$name" "${SAMPLE:-0}" | while IFS=$'\t' read -r module class; do
    if [ -f "$runs" ] && awk -F'\t' -v m="$module" -v c="$class" '$1==m && $2==c {f=1} END {exit !f}' "$runs"; then
      continue
    fi
    mkdir -p "$out/$module"
    base=$out/$module/$class
    args=(--max-seconds "$timeout" "${mvn_flag[@]}" --test "$class")
    [ "$mode" = profile ] && args=(--format json --output "$base.json" "${args[@]}")
    { time { (cd "$tree/$module" && exec nice timeout -s INT -k 30 $((timeout + 60)) "$bloatlens" "$mode" \
        "${args[@]}" .) > "$base.out" 2> "$base.err" < /dev/null; echo $? > "$base.rc"; }; } 2> "$base.time"
    read -r wall user sys < "$base.time"
    printf '%s\t%s\t%s\t%s\t%s\n' "$module" "$class" "$(cat "$base.rc")" "$wall" \
      "$(echo "$user + $sys" | bc)" >> "$runs"
  done
done < "$here/projects.tsv"
wa_flag=(); [ "${WORKAROUNDS:-0}" = 1 ] && wa_flag=(--workarounds)
python3 "$here/summarize.py" report "$dest" "$results" "${wa_flag[@]}"
