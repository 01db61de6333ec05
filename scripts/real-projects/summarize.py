#!/usr/bin/env python3
"""The real-projects benchmark: Surefire's test outcomes against Bloatlens's (see drive.sh).

  summarize.py classes REPORTS_DIR [SAMPLE]   the test classes Surefire ran: `module<TAB>Class` lines
                                              (top-level classes; at most SAMPLE, spread evenly)
  summarize.py report DEST RESULTS [--workarounds]
                                              RESULTS/summary.tsv, summary.md, mismatches.tsv, causes.tsv
                                              (--workarounds: the runs were in DEST/.workarounds/<name>)

Matching. Surefire names a JUnit 5 test `method` (`method(Type)[n]` for a parameterized invocation), a
JUnit 4 test `method`; Bloatlens prints JUnit's display name (`method()`, `[n] args`, `method`). Tests
of one top-level class (nested classes included) are paired by method name first, then the
parameterized invocations left on both sides in the order they ran, then whatever is left by outcome.
A test is "equal" when both sides passed, both failed or both were skipped (an aborted test, a failed
assumption, is skipped for Surefire too); the messages of failures are not compared.
"""
import collections
import fnmatch
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

Test = collections.namedtuple("Test", "cls name status message suite", defaults=("",))


# ---------------------------------------------------------------- Surefire's side

def surefire_tests(reports_dir):
    """{module: [Test]} from every TEST-*.xml under reports_dir/<module>/ (or reports_dir itself)."""
    out = collections.defaultdict(list)
    for root, _, files in os.walk(reports_dir):
        module = os.path.relpath(root, reports_dir)
        for f in sorted(files):
            if not (f.startswith("TEST-") and f.endswith(".xml")):
                continue
            try:
                tree = ET.parse(os.path.join(root, f))
            except ET.ParseError:
                continue
            for case in tree.iter("testcase"):
                status, message = "passed", ""
                for child in case:
                    if child.tag in ("failure", "error"):
                        status = "failed"
                        message = (child.get("type") or "") + ": " + (child.get("message") or "")
                        break
                    if child.tag == "skipped":
                        status, message = "skipped", child.get("message") or ""
                # the class Surefire ran is the report's (a JUnit 3 suite's or a runner's cases may name others)
                suite = f[5:-4]
                cls = case.get("classname") or suite
                out[module].append(Test(cls, case.get("name") or "", status, message.strip(), suite))
    return out


def top(cls):
    return cls.split("$")[0]


def classes(reports_dir, sample):
    rows = sorted({(m, top(t.suite)) for m, ts in surefire_tests(reports_dir).items() for t in ts})
    if sample and len(rows) > sample:
        rows = [rows[i * len(rows) // sample] for i in range(sample)]
    for m, c in rows:
        print(f"{m}\t{c}")


# ---------------------------------------------------------------- Bloatlens's side

LINE = re.compile(r"^test ([^#\s]*)#(.*?) (passed|failed|aborted|skipped)(?:: (.*))?$")


def bloatlens_tests(base):
    """Tests from <base>.json (profile) or <base>.out (run), and the notes."""
    tests, notes = [], []
    if os.path.exists(base + ".json"):
        try:
            with open(base + ".json", encoding="utf-8") as f:
                report = json.load(f)
            for t in report.get("tests") or []:
                st = t.get("status")
                tests.append(Test(t.get("class", ""), t.get("name", ""), "skipped" if st == "aborted" else st,
                                  t.get("message") or ""))
            return tests, report.get("test_notes") or []
        except (ValueError, OSError):
            pass
    try:
        with open(base + ".out", encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return tests, notes
    started = False
    for line in lines:
        m = LINE.match(line)
        if m:
            started = True
            st = m.group(3)
            tests.append(Test(m.group(1), m.group(2), "skipped" if st == "aborted" else st, m.group(4) or ""))
        elif line.startswith("note: ") and started:
            notes.append(line[6:])
        elif started and tests and not notes:  # a message's further lines
            t = tests[-1]
            tests[-1] = t._replace(message=t.message + "\n" + line)
    return tests, notes


# ---------------------------------------------------------------- pairing

PARAM_S = re.compile(r"^(.*?)\((.*)\)\[(\d+)\]$")  # Surefire: method(Type)[n]
PARAM_B = re.compile(r"^\[(\d+)\]")                  # JUnit's display name of an invocation: [n] …


def key_s(name):
    return None if PARAM_S.match(name) else re.sub(r"\(.*\)$", "", name)


def key_b(name):
    return None if PARAM_B.match(name) else re.sub(r"\(.*\)$", "", name)


def pair(sure, blo):
    """[(surefire Test|None, bloatlens Test|None)] for one top-level class."""
    pairs = []
    left_s, left_b = list(sure), list(blo)
    by_key = collections.defaultdict(list)
    for t in left_b:
        k = key_b(t.name)
        if k is not None:
            by_key[(t.cls, k)].append(t)
    rest = []
    for s in left_s:
        k = key_s(s.name)
        cands = by_key.get((s.cls, k)) if k is not None else None
        if not cands and k is not None:
            cands = next((v for (c, kk), v in by_key.items() if kk == k and v), None)
        if cands:
            b = cands.pop(0)
            left_b.remove(b)
            pairs.append((s, b))
        else:
            rest.append(s)
    # parameterized invocations, in the order they ran
    ps = [s for s in rest if PARAM_S.match(s.name)]
    pb = [b for b in left_b if PARAM_B.match(b.name)]
    if ps and len(ps) == len(pb):
        for s, b in zip(ps, pb):
            pairs.append((s, b))
            rest.remove(s)
            left_b.remove(b)
    # the rest by outcome
    for s in list(rest):
        b = next((b for b in left_b if b.status == s.status), None)
        if b is not None:
            pairs.append((s, b))
            rest.remove(s)
            left_b.remove(b)
    for s, b in zip(list(rest), list(left_b)):
        pairs.append((s, b))
        rest.remove(s)
        left_b.remove(b)
    pairs += [(s, None) for s in rest] + [(None, b) for b in left_b]
    return pairs


# ---------------------------------------------------------------- causes

def strip_paths(text, tree):
    return text.replace(tree + "/", "").replace(tree, ".")


def test_source(tree, module, cls):
    """The text of a test class's source file, or ''."""
    rel = cls.replace(".", "/") + ".java"
    base = os.path.join(tree, module) if module != "." else tree
    for root in ("src/test/java", "src/test/java11", "src/test"):
        p = os.path.join(base, root, rel)
        if os.path.exists(p):
            return open(p, encoding="utf-8", errors="replace").read()
    return ""


def run_error(err, rc, tree, timeout, source=""):
    """The cause of a run that did not complete, from Bloatlens's stderr: (category, exact text)."""
    lines = [strip_paths(l, tree) for l in err.splitlines()]
    errors = [l for l in lines if l.startswith("bloatlens: error:")]
    last = errors[-1][len("bloatlens: error: "):] if errors else ""
    if "does not compile" in last:
        javac = [l for l in lines if re.search(r"\.java:\d+: error: ", l)]
        first = javac[0] if javac else last
        msg = re.sub(r"^.*?\.java:\d+: error: ", "", first)
        where = re.sub(r": error: .*$", "", first)
        excluded = [g for g, pat in compiler_excludes(tree) if fnmatch.fnmatch(where.split(":")[0], pat)]
        if "too many module declarations" in msg:
            cat = "compile: several module-info.java in one javac run"
        elif excluded:
            cat = f"compile: maven-compiler-plugin excludes/testExcludes not honoured ({excluded[0]})"
        elif "is not visible" in msg or any("does not read it" in l for l in lines):
            cat = "compile: tests compiled inside the module of src/main/java/module-info.java (no --patch-module)"
        elif "cannot find symbol" in msg:
            i = lines.index(first) if first in lines else -1
            sym = next((l.strip() for l in lines[i + 1:i + 5] if l.strip().startswith("symbol:")), "")
            name = sym.split()[-1] if sym else ""
            generated = [os.path.relpath(os.path.join(r, f), tree) for r, _, fs in os.walk(tree)
                         if "generated-sources" in r for f in fs if f == name + ".java"] if name else []
            if generated:
                cat = f"compile: generated sources not compiled ({generated[0].split('/generated-sources/')[0]}/generated-sources/…)"
            else:
                cat = f"compile: cannot find symbol {sym[len('symbol:'):].strip()}"
            msg = f"{msg}: {sym}"
        elif "does not exist" in msg:
            cat = "compile: " + msg
        else:
            cat = "compile: " + msg
        return cat, f"{where}: error: {msg} ({len(javac)} errors)"
    m = re.search(r"native method (\S+) is not supported", last)
    if m:
        if "Thread.dumpThreads" in m.group(1) and "assertTimeoutPreemptively" in source:
            return (f"unsupported native {m.group(1)} (an assertTimeoutPreemptively ran out of time: JUnit reads "
                    "the timed-out thread's stack)"), last
        return f"unsupported native {m.group(1)}", last
    if rc in (3, 124, 130, 137) or "budget exhausted" in last:
        return "timeout (the per-class time budget, TIMEOUT)", last or f"killed (status {rc})"
    mvn = [l for l in lines if l.startswith("[ERROR]") or l.startswith("[FATAL]")]
    if mvn or "Maven" in last:
        text = " ".join(mvn) if mvn else last
        m = re.search(r"Failed to execute goal ([\w.-]+):([\w.-]+):[\w.-]+:([\w-]+) \(([^)]*)\) on project [^:]+: (.*)", text)
        if m:
            reason = m.group(5)
            nf = re.search(r"the artifact (\S+) has not been downloaded", reason)
            if nf:
                why = f"needs {nf.group(1)}, not in ~/.m2 (offline)"
            elif re.search(r"Could not find resource|Unable to find|does not exist|No such file", reason):
                why = "reads a project file that is not in Bloatlens's copy of the poms"
            else:
                why = re.sub(r"\d+(\.\d+)*", "N", reason)[:80]
            return f"maven: {m.group(2)}:{m.group(3)} ({m.group(4)}) fails offline: {why}", mvn[0] if mvn else last
        m = re.search(r"Plugin [\w.-]+:([\w.-]+):([\w.-]+) or one of its dependencies could not be resolved", text)
        if m:
            return f"maven: plugin {m.group(1)} {m.group(2)} not in ~/.m2 (offline)", mvn[0]
        m = re.search(r"Child module (\S+) of \S+ does not exist", text)
        if m:
            return ("maven: a module named only in a <profile>'s <modules> (active here) is not in Bloatlens's copy "
                    "of the poms"), next(l for l in mvn if "Child module" in l)
        first = mvn[0] if mvn else last
        return "maven: " + re.sub(r"\d+(\.\d+)*", "N", first)[:120], first
    m = re.search(r"no test matches (\S+?)( \((.*?)\))?: name a test class", last)
    if m:
        if m.group(3):
            return f"JUnit discovery fails: {m.group(3)}", last
        return ("a class JUnit skips as a whole (@Disabled, a disabled condition) is `no test matches` "
                "(exit 2); Surefire reports its tests skipped"), last
    if "started a process" in last:
        return "process refused", last
    if "socket" in last:
        return "socket refused", last
    if last.startswith("deadlock"):
        return "deadlock", last[:300]
    if "panicked" in err:
        p = next(l for l in lines if "panicked" in l)
        return "bloatlens panic", p
    return "bloatlens error: " + re.sub(r"\d+", "N", last)[:100], last or f"status {rc}, no error line"


def compiler_excludes(tree):
    """The globs of maven-compiler-plugin's <excludes>/<testExcludes> in the project's poms, as fnmatch patterns."""
    globs = []
    for root, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if d not in ("target", "src", ".git", "node_modules")]
        if "pom.xml" not in files:
            continue
        text = open(os.path.join(root, "pom.xml"), encoding="utf-8", errors="replace").read()
        for m in re.finditer(r"<artifactId>maven-compiler-plugin</artifactId>(.*?)</plugin>", text, re.S):
            for g in re.findall(r"<(?:testExclude|exclude)>\s*([^<]+?)\s*</", m.group(1)):
                globs.append((g, "*" + g.replace("**/", "*").replace("**", "*")))
    return globs


EXC = re.compile(r"((?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Error|Exception|Throwable))")


def method_body(source, method):
    """The text of a test method, from its declaration to the next annotation at its level (roughly)."""
    m = re.search(rf"\b{re.escape(method)}\s*\(", source) if method else None
    if not m:
        return ""
    end = source.find("\n    @", m.end())
    return source[m.start():end if end > 0 else len(source)]


def test_cause(s, b, source=""):
    """Why one paired test differs: (category, exact text); `source` is the test class's source."""
    if b is None:
        return "not run by Bloatlens", ""
    if s is None:
        return "run only by Bloatlens", b.name
    msg = b.message or ""
    if s.status == "failed" and b.status != "failed":
        return "fails only under Surefire", s.message[:200]
    if b.status == "skipped" and s.status != "skipped":
        return "skipped only under Bloatlens", msg[:200]
    if s.status == "skipped":
        return "skipped only under Surefire", s.message[:200]
    text = msg.replace("\n", " ")[:400]
    low = msg.lower()
    if "mockito" in low and ("inline" in low or "instrument" in low or "byte buddy" in low or "bytebuddy" in low):
        return "Mockito inline mock maker / java.lang.instrument", text
    if "failed to load applicationcontext" in low or "applicationcontext failure threshold" in low:
        root = msg.split("Caused by:")[-1].strip().splitlines()[0] if "Caused by:" in msg else ""
        return "Spring Boot start-up (ApplicationContext)", (root or text)[:400]
    m = re.search(r"native method (\S+) is not supported", msg)
    if m:
        return f"unsupported native {m.group(1)}", text
    if "UnsatisfiedLinkError" in msg:
        return "UnsatisfiedLinkError", text
    if "timed out" in low or "timeout" in low:
        return "test timeout", text
    body = method_body(source, b.name.split("(")[0])
    if "AssertionError" in body and ("expected: java.lang.AssertionError" in msg or msg.strip() == ""
                                     or "Expecting code to raise a throwable" in msg):
        return ("Java `assert` statements off: Surefire runs the tests with -ea (enableAssertions, on by "
                "default)"), text
    if re.search(r"NoClassDefFoundError: \S*\$\$Lambda\$", msg):
        return ("serializable lambda: the stream names the lambda's hidden class (NoClassDefFoundError reading it "
                "back; HotSpot writes a SerializedLambda)"), text
    m = EXC.search(msg)
    if m and msg.lstrip().startswith(m.group(1)):
        return f"exception {m.group(1)}", text
    return "assertion differs", text


# ---------------------------------------------------------------- report

def read_tsv(path):
    with open(path, encoding="utf-8") as f:
        return [l.rstrip("\n").split("\t") for l in f if l.strip() and not l.startswith("#")]


def surefire_config(tree):
    """What the poms tell Surefire that Bloatlens does not read (a hint for the causes)."""
    found = []
    for root, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if d not in ("target", "src", ".git", "node_modules")]
        if "pom.xml" not in files:
            continue
        text = open(os.path.join(root, "pom.xml"), encoding="utf-8", errors="replace").read()
        for m in re.finditer(r"<artifactId>maven-surefire-plugin</artifactId>(.*?)</plugin>", text, re.S):
            block = m.group(1)
            for tag in ("argLine", "systemPropertyVariables", "environmentVariables", "includes", "excludes",
                        "workingDirectory", "forkCount", "reuseForks", "groups", "excludedGroups", "classpathDependencyExcludes",
                        "additionalClasspathElements", "useModulePath", "properties"):
                mm = re.search(rf"<{tag}>(.*?)</{tag}>", block, re.S)
                if mm:
                    v = re.sub(r"\s+", " ", mm.group(1)).strip()
                    found.append(f"{os.path.relpath(root, tree)}: {tag}={v[:160]}")
    return sorted(set(found))


def report(dest, results, workarounds=False):
    here = os.path.dirname(os.path.abspath(__file__))
    rows = [r for r in read_tsv(os.path.join(here, "projects.tsv")) if len(r) >= 7]
    summary, mismatches = [], []
    causes = collections.defaultdict(lambda: {"tests": 0, "classes": set(), "projects": set(), "example": "", "repro": ""})
    timeout = os.environ.get("TIMEOUT", "300")
    for name, ghrepo, commit, maven, modules, kinds, main in rows[:]:
        runs_path = os.path.join(results, name, "runs.tsv")
        if not os.path.exists(runs_path):
            continue
        tree = os.path.join(dest, ".workarounds" if workarounds else "", name).replace("/./", "/")
        sure = surefire_tests(os.path.join(dest, ".reports", name))
        runs = read_tsv(runs_path)
        n_classes = n_tests = n_equal = n_blo = 0
        wall = cpu = 0.0
        classes_ok = 0
        for module, cls, rc, w, c in runs:
            rc = int(rc)
            wall += float(w)
            cpu += float(c)
            n_classes += 1
            s_tests = [t for t in sure.get(module, []) if top(t.suite) == cls]
            base = os.path.join(results, name, module, cls)
            b_tests, _ = bloatlens_tests(base)
            n_blo += len(b_tests)
            try:
                err = open(base + ".err", encoding="utf-8", errors="replace").read()
            except OSError:
                err = ""
            pairs = pair(s_tests, b_tests)
            n_tests += len(s_tests)
            equal = sum(1 for s, b in pairs if s and b and s.status == b.status)
            n_equal += equal
            if equal == len(s_tests) and len(b_tests) == len(s_tests):
                classes_ok += 1
                continue
            # a run that did not complete: one cause for every test it left without Surefire's outcome
            source = test_source(tree, module, cls)
            whole = run_error(err, rc, tree, timeout, source) if (not b_tests or rc not in (0, 1)) else None
            # a container that failed (the engine's discovery, a @BeforeAll, a class JUnit could not load)
            container = next((b for b in b_tests if b.status == "failed" and (
                b.cls == "" or b.name.startswith("JUnit ") or b.name == b.cls.split(".")[-1].split("$")[-1])), None)
            if whole is None and container is not None:
                whole = test_cause(Test(cls, "", "passed", ""), container)
                if f"ClassNotFoundException: {cls}" in container.message:
                    whole = ("test class not compiled by Bloatlens (a test source root it does not read)",
                             container.message.replace("\n", " ")[:300])
            mvn = f" --mvn {dest}/.tools/apache-maven-3.9.11/bin/mvn" if maven == "3.9" else ""
            cmd_dir = os.path.join(tree, module) if module != "." else tree
            for s, b in pairs:
                if s and b and s.status == b.status:
                    continue
                cat, text = whole if whole and (b is None or b is container or container is None) \
                    else test_cause(s, b, source)
                sel = cls
                if not whole and b is not None and not PARAM_B.match(b.name) and "(" in b.name:
                    sel = f"{b.cls}#{b.name.split('(')[0]}"
                # The command the driver ran: `profile` when it wrote a report (PROFILE=1).
                verb = "profile" if os.path.exists(base + ".json") else "run"
                repro = f"cd {cmd_dir} && bloatlens {verb}{mvn} --test '{sel}' ."
                mismatches.append([name, module, cls, (s.name if s else ""), (s.status if s else "-"),
                                   (b.name if b else ""), (b.status if b else "-"), cat, text.replace("\t", " ")[:500], repro])
                c = causes[cat]
                c["tests"] += 1
                c["classes"].add(f"{name}:{cls}")
                c["projects"].add(name)
                if not c["example"]:
                    c["example"], c["repro"] = text, repro
        mvn_s = ""
        for f, mark in ((".rp-mvn-seconds", ""), (".rp-mvn-online-seconds", " (online)")):
            p = os.path.join(dest, ".state", name, f)
            if os.path.exists(p):
                mvn_s = open(p).read().strip() + mark
                break
        all_sure = sum(len(v) for v in sure.values())
        all_classes = len({(m, top(t.suite)) for m, v in sure.items() for t in v})
        summary.append(dict(project=name, kinds=kinds, commit=commit[:10], surefire_classes=all_classes,
                            surefire_tests=all_sure, classes=n_classes, tests=n_tests, bloatlens_tests=n_blo,
                            equal=n_equal, classes_equal=classes_ok, mvn_s=mvn_s,
                            bloatlens_wall_s=f"{wall:.0f}", bloatlens_cpu_s=f"{cpu:.0f}", main=main))

    cols = ["project", "kinds", "commit", "surefire_classes", "surefire_tests", "classes", "tests", "bloatlens_tests",
            "equal", "classes_equal", "mvn_s", "bloatlens_wall_s", "bloatlens_cpu_s", "main"]
    with open(os.path.join(results, "summary.tsv"), "w", encoding="utf-8") as f:
        f.write("\t".join(cols) + "\n")
        for r in summary:
            f.write("\t".join(str(r[c]) for c in cols) + "\n")
    with open(os.path.join(results, "mismatches.tsv"), "w", encoding="utf-8") as f:
        f.write("project\tmodule\tclass\tsurefire_test\tsurefire\tbloatlens_test\tbloatlens\tcause\ttext\trepro\n")
        for m in mismatches:
            f.write("\t".join(x.replace("\n", " ") for x in m) + "\n")
    ranked = sorted(causes.items(), key=lambda kv: (-kv[1]["tests"], -len(kv[1]["classes"])))
    with open(os.path.join(results, "causes.tsv"), "w", encoding="utf-8") as f:
        f.write("cause\ttests\tclasses\tprojects\texample\trepro\n")
        for cat, c in ranked:
            f.write(f"{cat}\t{c['tests']}\t{len(c['classes'])}\t{','.join(sorted(c['projects']))}\t"
                    f"{c['example'].replace(chr(10), ' ').replace(chr(9), ' ')[:500]}\t{c['repro']}\n")

    md = ["| project | kinds | test classes run (of Surefire's) | their tests under Surefire (of all) | tests (Bloatlens) | outcomes equal | classes all equal | `mvn test` s | Bloatlens wall s / CPU s |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    tot = collections.Counter()
    for r in summary:
        pct = f"{100 * r['equal'] / r['tests']:.0f}%" if r["tests"] else "-"
        md.append(f"| {r['project']} | {r['kinds']} | {r['classes']} ({r['surefire_classes']}) | {r['tests']} ({r['surefire_tests']}) | "
                  f"{r['bloatlens_tests']} | {r['equal']} ({pct}) | {r['classes_equal']} | {r['mvn_s']} | "
                  f"{r['bloatlens_wall_s']} / {r['bloatlens_cpu_s']} |")
        for k in ("classes", "surefire_classes", "tests", "surefire_tests", "bloatlens_tests", "equal", "classes_equal"):
            tot[k] += r[k]
        tot["wall"] += float(r["bloatlens_wall_s"])
        tot["cpu"] += float(r["bloatlens_cpu_s"])
        tot["mvn"] += float(r["mvn_s"].split()[0] if r["mvn_s"] else 0)
    if summary:
        pct = f"{100 * tot['equal'] / tot['tests']:.0f}%" if tot["tests"] else "-"
        md.append(f"| **all** | | {tot['classes']} ({tot['surefire_classes']}) | {tot['tests']} ({tot['surefire_tests']}) | {tot['bloatlens_tests']} | "
                  f"{tot['equal']} ({pct}) | {tot['classes_equal']} | {tot['mvn']:.0f} | {tot['wall']:.0f} / {tot['cpu']:.0f} |")
    md += ["", "| # | cause | tests | classes | projects | example |", "|---:|---|---:|---:|---|---|"]
    for i, (cat, c) in enumerate(ranked, 1):
        ex = c["example"].replace("\n", " ").replace("|", "\\|")[:200]
        md.append(f"| {i} | {cat} | {c['tests']} | {len(c['classes'])} | {', '.join(sorted(c['projects']))} | `{ex}` |")
    md += ["", "Surefire's configuration in the projects' poms (Bloatlens reads some of it, see docs/cli.md):", ""]
    for r in summary:
        for line in surefire_config(os.path.join(dest, r["project"])):
            md.append(f"- {r['project']}: `{line}`")
    with open(os.path.join(results, "summary.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "classes":
        classes(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 0)
    elif len(sys.argv) in (4, 5) and sys.argv[1] == "report":
        report(sys.argv[2], sys.argv[3], sys.argv[4:] == ["--workarounds"])
    else:
        sys.exit(__doc__)
