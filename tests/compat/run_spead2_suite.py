#!/usr/bin/python3
# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs spead2's own Python tests, unedited, against gnuradio.spead (docs/testing.md).

    /usr/bin/python3 tests/compat/run_spead2_suite.py --spead2 <spead2 tree or git dir>
        [--tag v4.4.1] [--modules build/test_modules] [--placeholders] [-k EXPR]

The spead2 tests come from a source tree (its tests/ and pytest.ini) or from a git
repository, bare or not (`git archive <tag> tests pytest.ini`); nothing is fetched.
They run under pytest with alias/ first on sys.path, so `import spead2` loads
gnuradio.spead. Every test ends as one of:
    pass
    unsupported  it failed, and unsupported.txt lists it with the line of
                 docs/python.md that declares the feature unsupported
    skipped      pytest skipped it (spead2's own skip, e.g. numba absent)
    failure      anything else
The counts are printed; the exit status is 1 on any failure, 77 (ctest's skip) when no spead2 tree is given or found.

spead2's udp6_multicast cases send 1472-byte packets to ff14::1234. gr-spead's UDP
sender refuses packets larger than the route's MTU instead of letting the kernel
fragment them (as it does for IPv4: a fragmented datagram is lost whole for one lost
fragment, counted by no SPEAD counter, and an ibverbs receiver drops fragments), so
where the host's multicast route has a smaller MTU (a 1400-byte cloud interface) those
cases run in a network namespace of their own (unshare --net; root or CAP_SYS_ADMIN):
a veth pair with a 9000-byte MTU, an IPv6 address and the kernel's ff00::/8 route.
Without namespaces they run in place, and say why they fail.
--placeholders gives spead2.recv placeholder StreamStatConfig and Chunk classes when
gnuradio.spead lacks them, so that test_recv.py imports (issue 22's measurement).
"""

import argparse
import fnmatch
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import spead2_tree

HERE = os.path.dirname(os.path.abspath(__file__))
DOCS = os.path.join(HERE, "..", "..", "docs", "python.md")


def load_unsupported(path):
    """[(pattern, docs line number, reference)] from unsupported.txt; each entry's
    reference must be found on exactly one line of docs/python.md, a table row or
    bullet that declares something unsupported ("| no", "not supported")."""
    with open(DOCS, encoding="utf-8") as f:
        docs = f.read().splitlines()
    entries = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            pattern, _, reference = (part.strip() for part in line.partition("|"))
            found = [i for i, text in enumerate(docs, 1) if reference and reference in text]
            if len(found) != 1:
                raise SystemExit(f"{path}:{number}: reference {reference!r} is found on "
                                 f"{len(found)} lines of docs/python.md; it must name "
                                 "exactly one line that declares the feature unsupported")
            text = docs[found[0] - 1]  # and the rest of its bullet (wrapped lines)
            for more in docs[found[0]:]:
                if not more.startswith("  "):
                    break
                text += " " + more.strip()
            if "| no" not in text and "not supported" not in text:
                raise SystemExit(f"{path}:{number}: docs/python.md:{found[0]} does not "
                                 f"declare anything unsupported: {text!r}")
            entries.append((pattern, found[0], reference))
    return entries


def results(junit):
    """(test id, outcome, message) of every test case of a junit file."""
    for case in ET.parse(junit).getroot().iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name")
        if not classname:  # a file that failed to import: name is tests.test_x
            classname, name = name, "<import>"
        module, _, cls = classname.removeprefix("tests.").partition(".")
        test_id = "::".join(p for p in (module + ".py", cls, name) if p)
        outcome, message = "pass", ""
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is not None:
                outcome = "skipped" if tag == "skipped" else "fail"
                message = (node.get("message") or "").splitlines()[0:1]
                message = message[0][:160] if message else ""
                break
        yield test_id, outcome, message


UDP6_CASES = "udp6_multicast"
NAMESPACE_SETUP = (
    "ip link set lo up && "
    "ip link add spead6a mtu 9000 type veth peer name spead6b mtu 9000 && "
    "ip link set spead6b up && ip link set spead6a up && "
    "ip addr add fd00:5bea:d2::1/64 dev spead6a nodad")


def namespace_prefix():
    """The command prefix that runs a command in a fresh network namespace with a
    9000-byte-MTU multicast route (see the module text), or None where namespaces
    cannot be made."""
    prefix = ["unshare", "--net", "--", "/bin/sh", "-c", NAMESPACE_SETUP + ' && exec "$@"',
              "sh"]
    try:
        ok = subprocess.run(prefix + ["true"], capture_output=True).returncode == 0
    except OSError:
        ok = False
    return prefix if ok else None


def run_pytest(files, keyword, junit, tmp, env, prefix=()):
    """Runs pytest on files (with -k keyword) in tmp, results into junit."""
    command = [*prefix, sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
               "-rN", "--tb=no", "--continue-on-collection-errors", f"--junitxml={junit}",
               *files]
    if keyword:
        command += ["-k", keyword]
    subprocess.run(command, cwd=tmp, env=env, stdout=subprocess.DEVNULL)
    if not os.path.exists(junit):
        raise SystemExit("run_spead2_suite: pytest wrote no results; run it by hand "
                         f"in a copy of the tests to see why: {' '.join(command)}")
    return list(results(junit))


def both(keyword, extra):
    return f"({keyword}) and ({extra})" if keyword else extra


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    spead2_tree.add_arguments(parser)
    parser.add_argument("--placeholders", action="store_true",
                        help="placeholder recv.StreamStatConfig and recv.Chunk if missing")
    parser.add_argument("--unsupported", default=os.path.join(HERE, "unsupported.txt"))
    parser.add_argument("--list", action="store_true", help="print every test's outcome")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression")
    parser.add_argument("files", nargs="*", help="test files (default: every test_*.py)")
    args = parser.parse_args()

    source = spead2_tree.source(args, "run_spead2_suite", "spead2's Python tests")
    if source is None:
        return spead2_tree.SKIP
    entries = load_unsupported(args.unsupported)

    with tempfile.TemporaryDirectory(prefix="spead2-compat-") as tmp:
        where = spead2_tree.extract(source, args.tag, ["tests", "pytest.ini"], tmp)
        print(f"run_spead2_suite: spead2 tests from {where}")
        junit = os.path.join(tmp, "results.xml")
        env = spead2_tree.python_env(args.modules, os.path.join(HERE, "alias"))
        env.pop("SPEAD2_COMPAT_PLACEHOLDERS", None)
        if args.placeholders:
            env["SPEAD2_COMPAT_PLACEHOLDERS"] = "1"
        files = args.files or sorted(
            os.path.join("tests", f) for f in os.listdir(os.path.join(tmp, "tests"))
            if f.startswith("test_") and f.endswith(".py"))
        udp6_files = [f for f in files if "passthrough" in f]
        prefix = namespace_prefix() if udp6_files else None
        if udp6_files and prefix is None:
            print("run_spead2_suite: no network namespace (unshare --net needs root or "
                  "CAP_SYS_ADMIN): the udp6_multicast cases run on the host's route")
        if prefix is None:
            outcomes = run_pytest(files, args.keyword, junit, tmp, env)
        else:
            outcomes = run_pytest(files, both(args.keyword, f"not {UDP6_CASES}"),
                                  junit, tmp, env)
            outcomes += run_pytest(
                udp6_files, both(args.keyword, UDP6_CASES),
                os.path.join(tmp, "results-udp6.xml"), tmp, env, prefix)

    counts = {"pass": 0, "unsupported": 0, "skipped": 0, "failure": 0}
    used = set()
    failures = []
    for test_id, outcome, message in outcomes:
        if outcome == "fail":
            match = next((e for e in entries if fnmatch.fnmatchcase(test_id, e[0])), None)
            if match:
                used.add(match)
                outcome = "unsupported"
            else:
                outcome = "failure"
                failures.append(f"  {test_id}: {message}")
        counts[outcome] += 1
        if args.list:
            print(f"{outcome:12} {test_id}")
    stale = [e for e in entries if e not in used]
    if failures:
        print("failures (a claimed feature fails; fix it, or declare it unsupported in "
              "docs/python.md and list it in unsupported.txt):")
        print("\n".join(failures))
    if stale and not (args.files or args.keyword):
        print("warning: unsupported.txt entries no failing test matches (remove them):")
        print("\n".join(f"  {p}  (docs/python.md:{n})" for p, n, _ in stale))
    print("run_spead2_suite: " + ", ".join(f"{v} {k}" for k, v in counts.items()) +
          f" ({len(outcomes)} tests)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
