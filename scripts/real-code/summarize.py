#!/usr/bin/env python3
"""Print a Bloatlens JSON report's findings as the text report orders them (shown first), for judging.

usage: summarize.py report.json [--top N] [--all]
"""
import json, sys

def loc(l):
    if not l:
        return "?"
    f = l.get("file") or l.get("class")
    return f"{f}:{l.get('line')} ({l.get('class','').split('.')[-1]}.{l.get('method')})"

def main():
    path = sys.argv[1]
    top = 10
    if "--top" in sys.argv:
        top = int(sys.argv[sys.argv.index("--top") + 1])
    show_all = "--all" in sys.argv
    r = json.load(open(path))
    run = r["run"]
    print(f"{run['main_class']}: {run['outcome']} (exit {run.get('exit_status')}), "
          f"{run.get('instructions')} instructions, {run.get('allocated_bytes')} bytes, {run.get('wall_ms')} ms")
    for t in r.get("tests") or []:
        if t.get("status") not in ("successful", "passed"):
            print(f"test {t.get('class')}#{t.get('name')} {t.get('status')}: {t.get('message')}")
    shown = [f for f in r["findings"] if not f.get("hidden")]
    hidden = [f for f in r["findings"] if f.get("hidden")]
    print(f"findings: {len(shown)} shown, {len(hidden)} hidden")
    for i, f in enumerate(shown[:top] if not show_all else shown, 1):
        print(f"\n{i}. [{f['kind']}] {loc(f['location'])} — {100*f['share']:.1f}% — {f['advice']}")
        print(f"   {f['message']}")
        ev = f.get("evidence") or {}
        print("   evidence: " + json.dumps(ev, ensure_ascii=False)[:600])
        for rel in (f.get("related") or [])[:8]:
            print(f"   - {rel.get('role')}: {loc(rel.get('location'))}")

main()
