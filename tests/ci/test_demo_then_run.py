#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""`.ci/demo` then `.ci/run` in one build directory: the second must test everything.

The demo configures the fuzz target off. A build directory keeps options in its cache,
so `.ci/run` used to reuse that and ran the suite without `fuzz_assembler_bounded_run`,
saying nothing. `.ci/build` therefore passes every option of the project at its
default on every run. This test runs the real `.ci/demo` and `.ci/run`, in that order,
from a scratch copy of `.ci/` in which everything they start is a recorder: cmake,
ctest, the demo's Python script, and the scripts `.ci/run` goes on to
(`.ci/install-deps`, `.ci/sanitize`, `.ci/sanitize-address`, `.ci/debian`). Nothing is
configured or compiled, so it takes seconds. From the record it checks:

1. `.ci/demo` configures the build directory with GR_SPEAD_ENABLE_FUZZ=OFF (else this
   test needs updating);
2. `.ci/run` configures the same directory passing every option the project declares
   (each `option()` and each GR_SPEAD_* STRING or BOOL cache variable in its
   CMakeLists.txt files) at its declared default, so nothing the demo left in the
   cache survives; then builds it, runs ctest there without selecting tests, and runs
   the sanitizer and Debian scripts;
3. the build running this test, when its cache holds those same values (a
   `.ci/build` configuration), lists `fuzz_assembler_bounded_run` (`ctest -N`): the
   whole suite that `.ci/run` runs includes the fuzz test.

    test_demo_then_run.py SOURCE_DIR [BUILD_DIR]
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

RECORDER = """#!/usr/bin/python3
# records how it was called, does nothing else
import json, os, sys
with open(os.environ["CI_TEST_RECORD"], "a") as f:
    f.write(json.dumps({"tool": os.path.basename(sys.argv[0]), "args": sys.argv[1:],
                        "cwd": os.getcwd()}) + "\\n")
"""

# what .ci/run and .ci/demo start, besides each other and .ci/build
RECORDED_CI_SCRIPTS = ("install-deps", "sanitize", "sanitize-address", "debian")
# options whose value is not a test selection: where things are, not what runs
NOT_OPTIONS = {"GR_SPEAD_VECTORS_DIR"}

OPTION = re.compile(r'\boption\(\s*(\w+)\s+"(?:[^"\\]|\\.)*"\s+(ON|OFF)\s*\)', re.S)
CACHE_SETTING = re.compile(r'\bset\(\s*(GR_SPEAD_\w+)\s+("[^"]*"|\S+)\s+CACHE\s+(STRING|BOOL)\b')


def project_options(top):
    """{name: default} of every option the project's CMakeLists.txt files declare."""
    options = {}
    for root, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if not d.startswith((".", "build", "obj-"))]
        if "CMakeLists.txt" not in files:
            continue
        with open(os.path.join(root, "CMakeLists.txt")) as f:
            text = f.read()
        for name, default in OPTION.findall(text):
            options[name] = default
        for name, default, _ in CACHE_SETTING.findall(text):
            if name not in NOT_OPTIONS:
                options[name] = default.strip('"')
    return options


def definitions(args):
    """{name: value} of the -D arguments of a cmake command line."""
    out = {}
    for i, a in enumerate(args):
        if a == "-D" and i + 1 < len(args):
            a = "-D" + args[i + 1]
        if a.startswith("-D") and "=" in a:
            name, value = a[2:].split("=", 1)
            out[name.split(":", 1)[0]] = value
    return out


def configure_dir(call):
    args = call["args"]
    return args[args.index("-B") + 1] if "-B" in args else None


def make_scratch_ci(top, tmp):
    """A scratch tree with the real .ci/build, demo and run (and the file they source),
    and recorders for the rest (cmake and ctest on PATH). Returns (scratch top, stubs
    directory)."""
    scratch = os.path.join(tmp, "top")
    stubs = os.path.join(tmp, "stubs")
    for d in (os.path.join(scratch, ".ci"), os.path.join(scratch, "examples"), stubs):
        os.makedirs(d)
    recorder = os.path.join(tmp, "recorder")
    with open(recorder, "w") as f:
        f.write(RECORDER)
    os.chmod(recorder, 0o755)
    for script in ("build", "demo", "run", "failed-tests.sh"):
        shutil.copy2(os.path.join(top, ".ci", script), os.path.join(scratch, ".ci"))
    links = [os.path.join(scratch, ".ci", s) for s in RECORDED_CI_SCRIPTS]
    links += [os.path.join(scratch, "examples", "loopback_demo.py"),
              os.path.join(stubs, "cmake"), os.path.join(stubs, "ctest")]
    for link in links:
        os.symlink(recorder, link)
    return scratch, stubs


def run_script(scratch, name, env):
    """Runs .ci/<name>; returns the calls it made (recorded)."""
    record = env["CI_TEST_RECORD"]
    open(record, "w").close()
    done = subprocess.run([os.path.join(scratch, ".ci", name)], env=env,
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        print(done.stdout[-3000:] + done.stderr[-3000:])
        raise AssertionError(f".ci/{name} exited {done.returncode} with everything it "
                             "starts recorded (output above)")
    with open(record) as f:
        return [json.loads(line) for line in f]


def check_suite_listing(build, wanted):
    """Check 3: the running build, if configured as .ci/run configures, lists the fuzz
    test. Returns a failure message or None."""
    cache = os.path.join(build, "CMakeCache.txt")
    values = {}
    with open(cache) as f:
        for line in f:
            m = re.match(r"(\w+):\w+=(.*)$", line.rstrip("\n"))
            if m:
                values[m.group(1)] = m.group(2)
    differ = {k: values.get(k) for k, v in wanted.items() if values.get(k) != v}
    if differ:
        print(f"note: {build} is not configured as .ci/run configures ({differ}); "
              "the listing of its suite is not checked")
        return None
    listing = subprocess.run(["ctest", "-N"], cwd=build, capture_output=True, text=True,
                             timeout=60).stdout
    if "fuzz_assembler_bounded_run" not in listing:
        return (f"{build}, configured as .ci/run configures, does not list "
                "fuzz_assembler_bounded_run (ctest -N): the whole suite lacks it")
    count = re.search(r"Total Tests: (\d+)", listing)
    print(f"ok: {build} lists {count.group(1) if count else '?'} tests, "
          "fuzz_assembler_bounded_run among them")
    return None


def main():
    top = os.path.abspath(sys.argv[1])
    options = project_options(top)
    for needed in ("GR_SPEAD_ENABLE_FUZZ", "GR_SPEAD_ENABLE_TESTS", "GR_SPEAD_SANITIZE"):
        if needed not in options:
            print(f"FAIL: option {needed} not found in {top}'s CMakeLists.txt files "
                  f"(found {sorted(options)}): this test needs updating")
            return 1

    with tempfile.TemporaryDirectory(prefix="gr-spead-ci-") as tmp:
        scratch, stubs = make_scratch_ci(top, tmp)
        build = os.path.join(tmp, "build")
        os.mkdir(build)  # cmake -B would make it; .ci/run cds into it for ctest
        env = dict(os.environ, PATH=stubs + ":/usr/bin:/bin",
                   CI_TEST_RECORD=os.path.join(tmp, "record.jsonl"),
                   GR_SPEAD_BUILD_DIR=build)
        try:
            demo = run_script(scratch, "demo", env)
            run = run_script(scratch, "run", env)
        except AssertionError as error:
            print("FAIL:", error)
            return 1

    failures = []
    demo_configures = [c for c in demo if c["tool"] == "cmake" and configure_dir(c) == build]
    if not demo_configures:
        failures.append(f".ci/demo did not configure {build}: {demo}")
    elif definitions(demo_configures[-1]["args"]).get("GR_SPEAD_ENABLE_FUZZ") != "OFF":
        failures.append(".ci/demo no longer configures GR_SPEAD_ENABLE_FUZZ=OFF: this test "
                        "needs updating")

    run_configures = [c for c in run if c["tool"] == "cmake" and configure_dir(c) == build]
    if len(run_configures) != 1:
        failures.append(f".ci/run configured {build} {len(run_configures)} times, not once")
        passed = {}
    else:
        passed = definitions(run_configures[0]["args"])
    for name, default in sorted(options.items()):
        if run_configures and passed.get(name) != default:
            failures.append(
                f".ci/run configures {build} with "
                + (f"{name}={passed[name]}" if name in passed else f"no -D{name}")
                + f", not the default {name}={default}: after .ci/demo the cache would "
                "keep the demo's value; .ci/build must pass every option at its default")
    if not any(c["tool"] == "cmake" and "--build" in c["args"] and build in c["args"]
               for c in run):
        failures.append(f".ci/run did not build {build}")
    suites = [c for c in run if c["tool"] == "ctest" and c["cwd"] == build]
    selecting = [a for c in suites for a in c["args"]
                 if a in ("-L", "-LE", "-R", "-E", "-I", "-U") or a.startswith(
                     ("--label", "--tests-regex", "--exclude-regex", "-L", "-R", "-E"))]
    if not suites:
        failures.append(f".ci/run did not run ctest in {build}: {run}")
    elif selecting:
        failures.append(f".ci/run's ctest selects tests ({selecting}): not the whole suite")
    started = [c["tool"] for c in run]
    for script in ("sanitize", "sanitize-address", "debian"):
        if script not in started:
            failures.append(f".ci/run no longer runs .ci/{script}")

    if len(sys.argv) > 2:
        wanted = {name: passed.get(name, default) for name, default in options.items()}
        problem = check_suite_listing(os.path.abspath(sys.argv[2]), wanted)
        if problem:
            failures.append(problem)

    for failure in failures:
        print("FAIL:", failure)
    if failures:
        return 1
    print(f"ok: .ci/run after .ci/demo configures every option at its default "
          f"({', '.join(f'{k}={v}' for k, v in sorted(options.items()))}) and runs the "
          "whole suite")
    return 0


if __name__ == "__main__":
    sys.exit(main())
