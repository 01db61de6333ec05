#!/usr/bin/env python3
"""What running the event-fed analyses on a thread of their own saves, in wall time and memory.

For each bench program (fixtures/bench, default sizes): `bloatlens run` (the plain VM), `bloatlens
profile --inline-analyses` (every analysis on the VM's thread) and `bloatlens profile` (the event-fed
ones on a thread of their own), all five analyses on; rounds alternate the three, and each figure is
the median of the rounds (wall time and peak memory of the whole process, from /usr/bin/time).
Prints a Markdown table and the medians of the ratios.

Usage: scripts/measure/analysis_threads.py [--bin target/release/bloatlens] [--rounds 3] [--only NAME]
Wall time on a shared machine is noisy: compare within one table, never across days.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
BENCH = os.path.join(ROOT, "fixtures", "bench")


def timed(cmd):
    """(seconds, peak KB) of one run; exits on failure."""
    with tempfile.NamedTemporaryFile("r") as t:
        p = subprocess.run(
            ["/usr/bin/time", "-f", "%e %M", "-o", t.name] + cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.decode()[-2000:]}")
        secs, kb = t.read().split()
        return float(secs), int(kb)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "bloatlens"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only")
    a = ap.parse_args()
    classes = tempfile.mkdtemp(prefix="bloatlens-threads-")
    sources = sorted(f for f in os.listdir(BENCH) if f.endswith(".java"))
    subprocess.run(["javac", "-g", "-d", classes] + [os.path.join(BENCH, f) for f in sources], check=True)
    programs = [f[:-5] for f in sources if not a.only or f[:-5] == a.only]
    out = os.path.join(classes, "report.json")
    kinds = {
        "plain": lambda p: [a.bin, "run", "--class-path", classes, p],
        "inline": lambda p: [a.bin, "profile", "--inline-analyses", "--format", "json", "--output", out]
        + ["--source-root", BENCH, "--class-path", classes, p],
        "own": lambda p: [a.bin, "profile", "--format", "json", "--output", out]
        + ["--source-root", BENCH, "--class-path", classes, p],
    }
    print("| program | plain run | profile, all inline | profile, event-fed on their own thread "
          "| inline / plain | own thread / plain | speed-up | peak plain | peak inline | peak own thread |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    ratios = {"inline": [], "own": [], "speedup": [], "mem_own": []}
    for p in programs:
        runs = {k: [] for k in kinds}
        for _ in range(a.rounds):
            for k, cmd in kinds.items():
                runs[k].append(timed(cmd(p)))
        t = {k: statistics.median(s for s, _ in v) for k, v in runs.items()}
        m = {k: statistics.median(kb for _, kb in v) / 1024 for k, v in runs.items()}
        ratios["inline"].append(t["inline"] / t["plain"])
        ratios["own"].append(t["own"] / t["plain"])
        ratios["speedup"].append(t["inline"] / t["own"])
        ratios["mem_own"].append(m["own"] / m["plain"])
        print(f"| {p} | {t['plain']:.2f} s | {t['inline']:.2f} s | {t['own']:.2f} s "
              f"| {t['inline'] / t['plain']:.2f}× | {t['own'] / t['plain']:.2f}× | {t['inline'] / t['own']:.2f}× "
              f"| {m['plain']:.0f} MB | {m['inline']:.0f} MB | {m['own']:.0f} MB |", flush=True)
    med = {k: statistics.median(v) for k, v in ratios.items()}
    print(f"\nMedian profile / plain run: {med['inline']:.1f}× inline, {med['own']:.1f}× with the event-fed "
          f"analyses on their own thread ({min(ratios['speedup']):.2f}–{max(ratios['speedup']):.2f}× sooner, "
          f"median {med['speedup']:.2f}×); peak memory on their own thread / plain run: median "
          f"{med['mem_own']:.2f}×, worst {max(ratios['mem_own']):.2f}×; {os.cpu_count()} cores.")


if __name__ == "__main__":
    main()
