# Copyright 2026 gr-spead authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where the compat runners find spead2: a source tree or a git repository, and the
files of it they copy out (run_spead2_suite.py, run_spead2_examples.py)."""

import os
import shutil
import subprocess

SKIP = 77  # ctest's skip status, when no spead2 is given or found


def add_arguments(parser):
    """The options both runners take to find spead2 and gr-spead's Python modules."""
    parser.add_argument("--spead2", help="spead2 source tree or git repository "
                        "(default: $SPEAD2_SOURCE_DIR)")
    parser.add_argument("--tag", default=os.environ.get("SPEAD2_TAG", "v4.4.1"),
                        help="tag or commit, for a git repository (default v4.4.1)")
    parser.add_argument("--modules", default=os.environ.get("GR_SPEAD_TEST_MODULES"),
                        help="directory holding gnuradio/spead (the build's test_modules)")


def source(args, runner, what):
    """The spead2 tree or git directory to use (absolute), or None after printing the
    skip line that names runner and what it would have run."""
    for candidate in (args.spead2, os.environ.get("SPEAD2_SOURCE_DIR")):
        if candidate and os.path.isdir(candidate):
            return os.path.abspath(candidate)
    print(f"{runner}: SKIP: no spead2 source tree or git repository given; set "
          "SPEAD2_SOURCE_DIR (environment, or -DSPEAD2_SOURCE_DIR=... at cmake time) to "
          f"run {what} against gnuradio.spead")
    return None


def extract(tree, tag, paths, dest):
    """Copies paths (directories or files of spead2, e.g. "tests") from a source tree,
    or archives them from a git repository (bare or not) at tag, into dest. Returns
    where they came from, for the runner's first line."""
    if all(os.path.exists(os.path.join(tree, p)) for p in paths):
        for p in paths:
            if os.path.isdir(os.path.join(tree, p)):
                shutil.copytree(os.path.join(tree, p), os.path.join(dest, p),
                                ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copy(os.path.join(tree, p), dest)
        return f"source tree {tree}"
    git = ["git", "--git-dir", tree]
    if subprocess.run(git + ["rev-parse", "--verify", "-q", tag + "^{commit}"],
                      capture_output=True).returncode != 0:
        if os.path.isdir(os.path.join(tree, ".git")):
            return extract(os.path.join(tree, ".git"), tag, paths, dest)
        raise SystemExit(f"{tree} is neither a spead2 source tree (with "
                         f"{', '.join(paths)}) nor a git repository with tag {tag}; "
                         "give --spead2 (or SPEAD2_SOURCE_DIR) and --tag")
    archive = subprocess.run(git + ["archive", tag, *paths],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "x", "-C", dest], input=archive, check=True)
    return f"git {tree} at {tag}"


def python_env(modules, alias=None):
    """The environment a spead2 script runs in: gr-spead's modules (and the spead2
    alias package, when given) first on PYTHONPATH; no GNU Radio preferences."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", GR_DONT_LOAD_PREFS="1")
    path = ([alias] if alias else []) + ([os.path.abspath(modules)] if modules else [])
    env["PYTHONPATH"] = os.pathsep.join(path + [env.get("PYTHONPATH", "")]).rstrip(
        os.pathsep)
    return env
