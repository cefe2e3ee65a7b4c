#!/usr/bin/env python3
#
# Copyright 2026 gr-spead authors
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""`.ci/demo` then `.ci/run` in one build directory: the second must test everything.

The demo configures the fuzz target off. A build directory keeps options in its cache,
so `.ci/run` used to reuse that and ran the suite without `fuzz_assembler_bounded_run`,
saying nothing. This runs both scripts against a scratch build directory with the real
CMake configure steps; only the compile steps, ctest and the demo's Python run are
replaced (by stubs on PATH) so the test takes seconds. It checks that the suite `.ci/run`
would run lists the fuzz test.

    test_demo_then_run.py SOURCE_DIR
"""

import os
import stat
import subprocess
import sys
import tempfile

CMAKE_STUB = """#!/bin/sh
# configure for real; skip compiling (this test is about configuration)
for a in "$@"; do
    if [ "$a" = "--build" ]; then echo "stub: build skipped"; exit 0; fi
done
exec /usr/bin/cmake "$@"
"""

CTEST_STUB = """#!/bin/sh
# record the tests the caller would run, run none
/usr/bin/ctest -N "$@" > "$CI_TEST_RECORD/ctest_in_$(basename "$PWD").txt"
echo "stub: ctest listed the tests in $PWD"
"""


def write_executable(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


def cached(build, name):
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        for line in f:
            if line.startswith(name + ":"):
                return line.strip().split("=", 1)[1]
    return None


def main():
    top = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="gr-spead-ci-") as tmp:
        stubs = os.path.join(tmp, "stubs")
        os.mkdir(stubs)
        write_executable(os.path.join(stubs, "cmake"), CMAKE_STUB)
        write_executable(os.path.join(stubs, "ctest"), CTEST_STUB)
        build = os.path.join(tmp, "build")
        env = dict(os.environ,
                   PATH=stubs + ":/usr/bin:/bin",
                   CI_TEST_RECORD=tmp,
                   GR_SPEAD_BUILD_DIR=build,
                   GR_SPEAD_TSAN_BUILD_DIR=os.path.join(tmp, "build-tsan"))

        # The demo's own run fails here (nothing was compiled); what matters is the
        # configuration it leaves behind.
        demo = subprocess.run([os.path.join(top, ".ci/demo")], env=env,
                              capture_output=True, text=True, timeout=300)
        fuzz_after_demo = cached(build, "GR_SPEAD_ENABLE_FUZZ")
        print(f".ci/demo exited {demo.returncode}; GR_SPEAD_ENABLE_FUZZ={fuzz_after_demo}")
        if fuzz_after_demo != "OFF":
            print(demo.stdout[-3000:] + demo.stderr[-3000:])
            print("FAIL: .ci/demo no longer configures the fuzz target off; "
                  "this test needs updating")
            return 1

        run = subprocess.run([os.path.join(top, ".ci/run")], env=env,
                             capture_output=True, text=True, timeout=300)
        print(f".ci/run exited {run.returncode}")
        listing_path = os.path.join(tmp, "ctest_in_build.txt")
        if not os.path.exists(listing_path):
            print(run.stdout[-3000:] + run.stderr[-3000:])
            print("FAIL: .ci/run did not run ctest in its build directory")
            return 1
        with open(listing_path) as f:
            listing = f.read()
        if "fuzz_assembler_bounded_run" not in listing:
            print(listing[-2000:])
            print("FAIL: after .ci/demo, .ci/run would run the suite without "
                  "fuzz_assembler_bounded_run (GR_SPEAD_ENABLE_FUZZ="
                  f"{cached(build, 'GR_SPEAD_ENABLE_FUZZ')} in its build cache): "
                  ".ci/build must pass every option at its default")
            return 1
        print("ok: .ci/run after .ci/demo lists fuzz_assembler_bounded_run")
        return 0


if __name__ == "__main__":
    sys.exit(main())
