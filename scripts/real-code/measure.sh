#!/usr/bin/env bash
# The real-code benchmark, by hand: measure a project's driver under plain `java`, as laid out and with a
# hand-made fix (the changed sources of a copy of the project, compiled into an overlay put first on the
# class path). Never in CI (the projects are not in this repository).
#
#   scripts/real-code/measure.sh PROJECTS NAME [FIXED_SOURCE.java...]
#
# DRIVER_SRC=path names a changed copy of the driver (a fix in the driving code).
# FIXED_SOURCE: a changed copy of one of the module's sources (outside the project's tree). Prints the
# median wall time, main-thread CPU time and bytes allocated per run (Measure.java: WARM warm-up runs,
# default 5, then REPS runs, default 30).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
projects=$1; name=$2; shift 2
IFS=$'\t' read -r _ _ _ module mode entry args < <(awk -F'\t' -v n="$name" '$1==n' "$here/projects.tsv")
[ "$mode" = driver ] || { echo "$name is not driven by a driver" >&2; exit 2; }
tree=$projects/$name
read -r -a argv <<< "${args//@\//$tree/}"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cp=$tree/$module/target/classes:$(cat "$tree/.realcode-classpath")
mkdir -p "$work/overlay" "$work/driver"
if [ $# -gt 0 ]; then javac -nowarn -d "$work/overlay" -cp "$cp" "$@"; fi
javac -d "$work/driver" -cp "$cp" "${DRIVER_SRC:-$here/drivers/$entry.java}" "$here/../measure/Measure.java"
java -cp "$work/overlay:$work/driver:$cp" Measure "${WARM:-5}" "${REPS:-30}" "$entry" "${argv[@]}"
