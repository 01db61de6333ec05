#!/usr/bin/env python3
"""Where a profile's time goes, in instructions (callgrind: stable on a noisy machine, unlike wall time).

For each workload: `bloatlens run` (the plain VM), `bloatlens profile` with each analysis alone, and with
all of them (all on the VM's thread: `--inline-analyses`); each under `valgrind --tool=callgrind`. Prints, per workload, the instructions of each run
as a ratio to the plain run, and the all-analyses run's instructions split by what executed them
(self cost, inlined code counted where its source is): the interpreter, the shared value-flow dispatch,
each analysis, the allocator.

Usage: scripts/measure/where_time_goes.py [--bin target/release/bloatlens] [--only NAME] [--out DIR]
Needs valgrind (callgrind_annotate) and the release build. Workloads run at reduced sizes (callgrind
runs programs about 50x slower).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
ANALYSES = ["copy", "refprop", "costben", "lifetime", "bottleneck"]
# A tracker type in a function's name says which analysis its (inlined) code belongs to.
TRACKERS = {
    "CopyTracker": "copy",
    "RefPropTracker": "refprop",
    "CostBenefitTracker": "costben",
    "LifetimeTracker": "lifetime",
    "BottleneckTracker": "bottleneck",
}
# Source files of one analysis (helpers shared by several are named by the function's tracker).
FILES = {
    "analysis/copy.rs": "copy",
    "analysis/refprop.rs": "refprop",
    "analysis/costben.rs": "costben",
    "analysis/lifetime.rs": "lifetime",
    "analysis/bottleneck.rs": "bottleneck",
    "analysis/calltree.rs": "bottleneck",
}

# The bench programs (fixtures/bench) with their arguments: a tenth of the bench's sizes.
BENCH = [
    ("ArithLoop", ["2000"]),
    ("Collections", ["20000"]),
    ("Dispatch", ["500000"]),
    ("FibRecursive", ["27"]),
    ("NBody", ["30000"]),
    ("ObjectAlloc", ["60"]),
    ("Sieve", ["6"]),
    ("Strings", ["2000"]),
]


def component(file, function):
    """Which part of Bloatlens a line of self cost belongs to."""
    for path, analysis in FILES.items():
        if file.endswith(path):
            return analysis
    for tracker, analysis in TRACKERS.items():
        if tracker in function.split(" as ")[0] or (file.find("/analysis/") >= 0 and tracker in function):
            return analysis
    if "/analysis/" in file:
        return "analysis helpers"
    if file.endswith("vm/flow.rs") or file.endswith("vm/tracker.rs") or "as bloatlens_profiler::vm::tracker::Tracker>" in function:
        return "value-flow dispatch"
    if "malloc" in file or "malloc" in function or "_int_free" in function or "cfree" in function:
        return "allocator"
    if "/vm/" in file or "/classfile/" in file or "Vm<T>" in function or "bloatlens_profiler::vm" in function:
        return "interpreter"
    return "other"


def callgrind(cmd, out):
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + cmd,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    text = subprocess.run(
        ["callgrind_annotate", "--threshold=100", "--auto=no", out], check=True, capture_output=True, text=True
    ).stdout
    total = None
    parts = defaultdict(int)
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(\([^)]*\))?\s*PROGRAM TOTALS", line)
        if m:
            total = int(m.group(1).replace(",", ""))
            continue
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(\S[^:]*):(.*?)(\s\[[^\]]*\])?$", line)
        if m:
            parts[component(m.group(2), m.group(3))] += int(m.group(1).replace(",", ""))
    return total, parts


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=os.path.join(ROOT, "target/release/bloatlens"))
    p.add_argument("--only")
    p.add_argument("--out", default=None)
    a = p.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="where-time-goes-")
    classes = os.path.join(out, "bench-classes")
    os.makedirs(classes, exist_ok=True)
    bench_dir = os.path.join(ROOT, "fixtures/bench")
    subprocess.run(
        ["javac", "-d", classes] + [os.path.join(bench_dir, f) for f in sorted(os.listdir(bench_dir)) if f.endswith(".java")],
        check=True,
    )
    # The programs' sources are named, so that their code is the user's (as in the editor).
    workloads = [(n, ["--source-root", bench_dir, "--class-path", classes, n] + args) for n, args in BENCH]
    demo = os.path.join(ROOT, "examples/orders")
    subprocess.run(["javac", "-g", "-d", classes, os.path.join(demo, "OrderReport.java")], check=True)
    workloads.append(("OrderReport (the demo)", ["--source-root", demo, "--class-path", classes, "OrderReport"]))
    if a.only:
        workloads = [w for w in workloads if a.only in w[0]]
    order = ["interpreter", "value-flow dispatch"] + ANALYSES + ["analysis helpers", "allocator", "other"]
    print("| workload | plain run, M instr | " + " | ".join(f"{x} alone" for x in ANALYSES) + " | all five |")
    print("|---|---:|" + "---:|" * (len(ANALYSES) + 1))
    splits = []
    for name, target in workloads:
        base, _ = callgrind([a.bin, "run", "--max-seconds", "100000"] + target, os.path.join(out, "plain.cg"))
        ratios = []
        for analysis in ANALYSES + ["all"]:
            total, parts = callgrind(
                [a.bin, "profile", "--inline-analyses", "--max-seconds", "100000", "--format", "json", "--output", os.path.join(out, "r.json")]
                + ["--analyses", analysis]
                + target,
                os.path.join(out, f"{analysis}.cg"),
            )
            ratios.append(total / base)
        splits.append((name, total, parts))
        print(f"| {name} | {base / 1e6:,.0f} | " + " | ".join(f"{r:.2f}×" for r in ratios) + " |", flush=True)
    print()
    print("Instructions of the run with all five analyses, by what executed them (self cost):")
    print()
    print("| workload | " + " | ".join(order) + " |")
    print("|---|" + "---:|" * len(order))
    for name, total, parts in splits:
        print(f"| {name} | " + " | ".join(f"{100 * parts.get(c, 0) / total:.0f}%" for c in order) + " |")


if __name__ == "__main__":
    sys.exit(main())
