#!/usr/bin/env bash
# Regenerates the tables of HotSpot's flags the VM answers `HotSpotDiagnosticMXBean.getVMOption` from
# (profiler/src/vm/natives/hotspot_flags_{17,25}.tsv): what JDK 17's and JDK 25's HotSpot give
# java.management (`com.sun.management.internal.Flag.getAllFlags()`), run as the VM presents itself
# (-XX:+UseSerialGC). The machine-dependent (ergonomic) values in them are recomputed by the VM for the
# machine it runs on and its own heap; the rest are HotSpot's defaults.
# Usage: scripts/hotspot-flags/generate.sh [JDK17_HOME [JDK25_HOME]]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
jdk17=${1:-/usr/lib/jvm/java-17-openjdk-amd64}
jdk25=${2:-/usr/lib/jvm/temurin-25-jdk-amd64}
for pair in "17:$jdk17" "25:$jdk25"; do
  feature=${pair%%:*} home=${pair#*:}
  "$home/bin/java" -XX:+UseSerialGC --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED \
    "$root/scripts/hotspot-flags/DumpFlags.java" >"$root/profiler/src/vm/natives/hotspot_flags_$feature.tsv"
done
